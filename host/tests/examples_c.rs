//! `examples/c/` as the README tells a user to run it: its `make run` builds the C
//! orchestrations and kernels and runs each on the simulator with `pto-launch run`, checked
//! against its golden output; and the C snippets of the README and of `docs/` are those
//! files, line for line.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn readme() -> String {
    std::fs::read_to_string(root().join("README.md")).expect("README.md")
}

/// `README.md` and every page of `docs/`, each with its path from the root.
fn docs() -> Vec<(String, String)> {
    let mut pages: Vec<String> = std::fs::read_dir(root().join("docs"))
        .expect("docs/")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".md"))
        .map(|n| format!("docs/{n}"))
        .collect();
    pages.sort();
    pages.insert(0, "README.md".to_string());
    pages
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(root().join(&p)).expect(&p);
            (p, text)
        })
        .collect()
}

/// The fenced blocks of `lang` in `text`, each as its lines.
fn blocks(text: &str, lang: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut current: Option<Vec<String>> = None;
    for line in text.lines() {
        let t = line.trim();
        match &mut current {
            None if t == format!("```{lang}") => current = Some(Vec::new()),
            Some(_) if t == "```" => out.extend(current.take()),
            Some(b) => b.push(line.to_string()),
            None => {}
        }
    }
    out
}

#[test]
fn the_readmes_commands_build_and_run_the_c_examples_and_their_golden_checks_pass() {
    let commands = blocks(&readme(), "sh")
        .into_iter()
        .find(|b| b.iter().any(|l| l.contains("make -C examples/c")))
        .expect("the README shows how to run examples/c");
    let lines: Vec<&str> = commands
        .iter()
        .map(|l| l.split('#').next().unwrap().trim())
        .filter(|l| !l.is_empty())
        .collect();
    assert_eq!(
        lines,
        [
            "cargo build --release -p pto-host --bin pto-launch",
            "make -C examples/c run",
        ],
        "the commands this test runs are the README's"
    );
    // The README's `make` with this test's pto-launch and a build folder of its own.
    let build =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("examples-c-{}", std::process::id()));
    let out = Command::new("make")
        .args(["-C", "examples/c", "run"])
        .arg(format!("BUILD={}", build.display()))
        .arg(format!("PTO_LAUNCH={}", env!("CARGO_BIN_EXE_pto-launch")))
        .current_dir(root())
        .output()
        .expect("make runs");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    assert_eq!(
        text.matches("matches the golden output").count(),
        5,
        "{text}"
    );
    assert!(
        text.contains("simulator: finished 4 tasks"),
        "vector add: {text}"
    );
    assert!(
        text.contains("simulator: finished 9 tasks"),
        "pipeline: {text}"
    );
    assert!(
        text.contains("simulator: finished 10 tasks (2 skipped by their predicate)"),
        "experts: the two experts no token chose were skipped: {text}"
    );
    assert!(
        text.contains("simulator: finished 32 tasks"),
        "layers: one recorded graph of 8 tasks replayed for 4 layers: {text}"
    );
    std::fs::remove_dir_all(&build).unwrap();
}

#[test]
fn every_c_snippet_of_the_readme_and_the_docs_is_in_examples_c() {
    let mut files = Vec::new();
    let mut dirs = vec![root().join("examples/c")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() && p.file_name().is_some_and(|n| n != "build") {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "c" || x == "h") {
                files.push(std::fs::read_to_string(&p).unwrap());
            }
        }
    }
    let mut counts = Vec::new();
    for (page, text) in docs() {
        let snippets = blocks(&text, "c");
        counts.push((page.clone(), snippets.len()));
        for s in snippets {
            let found = files.iter().any(|f| {
                let lines: Vec<&str> = f.lines().collect();
                lines
                    .windows(s.len())
                    .any(|w| w.iter().zip(&s).all(|(a, b)| a == b))
            });
            assert!(
                found,
                "this C snippet of {page} is in no file of examples/c:\n{}",
                s.join("\n")
            );
        }
    }
    // The pages that show C: if a snippet moves, this list moves with it.
    for (page, at_least) in [("README.md", 2), ("docs/c-programs.md", 3)] {
        let n = counts.iter().find(|(p, _)| p == page).map_or(0, |c| c.1);
        assert!(
            n >= at_least,
            "{page} has {n} C snippets, expected at least {at_least}: {counts:?}"
        );
    }
}
