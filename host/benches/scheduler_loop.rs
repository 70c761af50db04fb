//! The scheduler loop alone, on one thread, against a loopback platform whose cores finish a
//! task the moment it is dispatched: what the scheduler costs per task at each profiling
//! level, without simulator threads or OS scheduling in the figure.
//!
//! `cargo bench -p pto-host --bench scheduler_loop` prints ns per task (median of 15 runs)
//! for `off`, `counters` and `tasks`, and their ratios to `off`. Under
//! `valgrind --tool=callgrind` pass `--once LEVEL` to run one level once, or `--blocks B`
//! to run vector tasks of B SPMD blocks (16 000 blocks in all) once, profiling off.

use std::time::Instant;

use pto_runtime_core::{
    Config, KernelId, ProfileLevel, RegionLayout, Runtime, TaskSpec, WorkerClass,
};
use pto_sim::Region;

mod common;
use common::Loopback;

const TASKS: u64 = 16_000;

/// Submits `TASKS` independent tasks, then runs the scheduler to the end; ns per task.
fn run(level: ProfileLevel, record_latency: bool) -> f64 {
    run_blocks(level, record_latency, 1)
}

/// [`run`] of vector tasks of `blocks` SPMD blocks each (`blocks` > 1), `TASKS` blocks in
/// all; ns per block.
fn run_blocks(level: ProfileLevel, record_latency: bool, blocks: u16) -> f64 {
    let cfg = Config {
        rings: 1,
        task_window: 16_384,
        schedulers: 1,
        aic_cores: 24,
        aiv_cores: 48,
        profile: level,
        profile_capacity: TASKS as u32,
        record_latency,
        ..Config::default()
    };
    let mut region = Region::new(RegionLayout::new(&cfg).unwrap().size()).unwrap();
    let rt = Runtime::init(region.bytes(), cfg).unwrap();
    let p = Loopback::new(cfg.cores());
    let mut o = rt.orchestrator(&p).unwrap();
    let tasks = TASKS / blocks as u64;
    for i in 0..tasks {
        let class = if blocks > 1 {
            WorkerClass::Aiv
        } else if i % 3 == 0 {
            WorkerClass::Aic
        } else {
            WorkerClass::Aiv
        };
        o.submit(&TaskSpec::new(KernelId(0), class).blocks(blocks))
            .unwrap();
    }
    drop(o);
    let s = rt.scheduler(0, &p).unwrap();
    let start = Instant::now();
    s.run().unwrap();
    let ns = start.elapsed().as_nanos() as f64 / (tasks * blocks as u64) as f64;
    assert_eq!(rt.report().finished, tasks);
    ns
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let levels = [
        ("off", ProfileLevel::Off),
        ("counters", ProfileLevel::Counters),
        ("tasks", ProfileLevel::Tasks),
    ];
    if let Some(i) = args.iter().position(|a| a == "--blocks") {
        // `--blocks B`: TASKS / B vector tasks of B blocks each, profiling off.
        let blocks = args.get(i + 1).and_then(|b| b.parse().ok()).unwrap_or(8);
        println!(
            "{blocks} blocks per task: {:.1} ns/block",
            run_blocks(ProfileLevel::Off, true, blocks)
        );
        return;
    }
    if let Some(i) = args.iter().position(|a| a == "--once") {
        let name = args.get(i + 1).map(String::as_str).unwrap_or("off");
        let level = levels
            .iter()
            .find(|l| l.0 == name)
            .map_or(ProfileLevel::Off, |l| l.1);
        println!("{name}: {:.1} ns/task", run(level, true));
        return;
    }
    let mut runs: Vec<Vec<f64>> = vec![Vec::new(); levels.len()];
    for _ in 0..15 {
        for (k, (_, level)) in levels.iter().enumerate() {
            runs[k].push(run(*level, true));
        }
    }
    let medians: Vec<f64> = runs
        .iter_mut()
        .map(|r| {
            r.sort_by(f64::total_cmp);
            r[r.len() / 2]
        })
        .collect();
    for ((name, _), m) in levels.iter().zip(&medians) {
        println!(
            "scheduler loop, {name:>8}: {m:7.1} ns/task  ratio to off {:.3}",
            m / medians[0]
        );
    }
}
