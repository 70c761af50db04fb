//! Simulated cores sharing host threads (`CoreThreads::Shared`): every task of a DAG runs
//! exactly once, in dependency order, whatever the number of cores per thread, in both
//! completion modes.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use pto_runtime_core::{CompletionMode, Config, KernelId, TaskId, TaskSpec, WorkerClass};
use pto_sim::{CoreThreads, KernelTable, SimOptions, run};

/// `[i, dep_or_max]`: counts task `i`'s run, and checks its dependency ran before it.
const MARK: KernelId = KernelId(0);

/// Runs `n` tasks of every class on `cfg`, each depending on the task 7 before it, with
/// the cores on `threads` shared threads; returns how often each task ran.
fn dag(cfg: Config, threads: usize, n: u64) -> Vec<u64> {
    let runs: Arc<Vec<AtomicU64>> = Arc::new((0..n).map(|_| AtomicU64::new(0)).collect());
    let seen = runs.clone();
    let kernels = KernelTable::new().with(MARK, "mark", move |ctx| {
        let [i, dep] = ctx.args_array()?;
        if dep != u64::MAX && seen[dep as usize].load(Ordering::Acquire) == 0 {
            return Err(pto_sim::KernelError::new(9, "ran before its dependency"));
        }
        // A MIX task runs one lane per core: count it once.
        if ctx.lane == 0 {
            seen[i as usize].fetch_add(1, Ordering::Release);
        }
        Ok(())
    });
    let opts = SimOptions {
        core_threads: CoreThreads::Shared(threads),
        ..SimOptions::default()
    };
    let out = run(cfg, kernels, opts, |o| {
        let mut ids: Vec<TaskId> = Vec::new();
        for i in 0..n {
            let class = WorkerClass::ALL[(i % 3) as usize];
            let dep = i.checked_sub(7);
            let deps: Vec<TaskId> = dep.map(|d| ids[d as usize]).into_iter().collect();
            let args = [i, dep.unwrap_or(u64::MAX)];
            let spec = TaskSpec::new(MARK, class).args(&args).deps(&deps);
            ids.push(o.submit(&spec).unwrap());
        }
    })
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.report.finished, n);
    runs.iter().map(|r| r.load(Ordering::Relaxed)).collect()
}

#[test]
fn a_whole_chip_on_two_threads_runs_every_task_once_in_order() {
    for completion in [CompletionMode::Poll, CompletionMode::Ring] {
        let cfg = Config {
            completion,
            ..Config::default()
        };
        assert!(cfg.cores() > 64, "a whole chip's worth of cores");
        let runs = dag(cfg, 2, 3_000);
        assert!(runs.iter().all(|&r| r == 1), "{completion:?}: {runs:?}");
    }
}

#[test]
fn one_thread_can_run_every_core() {
    let cfg = Config {
        aic_cores: 2,
        aiv_cores: 4,
        schedulers: 2,
        ..Config::tiny()
    };
    let runs = dag(cfg, 1, 1_000);
    assert!(runs.iter().all(|&r| r == 1), "{runs:?}");
}

#[test]
fn more_threads_than_cores_is_one_thread_per_core() {
    let runs = dag(Config::tiny(), 64, 300);
    assert!(runs.iter().all(|&r| r == 1), "{runs:?}");
}
