//! The fenced code blocks of the README and of `docs/`, for the tests that check each snippet
//! appears in a file that is built and run. Dependency-free, so the `aicpu/` workspace's tests
//! can include it too (`#[path]`).

use std::path::{Path, PathBuf};

/// The Markdown files whose snippets and links are checked: `README.md` and every `*.md` of
/// `docs/` under the workspace `root`, in that order (docs by name).
pub fn doc_files(root: &Path) -> Vec<PathBuf> {
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "md"))
                .collect()
        })
        .unwrap_or_default();
    docs.sort();
    let mut files = vec![root.join("README.md")];
    files.extend(docs);
    files
}

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
    use super::{doc_files, fenced_blocks};

    #[test]
    fn only_blocks_of_the_language_are_taken_trimmed_and_without_blank_lines() {
        let text = "x\n```c\n  int a;\n\n  int b;\n```\n```rust\nlet c = 1;\n```\n";
        assert_eq!(fenced_blocks(text, "c"), vec![vec!["int a;", "int b;"]]);
        assert_eq!(fenced_blocks(text, "rust"), vec![vec!["let c = 1;"]]);
        assert!(fenced_blocks(text, "sh").is_empty());
    }

    #[test]
    fn the_doc_files_are_the_readme_then_the_docs() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let files = doc_files(&root);
        assert_eq!(files[0], root.join("README.md"));
        assert!(
            files.contains(&root.join("docs/writing-workloads.md")),
            "{files:?}"
        );
    }
}
