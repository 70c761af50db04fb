//! What the `pto-launch` tests share: running it, and reading its JSON envelope.
#![allow(dead_code)]

use std::process::Command;

/// Runs `pto-launch` with `args` to the end.
pub fn launch(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_pto-launch"))
        .args(args)
        .output()
        .expect("pto-launch runs")
}

/// Runs a bench of 10 tasks, once, writing its Chrome trace to `path`.
pub fn bench_traced(path: &str) -> std::process::Output {
    launch(&["bench", "--tasks", "10", "--repeat", "1", "--trace", path])
}

/// Runs `pto-launch` with `args`, which must succeed and print one JSON envelope; returns
/// its `results`. `what` names the run in a failure.
pub fn launch_json(what: &str, args: &[&str]) -> serde_json::Value {
    let out = launch(args);
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut v = envelope(what, args[0], &out.stdout);
    v["results"].take()
}

/// Checks that `stdout` is one JSON envelope of `command` (version, the binary's version,
/// command, config, results) and returns it.
pub fn envelope(what: &str, command: &str, stdout: &[u8]) -> serde_json::Value {
    let text = String::from_utf8_lossy(stdout);
    let v: serde_json::Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{what}: one JSON object, not {text:?}: {e}"));
    assert_eq!(v["version"], 1, "{what}: the envelope's version: {v}");
    assert_eq!(v["pto_launch"], env!("CARGO_PKG_VERSION"), "{what}: {v}");
    assert_eq!(v["command"], command, "{what}: {v}");
    assert!(v["config"].is_object(), "{what}: config: {v}");
    assert!(v["results"].is_object(), "{what}: results: {v}");
    v
}
