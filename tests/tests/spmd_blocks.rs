//! Random DAGs mixing tasks of one block and of several on the simulator: every block of
//! every task runs exactly once, knowing its index and the count, every lane of it too, and
//! no task starts before every block of each predecessor ended.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use proptest::prelude::*;
use pto_runtime_core::{Config, KernelId, TaskId, TaskSpec, WorkerClass};
use pto_sim::{KernelTable, SimOptions, run};
use pto_tests::dag::{Node, machines, program, running_preds};

/// One execution: (task index, lane, block, blocks, start stamp, end stamp).
type Exec = (usize, u8, u16, u16, u64, u64);

/// The blocks task `i` asks for on `cfg`: from `seeds`, at most what its class allows.
fn blocks(cfg: &Config, class: WorkerClass, seed: u16) -> u16 {
    let max = match class {
        WorkerClass::Aic => cfg.aic_cores,
        WorkerClass::Aiv => cfg.aiv_cores,
        WorkerClass::Mix => cfg.mix_clusters(),
        WorkerClass::Dummy => 1,
    };
    1 + seed % max.max(1)
}

fn run_program(
    nodes: &[Node],
    seeds: &[u16],
    cfg: Config,
) -> (Vec<Exec>, pto_runtime_core::RunReport) {
    let clock = Arc::new(AtomicU64::new(0));
    let execs = Arc::new(Mutex::new(Vec::new()));
    let (c, e) = (clock.clone(), execs.clone());
    let kernels = KernelTable::new().with(KernelId(7), "log_blocks", move |ctx| {
        let start = c.fetch_add(1, Ordering::SeqCst);
        std::hint::spin_loop();
        let end = c.fetch_add(1, Ordering::SeqCst);
        e.lock().unwrap().push((
            ctx.args[0] as usize,
            ctx.lane,
            ctx.block,
            ctx.blocks,
            start,
            end,
        ));
        Ok(())
    });
    let out = run(cfg, kernels, SimOptions::default(), |o| {
        let mut ids: Vec<TaskId> = Vec::new();
        for (i, n) in nodes.iter().enumerate() {
            let deps: Vec<TaskId> = n.deps.iter().map(|&d| ids[d]).collect();
            let args = [i as u64];
            let spec = TaskSpec::new(KernelId(7), n.class)
                .args(&args)
                .deps(&deps)
                .blocks(blocks(&cfg, n.class, seeds[i]));
            ids.push(o.submit(&spec).unwrap());
        }
    })
    .unwrap();
    let execs = std::mem::take(&mut *execs.lock().unwrap());
    (execs, out.report)
}

fn check(
    nodes: &[Node],
    seeds: &[u16],
    cfg: &Config,
    execs: &[Exec],
    report: &pto_runtime_core::RunReport,
) -> Result<(), TestCaseError> {
    prop_assert!(report.error.is_none(), "run failed: {:?}", report.error);
    prop_assert_eq!(report.finished, nodes.len() as u64);
    prop_assert_eq!(report.live_slots, 0, "every slot reclaimed");
    for (i, n) in nodes.iter().enumerate() {
        let mine: Vec<&Exec> = execs.iter().filter(|x| x.0 == i).collect();
        let count = if n.class == WorkerClass::Dummy {
            0
        } else {
            blocks(cfg, n.class, seeds[i])
        };
        let lanes = n.class.lanes();
        let mut seen: Vec<(u16, u8)> = mine.iter().map(|x| (x.2, x.1)).collect();
        seen.sort_unstable();
        let want: Vec<(u16, u8)> = (0..count)
            .flat_map(|b| (0..lanes).map(move |l| (b, l)))
            .collect();
        prop_assert_eq!(seen, want, "task {}: each block's lanes once", i);
        prop_assert!(
            mine.iter().all(|x| x.3 == count),
            "task {}: every block knows the count {}",
            i,
            count
        );
        let start = mine.iter().map(|x| x.4).min();
        for p in running_preds(nodes, i) {
            let p_end = execs.iter().filter(|x| x.0 == p).map(|x| x.5).max();
            if let (Some(s), Some(e)) = (start, p_end) {
                prop_assert!(
                    e < s,
                    "task {} started at {} before a block of predecessor {} ended at {}",
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
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn random_dags_of_blocks_run_each_block_once_after_its_predecessors(
        nodes in program(120),
        seeds in proptest::collection::vec(0u16..6, 120),
        window_log in 1u32..4,
        schedulers in 1u8..4,
        aic in 1u16..3,
        aiv in 2u16..6,
    ) {
        // Each case in both completion modes: status polling and the completion ring.
        for cfg in machines(window_log, 1, schedulers, aic, aiv) {
            let completion = cfg.completion;
            let (execs, report) = run_program(&nodes, &seeds, cfg);
            check(&nodes, &seeds, &cfg, &execs, &report)
                .map_err(|e| TestCaseError::fail(format!("{completion:?}: {e}")))?;
        }
    }
}

/// By class, the most cores (clusters for MIX) one scheduler of `cfg` owns: the widest a
/// sync-start task may be.
fn sync_max(cfg: &Config, class: WorkerClass) -> u16 {
    let (range, step) = match class {
        WorkerClass::Aic => (0..cfg.aic_cores, 1),
        WorkerClass::Aiv => (cfg.aic_cores..cfg.aic_cores + cfg.aiv_cores, 1),
        WorkerClass::Mix => (0..cfg.mix_clusters(), 1),
        WorkerClass::Dummy => return 1,
    };
    (0..cfg.schedulers)
        .map(|s| {
            range
                .clone()
                .step_by(step)
                .filter(|&c| cfg.scheduler_of(pto_runtime_core::CoreId(c)) == s)
                .count() as u16
        })
        .max()
        .unwrap_or(0)
}

/// Runs `nodes`, every task of several blocks sync-start, its kernel a barrier: each lane
/// arrives and waits (bounded) for every lane of every block of its task. Blocks that did
/// not start together would wait for one another forever (one behind another on a core).
fn run_barriers(nodes: &[Node], seeds: &[u16], cfg: Config) -> pto_runtime_core::RunReport {
    let arrived: Arc<Vec<AtomicU64>> =
        Arc::new((0..nodes.len()).map(|_| AtomicU64::new(0)).collect());
    let a = arrived.clone();
    let kernels = KernelTable::new().with(KernelId(7), "barrier", move |ctx| {
        let (i, lanes) = (ctx.args[0] as usize, u64::from(ctx.lanes));
        let all = u64::from(ctx.blocks) * lanes;
        a[i].fetch_add(1, Ordering::SeqCst);
        let start = std::time::Instant::now();
        while a[i].load(Ordering::SeqCst) < all {
            // Generous: a sanitizer's build on a loaded machine is slow, and a block that
            // never started waits forever, not 30 s.
            if start.elapsed() > std::time::Duration::from_secs(30) {
                return Err(pto_sim::KernelError::new(
                    16,
                    format!("task {i}: its blocks never met (sync start broken)"),
                ));
            }
            std::thread::sleep(std::time::Duration::from_micros(50));
        }
        Ok(())
    });
    let out = run(cfg, kernels, SimOptions::default(), |o| {
        let mut ids: Vec<TaskId> = Vec::new();
        for (i, n) in nodes.iter().enumerate() {
            let deps: Vec<TaskId> = n.deps.iter().map(|&d| ids[d]).collect();
            let args = [i as u64];
            let max = sync_max(&cfg, n.class).max(1);
            let blocks = 1 + seeds[i] % max;
            let mut spec = TaskSpec::new(KernelId(7), n.class)
                .args(&args)
                .deps(&deps)
                .blocks(blocks);
            if blocks > 1 {
                spec = spec.sync_start();
            }
            ids.push(o.submit(&spec).unwrap());
        }
    })
    .unwrap();
    out.report
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    #[test]
    fn sync_start_blocks_meet_at_a_barrier(
        nodes in program(60),
        seeds in proptest::collection::vec(0u16..6, 60),
        schedulers in 1u8..3,
        aic in 1u16..3,
        aiv in 2u16..6,
    ) {
        for cfg in machines(2, 1, schedulers, aic, aiv) {
            let report = run_barriers(&nodes, &seeds, cfg);
            prop_assert!(report.error.is_none(), "run failed: {:?}", report.error);
            prop_assert_eq!(report.finished, nodes.len() as u64);
        }
    }
}

#[test]
fn each_block_is_a_slice_on_its_own_core_in_the_trace() {
    let cfg = Config {
        aic_cores: 1,
        aiv_cores: 4,
        profile: pto_runtime_core::ProfileLevel::Tasks,
        ..Config::tiny()
    };
    let kernels = KernelTable::new().with(KernelId(7), "scale", |_| {
        std::thread::sleep(std::time::Duration::from_millis(2));
        Ok(())
    });
    let out = run(cfg, kernels, SimOptions::default(), |o| {
        let a = o
            .submit(&TaskSpec::new(KernelId(7), WorkerClass::Aiv).blocks(4))
            .unwrap();
        o.submit(&TaskSpec::new(KernelId(7), WorkerClass::Aiv).deps(&[a]))
            .unwrap();
    })
    .unwrap();
    assert_eq!(
        out.records.len(),
        5,
        "a record per block, and the consumer's"
    );
    let mut cores: Vec<u16> = out
        .records
        .iter()
        .filter(|r| r.blocks == 4)
        .map(|r| r.core.unwrap().0)
        .collect();
    cores.sort_unstable();
    cores.dedup();
    assert_eq!(cores.len(), 4, "every block on a core of its own");
    let trace = pto_sim::chrome_trace(&out.records, out.ticks_per_us);
    pto_sim::check_chrome_trace(&trace).unwrap();
    let names: Vec<String> = trace["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "X" && e["pid"] == trace["traceEvents"][0]["pid"])
        .map(|e| e["name"].as_str().unwrap_or("").to_owned())
        .collect();
    for b in 0..4 {
        assert!(
            names.iter().any(|n| n.ends_with(&format!("[{b}/4]"))),
            "block {b} has its slice: {names:?}"
        );
    }
}
