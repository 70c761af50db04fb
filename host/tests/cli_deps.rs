//! `pto-launch bench --deps FILE`: the dependency graph of the workload, as DOT or JSON.

mod cli_util;
use cli_util::{bench_traced, launch};

#[test]
fn bench_deps_writes_the_graph_the_runtime_wired() {
    let dir = std::env::temp_dir().join(format!("pto-deps-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (json, dot) = (dir.join("g.json"), dir.join("g.dot"));
    for path in [&json, &dot] {
        let out = launch(&[
            "bench",
            "--workload",
            "chain",
            "--tasks",
            "20",
            "--repeat",
            "1",
            "--deps",
            path.to_str().unwrap(),
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("20 tasks, 19 dependencies"), "{text}");
    }
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let tasks = v["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 20);
    for (i, t) in tasks.iter().enumerate().skip(1) {
        assert_eq!(t["deps"][0]["seq"], tasks[i - 1]["seq"], "a chain");
        assert_eq!(t["deps"][0]["reason"], "explicit");
    }
    let dot = std::fs::read_to_string(&dot).unwrap();
    assert_eq!(dot.matches(" -> ").count(), 19, "{dot}");
    std::fs::remove_dir_all(&dir).unwrap();

    let out = launch(&["bench", "--tasks", "4", "--deps", "/nonexistent/dir/g.dot"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot write the dependency graph"), "{err}");
}

#[test]
fn bench_traces_name_the_kernels() {
    let path = std::env::temp_dir().join(format!("pto-named-{}.json", std::process::id()));
    let out = bench_traced(path.to_str().unwrap());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(
        text.matches("\"name\":\"noop\"").count(),
        10,
        "a named slice per task"
    );
    assert!(!text.contains("\"name\":\"kernel 0\""));
}
