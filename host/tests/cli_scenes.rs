//! `pto-launch bench --workload scene:NAME`: every scene runs, reports its overhead share and
//! writes a well-nested trace, from which `pto-launch trace` computes the same shares; bad
//! names and options are clear errors.

mod cli_util;
use cli_util::{launch, launch_json};

#[test]
fn every_scene_reports_its_tasks_makespan_and_overhead_shares_and_writes_a_nested_trace() {
    let dir = std::env::temp_dir().join(format!("pto-scene-traces-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let scenes = [
        ("batched-gemm", 320),
        ("paged-attention", 1056),
        ("paged-attention-per-head", 1056),
        ("decode-layer", 546),
        ("moe", 133),
    ];
    for (name, tasks) in scenes {
        for silicon in ["none", "a2a3"] {
            let what = format!("scene:{name} --silicon {silicon}");
            let workload = format!("scene:{name}");
            let path = dir.join(format!("{name}-{silicon}.json"));
            let r = launch_json(
                &what,
                &[
                    "bench",
                    "--workload",
                    &workload,
                    "--aic",
                    "4",
                    "--aiv",
                    "8",
                    "--repeat",
                    "1",
                    "--silicon",
                    silicon,
                    "--json",
                    "--trace",
                    path.to_str().unwrap(),
                ],
            );
            assert_eq!(r["workload"], workload, "{what}: {r}");
            // With the cost model kernels start at their modelled time, not the host's: the
            // trace laid out from those stamps must nest all the same.
            let trace: serde_json::Value =
                serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
            if let Err(e) = pto_host::profile::check_chrome_trace(&trace) {
                panic!("{what}: the trace: {e}");
            }
            assert_eq!(r["tasks"], tasks, "{what}: every task submitted: {r}");
            assert_eq!(r["profile"], "tasks", "{what}: {r}");
            let kept = &r["profile_summary"]["records"];
            assert_eq!(
                *kept, tasks,
                "{what}: every task finished with a record: {r}"
            );
            let o = &r["overhead"];
            assert!(
                o["makespan_ns"].as_f64().is_some_and(|m| m > 0.0),
                "{what}: {r}"
            );
            for share in ["aic", "aiv", "all_engines", "has_overhead"] {
                let v = o[share].as_f64().unwrap_or(-1.0);
                assert!((0.0..=1.0).contains(&v), "{what}: {share} = {v}");
            }
            let all = o["all_engines"].as_f64().unwrap();
            assert!(all <= o["aic"].as_f64().unwrap() + 1e-9, "{what}: {o}");
            assert!(all <= o["aiv"].as_f64().unwrap() + 1e-9, "{what}: {o}");
            assert!(
                o["head_ns"].as_f64().is_some_and(|h| h >= 0.0),
                "{what}: {o}"
            );
            let host = &r["host"];
            if silicon == "a2a3" {
                // The model's dispatch: at least 140 ns from doorbell to start.
                assert!(o["head_ns"].as_f64().unwrap() >= 140.0, "{what}: {o}");
                // How faithfully the host ran the modelled chip: every kernel start and
                // every FIN (no completion records when polling) counted once.
                let ran = tasks - if name == "moe" { 32 } else { 0 };
                assert_eq!(host["lateness"]["events"], 2 * ran, "{what}: {host}");
                // The orchestrator, the schedulers (one) and the core threads (at least one).
                assert!(host["threads"].as_u64().unwrap() >= 3, "{what}: {host}");
                let on_cpu = host["scheduler_on_cpu"].as_f64().unwrap();
                assert!(on_cpu > 0.0 && on_cpu <= 1.0, "{what}: {host}");
                assert!(host["distorted"].is_boolean(), "{what}: {host}");
                // The same DAG laid out by a scheduler that costs nothing: the model's
                // dispatch latency exactly, FINs seen 180 to 1 020 ns after their kernels.
                let ideal = &r["overhead_at_no_cost"];
                for share in ["aic", "aiv", "all_engines", "has_overhead"] {
                    let v = ideal[share].as_f64().unwrap_or(-1.0);
                    assert!((0.0..=1.0).contains(&v), "{what}: {share} = {v}");
                }
                let head = ideal["head_ns"].as_f64().unwrap();
                assert!((head - 140.0).abs() < 1.0, "{what}: {ideal}");
                let tail = ideal["tail_ns"].as_f64().unwrap();
                assert!((179.0..=1_021.0).contains(&tail), "{what}: {ideal}");
            } else {
                assert!(host.is_null(), "{what}: no model, no fidelity: {r}");
                assert!(r["overhead_at_no_cost"].is_null(), "{what}: {r}");
            }
            // `pto-launch trace` reads the same shares back from the trace: the records'
            // times there are whole ns, so they agree to the rounding of a few ns.
            let svg = dir.join(format!("{name}-{silicon}.svg"));
            let t = launch_json(
                &what,
                &[
                    "trace",
                    "--json",
                    path.to_str().unwrap(),
                    "--svg",
                    svg.to_str().unwrap(),
                ],
            );
            let back = &t["overhead"];
            for share in ["aic", "aiv", "all_engines", "has_overhead"] {
                let (want, got) = (o[share].as_f64().unwrap(), back[share].as_f64().unwrap());
                assert!(
                    (want - got).abs() < 1e-3,
                    "{what}: {share}: bench {want}, trace {got}: {back}"
                );
            }
            if silicon == "a2a3" {
                // And the same DAG at no cost, under the same (polled a2a3) latencies: laid
                // out from the same whole-ns times, the same.
                let (want, got) = (&r["overhead_at_no_cost"], &t["overhead_at_no_cost"]);
                for share in ["all_engines", "has_overhead"] {
                    let (w, g) = (want[share].as_f64().unwrap(), got[share].as_f64().unwrap());
                    assert!(
                        (w - g).abs() < 1e-9,
                        "{what}: at no cost: {share}: bench {w}, trace {g}"
                    );
                }
            }
            for ns in ["makespan_ns", "head_ns", "tail_ns"] {
                let (want, got) = (o[ns].as_f64().unwrap(), back[ns].as_f64().unwrap());
                assert!(
                    (want - got).abs() <= 2.0 + 1e-6 * want,
                    "{what}: {ns}: bench {want}, trace {got}: {back}"
                );
            }
            // A skipped task runs no kernel: the moe's 32 unchosen expert tiles.
            let skipped = if name == "moe" { 32 } else { 0 };
            assert_eq!(t["skipped"], skipped, "{what}: {t}");
            assert_eq!(
                t["slices"].as_u64(),
                r["tasks"].as_u64().map(|n| n - skipped),
                "{what}: {t}"
            );
            // Its critical path: the chain's time adds up to what was observed, and no chain
            // of kernels is longer than the run.
            let c = &t["critical_path"];
            let observed = c["observed_ns"].as_u64().unwrap();
            let blame: u64 = ["kernels", "orchestrator", "core", "scheduler", "front"]
                .iter()
                .map(|k| c["blame"][k].as_u64().unwrap())
                .sum();
            assert_eq!(blame, observed, "{what}: {c}");
            assert!(
                c["dependency_limited_ns"].as_u64().unwrap() <= observed,
                "{what}: {c}"
            );
            assert!(!c["chain"].as_array().unwrap().is_empty(), "{what}: {c}");
            // Its picture: well-formed, a lane per core that ran a slice.
            let text = std::fs::read_to_string(&svg).unwrap();
            let doc = roxmltree::Document::parse(&text)
                .unwrap_or_else(|e| panic!("{what}: the SVG: {e}"));
            let lanes = doc
                .descendants()
                .filter(|n| n.attribute("class") == Some("lane"))
                .count();
            assert_eq!(lanes, t["cores"].as_array().unwrap().len(), "{what}");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_bad_scene_name_lists_the_scenes_and_tasks_and_kernel_ns_are_refused() {
    let out = launch(&["bench", "--workload", "scene:nope"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    for name in [
        "scene:batched-gemm",
        "scene:paged-attention-per-head",
        "scene:decode-layer",
    ] {
        assert!(err.contains(name), "{err}");
    }
    let out = launch(&[
        "bench",
        "--workload",
        "scene:decode-layer",
        "--silicon",
        "a2a3",
        "--kernel-ns",
        "100",
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--kernel-ns does not apply to scenes"),
        "{err}"
    );
    let out = launch(&["bench", "--workload", "scene:decode-layer", "--tasks", "10"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--tasks does not apply to scenes"), "{err}");
    let out = launch(&["bench", "--workload", "scene:batched-gemm", "--repeat", "1"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("has-overhead") && text.contains("makespan"),
        "{text}"
    );
}
