//! The dependency graph export: what the orchestrator wired, and why.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use pto_runtime_core::{Config, DepReason, KernelId, TaskSpec, TensorArg, WorkerClass};
use pto_sim::{DepGraph, KernelError, KernelTable, SimOptions, run};

const HOLD: KernelId = KernelId(0);
const NOOP: KernelId = KernelId(1);

#[test]
fn the_graph_says_which_argument_or_named_dependency_made_each_task_wait() {
    // The first task holds its core until every task is submitted, so every producer is
    // live when its consumers come.
    let go = Arc::new(AtomicBool::new(false));
    let held = go.clone();
    let kernels = KernelTable::new()
        .with(HOLD, "hold", move |_| {
            let start = Instant::now();
            while !held.load(Ordering::Acquire) {
                if start.elapsed() > Duration::from_secs(10) {
                    return Err(KernelError::msg("never released"));
                }
                std::thread::yield_now();
            }
            Ok(())
        })
        .with(NOOP, "noop", |_| Ok(()));
    let cfg = Config {
        max_tensors: 4,
        task_window: 16,
        ..Config::tiny()
    };
    let out = run(cfg, kernels.clone(), SimOptions::default(), |o| {
        let mem = o.platform().memory();
        let (x, y) = (
            mem.alloc_buffer(256, 64).unwrap(),
            mem.alloc_buffer(256, 64).unwrap(),
        );
        let mut g = DepGraph::new();
        let spec = |k| TaskSpec::new(k, WorkerClass::Aiv);
        let a = g
            .submit(o, &spec(HOLD).tensors(&[TensorArg::whole_output(x, 4)]))
            .unwrap();
        let b = g
            .submit(o, &spec(NOOP).tensors(&[TensorArg::whole_input(x, 4)]))
            .unwrap();
        let c = g
            .submit(
                o,
                &spec(NOOP)
                    .tensors(&[TensorArg::whole_output(y, 4)])
                    .deps(&[a]),
            )
            .unwrap();
        let d = g
            .submit(
                o,
                &spec(NOOP).tensors(&[TensorArg::whole_input(y, 4), TensorArg::whole_inout(x, 4)]),
            )
            .unwrap();
        go.store(true, Ordering::Release);
        (g, [a, b, c, d])
    })
    .unwrap();
    let (g, [a, b, c, d]) = out.value;
    // Each task's dependencies, by producer (the map finds those of one argument in its
    // own order).
    let deps = |t| {
        let mut v = g
            .tasks()
            .iter()
            .find(|n| n.id == t)
            .unwrap()
            .deps
            .iter()
            .map(|d| (d.producer, d.reason, d.live))
            .collect::<Vec<_>>();
        v.sort_by_key(|d| d.0.seq());
        v
    };
    let tensor = |arg| DepReason::Tensor { arg };
    assert!(deps(a).is_empty());
    assert_eq!(deps(b), [(a, tensor(0), true)]);
    assert_eq!(deps(c), [(a, DepReason::Explicit, true)]);
    // d reads y (c wrote it) and writes x (a wrote it, b read it).
    assert_eq!(
        deps(d),
        [
            (a, tensor(1), true),
            (b, tensor(1), true),
            (c, tensor(0), true)
        ]
    );

    let json: serde_json::Value = serde_json::from_str(&g.to_json(&kernels)).unwrap();
    let tasks = json["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 4);
    assert_eq!(tasks[0]["name"], "hold");
    let last = &tasks[3];
    assert_eq!(last["seq"], d.seq().0);
    let mut producers: Vec<_> = last["deps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["seq"].as_u64().unwrap(),
                e["reason"].clone(),
                e["arg"].clone(),
            )
        })
        .collect();
    producers.sort_by_key(|p| p.0);
    assert_eq!(
        producers,
        [
            (a.seq().0, "tensor".into(), 1.into()),
            (b.seq().0, "tensor".into(), 1.into()),
            (c.seq().0, "tensor".into(), 0.into()),
        ]
    );
    assert_eq!(tasks[2]["deps"][0]["reason"], "explicit");

    let dot = g.to_dot(&kernels);
    assert!(dot.starts_with("digraph deps {"), "{dot}");
    assert_eq!(dot.matches(" -> ").count(), 5, "{dot}");
    assert!(
        dot.contains(&format!("\"{a}\" -> \"{c}\" [label=\"dep\"]")),
        "{dot}"
    );
    assert!(
        dot.contains(&format!("\"{c}\" -> \"{d}\" [label=\"tensor 0\"]")),
        "{dot}"
    );

    let path = std::env::temp_dir().join(format!("deps-{}.json", std::process::id()));
    g.write(&path, &kernels).unwrap();
    let written = std::fs::read_to_string(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(written, g.to_json(&kernels), "a .json path gets JSON");
}

#[test]
fn a_refused_submit_adds_nothing_to_the_graph() {
    let kernels = KernelTable::new().with(NOOP, "noop", |_| Ok(()));
    let out = run(Config::tiny(), kernels, SimOptions::default(), |o| {
        let mut g = DepGraph::new();
        let unknown = TaskSpec::new(KernelId(7), WorkerClass::Aiv);
        assert!(g.submit(o, &unknown).is_err());
        g.submit(o, &TaskSpec::new(NOOP, WorkerClass::Aiv)).unwrap();
        g
    })
    .unwrap();
    assert_eq!(out.value.tasks().len(), 1);
}
