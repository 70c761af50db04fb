//! The Rust snippets of the README and of `docs/` compile: each one appears, line for line, in
//! a file that is built and run (an example, a doc-test in the simulator, or this file).

use std::path::{Path, PathBuf};

use pto_runtime_core::{Buffer, Config, KernelId, TaskSpec, TensorArg, Tile, WorkerClass};
use pto_sim::{KernelTable, SimOptions};
use pto_tests::snippets::{doc_files, fenced_blocks};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate sits in the workspace")
        .to_path_buf()
}

/// The trimmed, non-empty lines of a Rust source, doc-comment markers removed (so doc-tests
/// count).
fn source_lines(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| {
            let t = l.trim();
            let t = t
                .strip_prefix("///")
                .or_else(|| t.strip_prefix("//!"))
                .unwrap_or(t);
            t.trim().to_string()
        })
        .filter(|l| !l.is_empty())
        .collect()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn every_rust_snippet_of_the_readme_and_the_docs_is_compiled_somewhere() {
    let root = root();
    let mut files = Vec::new();
    for dir in ["examples", "sim/src", "tests/tests"] {
        rust_files(&root.join(dir), &mut files);
    }
    let sources: Vec<(PathBuf, Vec<String>)> = files
        .into_iter()
        .filter_map(|p| Some((p.clone(), source_lines(&std::fs::read_to_string(&p).ok()?))))
        .collect();
    let mut checked = Vec::new();
    for doc in doc_files(&root) {
        let text =
            std::fs::read_to_string(&doc).unwrap_or_else(|e| panic!("{}: {e}", doc.display()));
        let name = doc
            .strip_prefix(&root)
            .unwrap_or(&doc)
            .display()
            .to_string();
        let blocks = fenced_blocks(&text, "rust");
        for block in &blocks {
            let found = sources
                .iter()
                .any(|(_, lines)| lines.windows(block.len()).any(|w| w == block.as_slice()));
            assert!(
                found,
                "this snippet of {name} is in no compiled file (examples/, sim/src doc-tests, \
                 tests/tests):\n{}",
                block.join("\n")
            );
        }
        checked.push((name, blocks.len()));
    }
    // The pages that hold the guide's snippets: if one moves, this list moves with it, so no
    // snippet leaves the check unnoticed.
    for (page, at_least) in [
        ("README.md", 2),
        ("docs/writing-workloads.md", 5),
        ("docs/deferred-completion.md", 2),
        ("docs/blocks-lanes-and-reads.md", 4),
    ] {
        let n = checked
            .iter()
            .find(|(name, _)| name == page)
            .map_or(0, |c| c.1);
        assert!(
            n >= at_least,
            "{page} has {n} Rust snippets, expected at least {at_least}: {checked:?}"
        );
    }
}

/// The tensor-argument snippet of `docs/writing-workloads.md`, run: a task reads an f32 block
/// of a matrix and writes a contiguous buffer.
#[rustfmt::skip]
fn submit_with_tensors(
    o: &mut pto_sim::SimOrchestrator<'_, '_>,
    (buf, out): (Buffer, Buffer),
) -> Result<(), pto_runtime_core::SubmitError> {
    const K: KernelId = KernelId(0);
    let (row, cols, rows_in_tile, cols_in_tile) = (2, 8, 2, 4);
    let n = rows_in_tile * cols_in_tile;
let a = Tile::block(buf.at(row * cols * 4), 4, rows_in_tile, cols_in_tile, cols); // f32 block
o.submit(&TaskSpec::new(K, WorkerClass::Aiv).tensors(&[
    TensorArg::input(buf, a),
    TensorArg::output(out, Tile::contiguous(out.base, 4, n)),
]))?;
    Ok(())
}

#[test]
fn the_tensor_snippet_runs() {
    let kernels = KernelTable::new().with(KernelId(0), "noop", |_| Ok(()));
    let cfg = Config {
        max_tensors: 2,
        ..Config::tiny()
    };
    let out = pto_sim::run(cfg, kernels, SimOptions::default(), |o| {
        let mem = o.platform().memory();
        let buf = mem.alloc_buffer(8 * 8 * 4, 64).unwrap();
        let out = mem.alloc_buffer(8 * 4, 64).unwrap();
        submit_with_tensors(o, (buf, out))
    })
    .unwrap();
    assert_eq!(out.value, Ok(()));
    assert_eq!(out.report.finished, 1);
}
