//! Random DAGs on the simulator: every task runs exactly once, after all its predecessors,
//! and every slot is reclaimed, with a tiny window so reclaim and back-pressure never rest.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use proptest::prelude::*;
use pto_runtime_core::{Config, KernelId, TaskId, TaskSpec};
use pto_sim::{KernelTable, SimOptions, run};
use pto_tests::dag::{Node, machines, program, running_preds};

/// A lane's run: (task index, lane, start stamp, end stamp).
type Lane = (usize, u8, u64, u64);

fn run_program(nodes: &[Node], cfg: Config) -> (Vec<Lane>, pto_runtime_core::RunReport) {
    let clock = Arc::new(AtomicU64::new(0));
    let lanes = Arc::new(Mutex::new(Vec::new()));
    let (c, l) = (clock.clone(), lanes.clone());
    let kernels = KernelTable::new().with(KernelId(7), "log_lanes", move |ctx| {
        let start = c.fetch_add(1, Ordering::SeqCst);
        std::hint::spin_loop();
        let end = c.fetch_add(1, Ordering::SeqCst);
        l.lock()
            .unwrap()
            .push((ctx.args[0] as usize, ctx.lane, start, end));
        Ok(())
    });
    let out = run(cfg, kernels, SimOptions::default(), |o| {
        let mut ids: Vec<TaskId> = Vec::new();
        for (i, n) in nodes.iter().enumerate() {
            let deps: Vec<TaskId> = n.deps.iter().map(|&d| ids[d]).collect();
            let args = [i as u64];
            let id = o
                .submit(&TaskSpec::new(KernelId(7), n.class).args(&args).deps(&deps))
                .unwrap();
            ids.push(id);
        }
    })
    .unwrap();
    let lanes = std::mem::take(&mut *lanes.lock().unwrap());
    (lanes, out.report)
}

fn check(
    nodes: &[Node],
    lanes: &[Lane],
    report: &pto_runtime_core::RunReport,
) -> Result<(), TestCaseError> {
    prop_assert!(report.error.is_none(), "run failed: {:?}", report.error);
    prop_assert_eq!(report.finished, nodes.len() as u64);
    prop_assert_eq!(report.live_slots, 0, "every slot reclaimed");
    for (i, n) in nodes.iter().enumerate() {
        let mine: Vec<&Lane> = lanes.iter().filter(|l| l.0 == i).collect();
        let want = n.class.lanes() as usize;
        prop_assert_eq!(
            mine.len(),
            want,
            "task {} ran {} lanes, expected {}",
            i,
            mine.len(),
            want
        );
        let mut seen: Vec<u8> = mine.iter().map(|l| l.1).collect();
        seen.sort();
        prop_assert_eq!(seen, (0..want as u8).collect::<Vec<_>>(), "each lane once");
        let start = mine.iter().map(|l| l.2).min();
        for p in running_preds(nodes, i) {
            let p_end = lanes.iter().filter(|l| l.0 == p).map(|l| l.3).max();
            if let (Some(s), Some(e)) = (start, p_end) {
                prop_assert!(
                    e < s,
                    "task {} started at {} before predecessor {} ended at {}",
                    i,
                    s,
                    p,
                    e
                );
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn random_dags_run_each_task_once_after_its_predecessors(
        nodes in program(160),
        window_log in 1u32..4,
        schedulers in 1u8..4,
        aic in 1u16..3,
        aiv in 2u16..5,
    ) {
        // Each case in both completion modes: status polling and the completion ring.
        for cfg in machines(window_log, 1, schedulers, aic, aiv) {
            let completion = cfg.completion;
            let (lanes, report) = run_program(&nodes, cfg);
            check(&nodes, &lanes, &report)
                .map_err(|e| TestCaseError::fail(format!("{completion:?}: {e}")))?;
        }
    }
}
