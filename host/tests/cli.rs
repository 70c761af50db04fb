//! `pto-launch` as a user runs it.

use std::process::Command;

fn launch(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_pto-launch"))
        .args(args)
        .output()
        .expect("pto-launch runs")
}

/// Runs `pto-launch` with `args`, which must succeed and print one JSON envelope; returns
/// its `results`. `what` names the run in a failure.
fn launch_json(what: &str, args: &[&str]) -> serde_json::Value {
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
fn envelope(what: &str, command: &str, stdout: &[u8]) -> serde_json::Value {
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
        assert!(out.status.success(), "{args:?}");
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
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

/// What `pto-launch` must do with one value of a flag.
#[derive(Clone, Copy, Debug)]
enum Outcome {
    /// Exit 0.
    Runs,
    /// The parser's usage error (exit 2), naming the flag and its range.
    Refused,
    /// Exit 1 with an error containing this.
    Fails(&'static str),
    /// Not run here (too long for a test at this value; the parser's unit test covers it).
    Skip,
}

#[test]
fn every_numeric_flag_at_0_1_max_and_u64_max_is_a_clear_error_or_a_correct_run() {
    use Outcome::*;
    const MAX: &str = "18446744073709551615";
    // The largest values that would run for minutes are run with no cores, so the run is
    // refused right after the flags were taken (the value parsed, nothing wrapped).
    const NO_CORES: &[&str] = &["--aic", "0", "--aiv", "0"];
    let no_cores = Fails("at least one core");
    // (flag, its maximum, base arguments, outcome at 0, 1, maximum, u64::MAX)
    type Case = (
        &'static str,
        &'static str,
        &'static [&'static str],
        [Outcome; 4],
    );
    let allreduce: &[&str] = &["allreduce", "--elements", "20000", "--ranks", "2"];
    let bench: &[&str] = &["bench", "--tasks", "200", "--repeat", "1"];
    let cases: &[Case] = &[
        ("--ranks", "64", allreduce, [Refused, Runs, Runs, Refused]),
        (
            "--elements",
            "2147483648",
            allreduce,
            [Refused, Runs, Fails("cannot be mapped"), Refused],
        ),
        (
            "--timeout-s",
            "86400",
            allreduce,
            [Refused, Runs, Runs, Refused],
        ),
        (
            "--grace-ms",
            "600000",
            allreduce,
            [Runs, Runs, Runs, Refused],
        ),
        (
            "--kill-rank",
            "63",
            allreduce,
            [
                Fails("rank 0: was killed by signal 9"),
                Fails("rank 1: was killed by signal 9"),
                Fails("--kill-rank 63: the job has ranks 0 to 1"),
                Refused,
            ],
        ),
        (
            "--kill-after-ms",
            "86400000",
            allreduce,
            [Runs, Runs, Runs, Refused],
        ),
        (
            "--stop-rank",
            "63",
            allreduce,
            [
                Fails("rank 0: stopped responding"),
                Fails("rank 1: stopped responding"),
                Fails("--stop-rank 63: the job has ranks 0 to 1"),
                Refused,
            ],
        ),
        (
            "--stop-after-ms",
            "86400000",
            allreduce,
            [Runs, Runs, Runs, Refused],
        ),
        (
            "--tasks",
            "100000000",
            bench,
            [Refused, Runs, no_cores, Refused],
        ),
        ("--schedulers", "16", bench, [Refused, Runs, Runs, Refused]),
        ("--aic", "128", bench, [Runs, Runs, Fails("cores"), Refused]),
        ("--aiv", "128", bench, [Runs, Runs, Fails("cores"), Refused]),
        (
            "--task-window",
            "1048576",
            bench,
            [Refused, Refused, no_cores, Refused],
        ),
        (
            "--repeat",
            "1000",
            bench,
            [Refused, Runs, no_cores, Refused],
        ),
        (
            "--spin-before-park",
            "1000000000",
            bench,
            [Runs, Runs, no_cores, Refused],
        ),
        (
            "--seed",
            MAX,
            &[
                "bench",
                "--workload",
                "random",
                "--tasks",
                "200",
                "--repeat",
                "1",
            ],
            [Runs, Runs, Runs, Runs],
        ),
        (
            "--pending",
            "1048576",
            &[
                "bench",
                "--workload",
                "deferred",
                "--tasks",
                "200",
                "--repeat",
                "1",
            ],
            [Runs, Runs, no_cores, Refused],
        ),
        (
            "--ranks",
            "64",
            &["bench", "--workload", "barrier"],
            [Refused, Runs, Runs, Refused],
        ),
        (
            "--message-bytes",
            "67108864",
            &["bench", "--workload", "transport", "--repeat", "1"],
            [Refused, Refused, Skip, Refused],
        ),
        (
            "--args",
            "32",
            &[
                "bench",
                "--workload",
                "tensors",
                "--tasks",
                "200",
                "--repeat",
                "1",
            ],
            [Runs, Runs, Runs, Refused],
        ),
    ];
    for &(flag, max, base, outcomes) in cases {
        for (value, outcome) in ["0", "1", max, MAX].into_iter().zip(outcomes) {
            if matches!(outcome, Skip) {
                continue;
            }
            // The flag's value replaces the base's, if the base sets it.
            let mut args: Vec<&str> = Vec::new();
            let mut i = 0;
            while i < base.len() {
                if base[i] == flag {
                    i += 2;
                    continue;
                }
                args.push(base[i]);
                i += 1;
            }
            args.extend([flag, value]);
            if matches!(outcome, Fails(m) if m == "at least one core") {
                args.extend(NO_CORES);
            }
            let run_id = format!(
                "cli-{}-{value}-{}",
                flag.trim_matches('-'),
                std::process::id()
            );
            if args[0] == "allreduce" {
                args.extend(["--run-id", &run_id]);
            }
            let out = launch(&args);
            let err = String::from_utf8_lossy(&out.stderr).into_owned();
            let all = format!("{}{err}", String::from_utf8_lossy(&out.stdout));
            let what = format!("{args:?}");
            assert!(!all.contains("panicked"), "{what} panicked: {all}");
            match outcome {
                Runs => assert!(out.status.success(), "{what} runs: {all}"),
                Refused => {
                    assert_eq!(out.status.code(), Some(2), "{what}: a usage error: {all}");
                    assert!(
                        err.contains(flag)
                            && (err.contains("is not in") || err.contains("too large")),
                        "{what}: names the flag and its range: {err}"
                    );
                }
                Fails(m) => {
                    assert_eq!(out.status.code(), Some(1), "{what}: {all}");
                    assert!(all.contains(m), "{what}: says {m:?}: {all}");
                }
                Skip => {}
            }
            assert!(
                !std::path::Path::new(&format!("/dev/shm/pto-{run_id}")).exists(),
                "{what} left its object"
            );
        }
    }
}

/// What `pto-launch args` draws and prints on a pseudo-terminal: `script` gives it one and
/// copies what it wrote to our pipe.
fn on_a_terminal(args: &str) -> String {
    let cmd = format!("{} {args}", env!("CARGO_BIN_EXE_pto-launch"));
    let out = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .output()
        .expect("script (util-linux) runs");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The last thing drawn in `text` is a line clear (`ESC [2K`), after the bar's last
/// drawing (which ends in `marker`).
fn assert_cleared(text: &str, marker: &str) {
    let drawn = text.rfind(marker).expect("the bar was drawn");
    let cleared = text.rfind("\u{1b}[2K").expect("a line clear");
    assert!(drawn < cleared, "the bar is cleared at the end: {text:?}");
}

#[test]
fn on_a_terminal_a_long_allreduce_draws_rank_0_s_bar_and_clears_it_before_the_report() {
    let text = on_a_terminal("allreduce --ranks 2 --elements 2000000");
    let bar = text
        .find("rank 0: writing the input")
        .expect("the bar names the phase");
    assert!(
        text.contains("/2,000,000 elements"),
        "the bar counts elements: {text:?}"
    );
    let report = text.rfind("rank 0: passed").expect("the report");
    assert!(bar < report, "the bar comes first: {text:?}");
    assert_cleared(&text[..report], "elements (");
}

#[test]
fn on_a_terminal_a_long_bench_draws_a_bar_and_clears_it_before_the_figures() {
    let text = on_a_terminal("bench --workload random --tasks 50000 --repeat 1");
    let bar = text
        .find("bench: run 1 of 1")
        .expect("the bar names the run");
    let figures = text.rfind("workload random: ").expect("the figures");
    assert!(bar < figures, "the bar comes first: {text:?}");
    assert!(text.contains("tasks ("), "the bar counts tasks: {text:?}");
    assert_cleared(&text[..figures], "tasks (");
}
