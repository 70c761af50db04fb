//! The orchestrator's submit alone, on one thread, with K tensor arguments per task: what
//! finding dependencies through the tensor map costs, without a scheduler running beside it.
//!
//! `cargo bench -p pto-host --bench submit_tensors` prints ns per submit (median of 11 runs of
//! 8 000 tasks, independent tiles as in `pto-launch bench --workload tensors`) at K = 0, 2, 8
//! (`-- K...` for others), and how much of that the loop spends building each task's
//! arguments (the same loop submitting nothing). `--once K` runs once, for callgrind.

use std::time::Instant;

use pto_host::bench::{BenchPlan, Workload, submit_workload};
use pto_runtime_core::{Config, RegionLayout, Runtime, TaskId};
use pto_sim::Region;

mod common;
use common::Loopback;

const TASKS: u64 = 8_000;

/// The machine and the plan of a run with `k` arguments per task.
fn setup(k: u16) -> (Config, BenchPlan) {
    let cfg = Config {
        rings: 1,
        task_window: 8_192,
        max_tensors: k.max(1),
        aic_cores: 1,
        aiv_cores: 2,
        schedulers: 1,
        ..Config::default()
    };
    let plan = BenchPlan {
        workload: Workload::Tensors,
        tasks: TASKS,
        repeats: 1,
        seed: 1,
        pending: 0,
        tensor_args: k,
        blocks: 1,
    };
    (cfg, plan)
}

fn run(k: u16) -> f64 {
    let (cfg, plan) = setup(k);
    let mut region = Region::new(RegionLayout::new(&cfg).unwrap().size()).unwrap();
    let rt = Runtime::init(region.bytes(), cfg).unwrap();
    // No scheduler runs: the cores are never rung.
    let p = Loopback::new(cfg.cores());
    let mut o = rt.orchestrator(&p).unwrap();
    let start = Instant::now();
    submit_workload(&cfg, &plan, 0, |spec| o.submit(spec)).unwrap();
    start.elapsed().as_nanos() as f64 / TASKS as f64
}

/// The same loop building the same arguments, submitting nothing: what of `run` is the
/// workload's own cost.
fn build_only(k: u16) -> f64 {
    let (cfg, plan) = setup(k);
    let start = Instant::now();
    submit_workload(&cfg, &plan, 0, |spec| {
        std::hint::black_box(spec);
        Ok(TaskId::from_raw(0))
    })
    .unwrap();
    start.elapsed().as_nanos() as f64 / TASKS as f64
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    // `--once K`: one run at K, for `valgrind --tool=callgrind` (scripts/instructions).
    if let Some(i) = args.iter().position(|a| a == "--once") {
        let k = args.get(i + 1).and_then(|a| a.parse().ok()).unwrap_or(2);
        println!("submit, K = {k}: {:.1} ns/task", run(k));
        return;
    }
    // `-- 2 8` measures only those K (cargo passes `--bench` too: skip what is not a number).
    let mut ks: Vec<u16> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    if ks.is_empty() {
        ks = vec![0, 2, 8];
    }
    for k in ks {
        let mut runs: Vec<f64> = (0..11).map(|_| run(k)).collect();
        runs.sort_by(f64::total_cmp);
        let mut built: Vec<f64> = (0..11).map(|_| build_only(k)).collect();
        built.sort_by(f64::total_cmp);
        println!(
            "submit, K = {k}: {:7.1} ns/task ({:.1} of them building the task's arguments)",
            runs[runs.len() / 2],
            built[built.len() / 2]
        );
    }
}
