//! The README's fenced code blocks, for the tests that check each snippet appears in a file
//! that is built and run. Dependency-free, so the `aicpu/` workspace's tests include it too
//! (`#[path]`).

/// The blocks of `text` fenced as `lang` (opened by three backticks and `lang`), each as its
/// trimmed, non-empty lines.
pub fn fenced_blocks(text: &str, lang: &str) -> Vec<Vec<String>> {
    let open = format!("```{lang}");
    let mut blocks = Vec::new();
    let mut current: Option<Vec<String>> = None;
    for line in text.lines() {
        let t = line.trim();
        match &mut current {
            None if t == open => current = Some(Vec::new()),
            Some(b) if t == "```" => {
                blocks.push(std::mem::take(b));
                current = None;
            }
            Some(b) if !t.is_empty() => b.push(t.to_string()),
            _ => {}
        }
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::fenced_blocks;

    #[test]
    fn only_blocks_of_the_language_are_taken_trimmed_and_without_blank_lines() {
        let text = "x\n```c\n  int a;\n\n  int b;\n```\n```rust\nlet c = 1;\n```\n";
        assert_eq!(fenced_blocks(text, "c"), vec![vec!["int a;", "int b;"]]);
        assert_eq!(fenced_blocks(text, "rust"), vec![vec!["let c = 1;"]]);
        assert!(fenced_blocks(text, "sh").is_empty());
    }
}
