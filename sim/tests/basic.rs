//! The simulator runs DAGs end to end on the real core.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use pto_runtime_core::{Config, KernelId, TaskId, TaskSpec, WorkerClass};
use pto_sim::{KernelTable, SimOptions, run};

#[test]
fn chain_runs_in_order_and_reclaims_every_slot() {
    let order = std::sync::Arc::new(Mutex::new(Vec::new()));
    let log = order.clone();
    let kernels = KernelTable::new().with(KernelId(0), "log", move |ctx| {
        log.lock().unwrap().push(ctx.args[0]);
        Ok(())
    });
    let out = run(Config::tiny(), kernels, SimOptions::default(), |o| {
        let mut prev: Option<TaskId> = None;
        for i in 0..1_000u64 {
            let deps: Vec<TaskId> = prev.into_iter().collect();
            let class = if i % 2 == 0 {
                WorkerClass::Aic
            } else {
                WorkerClass::Aiv
            };
            prev = Some(
                o.submit(&TaskSpec::new(KernelId(0), class).args(&[i]).deps(&deps))
                    .unwrap(),
            );
        }
    })
    .unwrap();
    assert_eq!(*order.lock().unwrap(), (0..1_000).collect::<Vec<_>>());
    assert_eq!(out.report.finished, 1_000);
    assert_eq!(
        out.report.live_slots, 0,
        "every slot is reclaimed at the end"
    );
}

#[test]
fn independent_mix_and_dummy_tasks_all_run_once() {
    let count = std::sync::Arc::new(AtomicU64::new(0));
    let c = count.clone();
    let kernels = KernelTable::new().with(KernelId(3), "count", move |_| {
        c.fetch_add(1, Ordering::Relaxed);
        Ok(())
    });
    let cfg = Config {
        schedulers: 2,
        aic_cores: 2,
        aiv_cores: 4,
        task_window: 8,
        ..Config::tiny()
    };
    let out = run(cfg, kernels, SimOptions::default(), |o| {
        for i in 0..300 {
            let class = WorkerClass::ALL[i % 4];
            o.submit(&TaskSpec::new(KernelId(3), class)).unwrap();
        }
    })
    .unwrap();
    // 75 AIC + 75 AIV + 75 MIX x 3 lanes; DUMMY runs no kernel.
    assert_eq!(count.load(Ordering::Relaxed), 75 + 75 + 225);
    assert_eq!(out.report.finished, 300);
    assert_eq!(out.report.live_slots, 0);
}
