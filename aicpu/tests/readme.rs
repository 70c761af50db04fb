//! The README's C snippets (the orchestration SO and the kernel of "What a user writes")
//! are compiled and run: each appears, line for line, in a file of `tests/c/` that
//! `build.rs` builds into the harness (where `harness.rs` runs them).

use std::path::Path;

/// The ```c blocks of `text`, each as its trimmed, non-empty lines.
fn c_blocks(text: &str) -> Vec<Vec<String>> {
    let mut blocks = Vec::new();
    let mut current: Option<Vec<String>> = None;
    for line in text.lines() {
        let t = line.trim();
        match &mut current {
            None if t == "```c" => current = Some(Vec::new()),
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

#[test]
fn every_c_snippet_of_the_readme_is_built_and_run() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(dir.join("../README.md")).expect("README.md");
    let sources: Vec<Vec<String>> = ["readme_orchestration.c", "readme_kernel.c"]
        .iter()
        .map(|f| {
            std::fs::read_to_string(dir.join("tests/c").join(f))
                .expect("the snippet's file")
                .lines()
                .map(|l| l.trim().to_string())
                .filter(|l| !l.is_empty())
                .collect()
        })
        .collect();
    let blocks = c_blocks(&readme);
    assert!(blocks.len() >= 2, "the README has its C snippets");
    for block in blocks {
        assert!(
            sources
                .iter()
                .any(|lines| lines.windows(block.len()).any(|w| w == block.as_slice())),
            "this README snippet is in no file of aicpu/tests/c/readme_*.c:\n{}",
            block.join("\n")
        );
    }
}
