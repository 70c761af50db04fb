//! `pto-launch` as a user runs it: JSON envelopes, bench figures, traces, bad options.

mod cli_util;
use cli_util::{bench_traced, envelope, launch, launch_json};

#[test]
fn every_subcommand_s_json_is_one_envelope_with_its_config() {
    let cases: &[&[&str]] = &[
        &[
            "bench",
            "--workload",
            "chain",
            "--tasks",
            "300",
            "--repeat",
            "1",
            "--json",
        ],
        &["bench", "--workload", "barrier", "--ranks", "2", "--json"],
        &[
            "bench",
            "--workload",
            "bootstrap",
            "--ranks",
            "2",
            "--repeat",
            "1",
            "--json",
        ],
        &[
            "bench",
            "--workload",
            "transport",
            "--repeat",
            "1",
            "--message-bytes",
            "65536",
            "--json",
        ],
        &["allreduce", "--ranks", "2", "--elements", "500", "--json"],
    ];
    for args in cases {
        let what = format!("{args:?}");
        let out = launch(args);
        assert!(
            out.status.success(),
            "{what}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v = envelope(&what, args[0], &out.stdout);
        if args[0] == "bench" {
            assert_eq!(v["config"]["workload"], args[2], "{what}: {v}");
            assert_eq!(v["results"]["workload"], args[2], "{what}: {v}");
        } else {
            assert_eq!(v["config"]["elements"], 500, "{what}: {v}");
            assert_eq!(v["config"]["ranks"], 2, "{what}: {v}");
            let r = &v["results"];
            assert_eq!(
                (r["ranks"].as_u64(), r["passed"].as_bool()),
                (Some(2), Some(true))
            );
            for (i, e) in r["exits"].as_array().unwrap().iter().enumerate() {
                assert_eq!(
                    (e["rank"].as_u64(), e["end"].as_str()),
                    (Some(i as u64), Some("passed"))
                );
                assert_eq!(
                    e["checked"]["elements"], 500,
                    "each rank's own results: {e}"
                );
                assert!(e["checked"]["checked_ms"].as_f64().unwrap() > 0.0);
            }
        }
    }
}

#[test]
fn a_failed_job_s_json_names_the_killed_rank_and_the_culprit() {
    let run_id = format!("cli-json-kill-{}", std::process::id());
    let out = launch(&[
        "allreduce",
        "--ranks",
        "2",
        "--elements",
        "300000",
        "--run-id",
        &run_id,
        "--kill-rank",
        "1",
        "--kill-after-ms",
        "0",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let v = envelope("a killed rank", "allreduce", &out.stdout);
    let r = &v["results"];
    assert_eq!(r["passed"], false, "{v}");
    let killed = &r["exits"][1];
    assert_eq!(
        (killed["end"].as_str(), killed["signal"].as_i64()),
        (Some("killed"), Some(9)),
        "{v}"
    );
    assert_eq!(r["culprit"]["rank"], 1, "{v}");
    let err = String::from_utf8_lossy(&out.stderr);
    // Rank 0 fails too, naming rank 1: the error lists both, in words.
    assert!(err.contains("error: ranks 0 and 1 did not pass"), "{err}");
    assert!(err.contains("stopped because rank 1 died"), "{err}");
}

#[test]
fn nothing_of_the_progress_bar_reaches_a_pipe() {
    // Long enough for the bar to update many times were it drawn.
    for args in [
        &[
            "bench",
            "--workload",
            "random",
            "--tasks",
            "50000",
            "--repeat",
            "1",
        ][..],
        &["allreduce", "--ranks", "2", "--elements", "200000"][..],
    ] {
        let out = launch(args);
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(out.status.success(), "{args:?}: {stderr}");
        assert!(stderr.is_empty(), "{args:?}: nothing on stderr: {stderr:?}");
        for text in [&stdout, &stderr] {
            assert!(
                !text.contains('\r') && !text.contains('\u{1b}') && !text.contains("=>"),
                "{args:?}: no bar, no terminal codes: {text:?}"
            );
        }
    }
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
    let out = bench_traced("/nonexistent/dir/t.json");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot write the trace"));
    let out = launch(&["bench", "--workload", "tensors", "--args", "33"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--args") && err.contains("0..=32"), "{err}");
    let out = launch(&["bench", "--workload", "nonsense"]);
    assert_eq!(out.status.code(), Some(2), "clap's usage error");
    for bad in ["0", "129", "many"] {
        let out = launch(&["bench", "--core-threads", bad]);
        assert_eq!(out.status.code(), Some(2), "--core-threads {bad}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("`auto`, `per-core` or a thread count"),
            "{err}"
        );
    }
}

#[test]
fn every_core_thread_layout_with_and_without_the_silicon_model_runs_and_shows_in_the_config() {
    for threads in ["auto", "1", "per-core"] {
        for silicon in ["none", "a2a3"] {
            let what = format!("--core-threads {threads} --silicon {silicon}");
            let args = [
                "bench",
                "--workload",
                "random",
                "--tasks",
                "500",
                "--repeat",
                "1",
                "--core-threads",
                threads,
                "--silicon",
                silicon,
                "--json",
            ];
            let out = launch(&args);
            assert!(
                out.status.success(),
                "{what}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let v = envelope(&what, "bench", &out.stdout);
            assert_eq!(v["config"]["silicon"], silicon == "a2a3", "{what}: {v}");
            let n = &v["config"]["core_threads"];
            match threads {
                "per-core" => assert!(n.is_null(), "{what}: {v}"),
                "1" => assert_eq!(*n, 1, "{what}: {v}"),
                _ => assert!(n.as_u64().is_some_and(|n| n >= 1), "{what}: {v}"),
            }
        }
    }
}

#[test]
fn the_calibration_bench_reports_the_model_beside_what_it_measured() {
    let r = launch_json(
        "calibrate",
        &[
            "bench",
            "--workload",
            "calibrate",
            "--repeat",
            "1",
            "--json",
        ],
    );
    for field in [
        "status_read_ns",
        "dispatch_ns",
        "fin_ns",
        "hop_poll_ns",
        "hop_ring_ns",
    ] {
        assert!(r[field].as_f64().is_some_and(|v| v > 0.0), "{field}: {r}");
    }
    assert_eq!(r["model_status_read_ns"], 100.0, "{r}");
    let out = launch(&["bench", "--workload", "calibrate", "--repeat", "1"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("calibration of the a2a3 model") && text.contains("chain hop"),
        "{text}"
    );
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
    assert!(String::from_utf8_lossy(&out.stderr).contains("1..=64"));
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
