//! `pto-launch` as a user runs it.

use std::process::Command;

fn launch(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_pto-launch"))
        .args(args)
        .output()
        .expect("pto-launch runs")
}

/// Runs `pto-launch` with `args`, which must succeed and print one JSON object; `what` names
/// the run in a failure.
fn launch_json(what: &str, args: &[&str]) -> serde_json::Value {
    let out = launch(args);
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

#[test]
fn bench_json_has_the_documented_fields_for_every_workload() {
    for w in [
        "independent",
        "chain",
        "fanout",
        "random",
        "deferred",
        "tensors",
    ] {
        let v = launch_json(
            w,
            &[
                "bench",
                "--workload",
                w,
                "--tasks",
                "500",
                "--repeat",
                "1",
                "--json",
            ],
        );
        assert_eq!(v["workload"], w);
        assert!(v["tasks"].as_u64().unwrap() >= 500);
        assert!(v["ns_per_task"].as_f64().unwrap() > 0.0);
        assert!(v["tasks_per_s"].as_f64().unwrap() > 0.0);
        assert_eq!(
            v["pending"].is_u64(),
            w == "deferred",
            "pending only for deferred"
        );
        assert!(v["submit_ns_per_task"].as_f64().unwrap() > 0.0);
        // The tensors workload measures submit alone: no latency stamps.
        assert_eq!(
            v["p50_ready_to_complete_ns"].is_u64(),
            w != "tensors",
            "{w}: latency"
        );
    }
}

#[test]
fn the_deferred_bench_keeps_tasks_pending_and_reports_their_waits() {
    let v = launch_json(
        "bench",
        &[
            "bench",
            "--workload",
            "deferred",
            "--pending",
            "50",
            "--tasks",
            "400",
            "--repeat",
            "1",
            "--profile",
            "tasks",
            "--json",
        ],
    );
    assert_eq!(v["pending"], 50);
    let summary = &v["profile_summary"];
    assert_eq!(
        summary["deferred_waits"], 400,
        "every task waited: {summary}"
    );
    assert!(summary["deferred_p50_ns"].as_u64().unwrap() > 0);
    let out = launch(&["bench", "--workload", "deferred", "--pending", "99999999"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--pending"));
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
    let out = launch(&[
        "bench",
        "--tasks",
        "10",
        "--repeat",
        "1",
        "--trace",
        "/nonexistent/dir/t.json",
    ]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot write the trace"));
    let out = launch(&["bench", "--workload", "tensors", "--args", "33"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--args 33"));
    let out = launch(&["bench", "--workload", "nonsense"]);
    assert_eq!(out.status.code(), Some(2), "clap's usage error");
}

#[test]
fn profile_tasks_writes_a_trace_with_a_track_per_core_and_scheduler() {
    let dir = std::env::temp_dir().join(format!("pto-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("run.trace.json");
    let v = launch_json(
        "bench",
        &[
            "bench",
            "--workload",
            "random",
            "--tasks",
            "300",
            "--repeat",
            "1",
            "--json",
            "--trace",
            path.to_str().unwrap(),
        ],
    );
    assert_eq!(v["profile"], "tasks", "--trace implies --profile tasks");
    assert_eq!(v["profile_summary"]["records"], 300);
    assert_eq!(v["profile_summary"]["dropped_records"], 0);
    let trace: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let events = trace["traceEvents"].as_array().unwrap();
    let names: Vec<&str> = events
        .iter()
        .filter(|e| e["name"] == "thread_name")
        .filter_map(|e| e["args"]["name"].as_str())
        .collect();
    assert!(names.contains(&"scheduler 0"), "{names:?}");
    assert!(names.iter().any(|n| n.starts_with("core ")), "{names:?}");
    let spans = events.iter().filter(|e| e["ph"] == "b").count();
    assert!(spans >= 300, "a task span per task: {spans}");
    let kernels = events.iter().filter(|e| e["ph"] == "X").count();
    assert!(kernels > 0, "kernel slices on the core tracks");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn profile_counters_prints_phases_that_sum_to_the_loop() {
    let v = launch_json(
        "bench",
        &[
            "bench",
            "--tasks",
            "500",
            "--repeat",
            "1",
            "--json",
            "--profile",
            "counters",
        ],
    );
    let pct: f64 = v["profile_summary"]["phase_percent"][0]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_f64().unwrap())
        .sum();
    assert!((pct - 100.0).abs() < 1e-6, "phases sum to the loop: {pct}");
    assert_eq!(
        v["profile_summary"]["records"], 0,
        "counters keep no task records"
    );
}

#[test]
fn the_barrier_bench_reports_a_median_per_barrier() {
    let v = launch_json(
        "bench",
        &["bench", "--workload", "barrier", "--ranks", "3", "--json"],
    );
    assert_eq!(
        (v["workload"].as_str(), v["ranks"].as_u64()),
        (Some("barrier"), Some(3))
    );
    assert!(v["median_us"].as_f64().unwrap() > 0.0);
    let out = launch(&["bench", "--workload", "barrier", "--ranks", "0"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("1 to 64"));
}

#[test]
fn the_bootstrap_bench_reports_milliseconds() {
    let v = launch_json(
        "bench",
        &[
            "bench",
            "--workload",
            "bootstrap",
            "--ranks",
            "4",
            "--repeat",
            "2",
            "--json",
        ],
    );
    assert_eq!(v["workload"], "bootstrap");
    assert!(v["bootstrap_ms"].as_f64().unwrap() > 0.0);
}
