//! `pto-launch` as a user runs it.

use std::process::Command;

fn launch(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_pto-launch"))
        .args(args)
        .output()
        .expect("pto-launch runs")
}

#[test]
fn bench_json_has_the_documented_fields_for_every_workload() {
    for w in ["independent", "chain", "fanout", "random"] {
        let out = launch(&[
            "bench",
            "--workload",
            w,
            "--tasks",
            "500",
            "--repeat",
            "1",
            "--json",
        ]);
        assert!(
            out.status.success(),
            "{w}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
        assert_eq!(v["workload"], w);
        assert!(v["tasks"].as_u64().unwrap() >= 500);
        assert!(v["ns_per_task"].as_f64().unwrap() > 0.0);
        assert!(v["tasks_per_s"].as_f64().unwrap() > 0.0);
    }
}

#[test]
fn help_explains_each_subcommand() {
    let top = launch(&["--help"]);
    assert!(String::from_utf8_lossy(&top.stdout).contains("bench"));
    let bench = String::from_utf8_lossy(&launch(&["bench", "--help"]).stdout).into_owned();
    for flag in [
        "--workload",
        "--tasks",
        "--schedulers",
        "--aic",
        "--aiv",
        "--json",
    ] {
        assert!(bench.contains(flag), "bench --help mentions {flag}");
    }
}

#[test]
fn bad_options_are_errors_not_panics() {
    let out = launch(&["bench", "--task-window", "1000", "--tasks", "10"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("power of two"), "{err}");
    let out = launch(&["bench", "--aic", "0", "--aiv", "0"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("at least one core"));
    let out = launch(&["bench", "--workload", "nonsense"]);
    assert_eq!(out.status.code(), Some(2), "clap's usage error");
}
