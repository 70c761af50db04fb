//! `pto-launch bench --workload scene:NAME`: every scene runs and reports its overhead share;
//! bad names and options are clear errors.

mod cli_util;
use cli_util::{launch, launch_json};

#[test]
fn every_scene_reports_its_tasks_makespan_and_overhead_shares() {
    let scenes = [
        ("batched-gemm", 320),
        ("paged-attention", 1056),
        ("paged-attention-per-head", 1056),
        ("decode-layer", 546),
    ];
    for (name, tasks) in scenes {
        for silicon in ["none", "a2a3"] {
            let what = format!("scene:{name} --silicon {silicon}");
            let workload = format!("scene:{name}");
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
                ],
            );
            assert_eq!(r["workload"], workload, "{what}: {r}");
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
            if silicon == "a2a3" {
                // The model's dispatch: at least 140 ns from doorbell to start.
                assert!(o["head_ns"].as_f64().unwrap() >= 140.0, "{what}: {o}");
            }
        }
    }
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
