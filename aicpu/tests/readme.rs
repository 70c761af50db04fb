//! The README's C snippets (the orchestration SO and the kernel of "What a user writes")
//! are compiled and run: each appears, line for line, in a file of `tests/c/` that
//! `build.rs` builds into the harness (where `harness.rs` runs them).

use std::path::Path;

#[path = "../../tests/src/snippets.rs"]
mod snippets;
use snippets::fenced_blocks;

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
    let blocks = fenced_blocks(&readme, "c");
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
