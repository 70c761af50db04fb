//! The critical path of hand-made runs: the chain walked back from the last kernel, each gap
//! blamed where the definition puts it, the buckets adding up to the observed span, and the
//! dependency-limited length the longest chain of kernel time.

use pto_runtime_core::{CoreId, KernelId, Seq, TaskId, TaskRecord, WorkerClass};

use super::*;

fn id(n: u64) -> TaskId {
    TaskId::new(1, 0, Seq(n))
}

/// Task `n` of `class` on core 0: submitted, dispatched, started and ended at those ticks.
fn rec(n: u64, class: WorkerClass, [submit, dispatch, start, end]: [u64; 4]) -> TaskRecord {
    TaskRecord {
        task: id(n),
        kernel: KernelId(n as u32),
        class,
        core: Some(CoreId(0)),
        scheduler: 0,
        submit,
        ready: 0,
        dispatch,
        start,
        end,
        fin: end,
        deferred_done: 0,
        complete: end,
        cancelled: false,
        skipped: false,
        block: 0,
        blocks: 1,
    }
}

#[test]
fn each_gap_of_the_chain_goes_to_the_orchestrator_the_scheduler_or_the_front() {
    // One AIC core, 1 tick = 1 ns. a -> b -> c; c is submitted after b ended.
    let a = rec(0, WorkerClass::Aic, [10, 50, 100, 1100]);
    let b = rec(1, WorkerClass::Aic, [20, 1300, 1400, 1900]);
    let c = rec(2, WorkerClass::Aic, [2500, 2600, 2650, 3000]);
    let tasks = [(id(0), vec![]), (id(1), vec![id(0)]), (id(2), vec![id(1)])];
    let p = critical_path(&[a, b, c], &tasks, (1, 0), 1000).unwrap();
    let chain: Vec<u64> = p.chain.iter().map(|t| t.id).collect();
    assert_eq!(chain, [id(0).raw(), id(1).raw(), id(2).raw()]);
    assert_eq!(p.dependency_limited_ns, 1850);
    assert_eq!(p.observed_ns, 2990);
    assert_eq!(
        p.blame,
        Blame {
            kernels: 1850,
            orchestrator: 600,
            core: 0,
            scheduler: 300 + 150,
            front: 90,
        }
    );
    let b = p.blame;
    assert_eq!(
        b.kernels + b.orchestrator + b.core + b.scheduler + b.front,
        p.observed_ns
    );
    assert_eq!(p.chain[2].gap_ns, 750);
}

#[test]
fn a_wait_while_every_core_of_the_class_is_busy_goes_to_the_core() {
    // One AIV core: q needs p and waits while y (independent) holds the core.
    let p = rec(0, WorkerClass::Aiv, [0, 50, 100, 500]);
    let y = rec(1, WorkerClass::Aiv, [0, 450, 500, 1000]);
    let q = rec(2, WorkerClass::Aiv, [0, 1000, 1010, 1500]);
    let tasks = [(id(0), vec![]), (id(1), vec![]), (id(2), vec![id(0)])];
    let path = critical_path(&[p, y, q], &tasks, (0, 1), 1000).unwrap();
    let chain: Vec<u64> = path.chain.iter().map(|t| t.id).collect();
    assert_eq!(chain, [id(0).raw(), id(2).raw()]);
    assert_eq!((path.blame.core, path.blame.scheduler), (500, 10));
    assert_eq!(path.dependency_limited_ns, 890);
}

#[test]
fn a_task_without_a_record_gives_none() {
    let a = rec(0, WorkerClass::Aic, [0, 1, 2, 3]);
    let tasks = [(id(0), vec![]), (id(1), vec![id(0)])];
    assert_eq!(critical_path(&[a], &tasks, (1, 0), 1000), None);
}

#[test]
fn the_spans_every_core_was_busy_are_what_counting_each_instant_gives() {
    // Random kernels on two AIV cores (and a few AIC ones on one), then every window's full
    // time against a count at each tick.
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let mut times = HashMap::new();
    for n in 0..40 {
        let class = if n % 5 == 0 {
            WorkerClass::Aic
        } else {
            WorkerClass::Aiv
        };
        let start = next(200);
        let end = start + next(30);
        let t = Times {
            class,
            kernel: 0,
            ran: true,
            submit: 0,
            ready: 0,
            dispatch: start,
            start,
            end,
        };
        times.insert(id(n), t);
    }
    let cores = (1u16, 2u16);
    let busy = Busy::of(&times, cores);
    let running = |class: WorkerClass, at: u64| {
        times
            .values()
            .filter(|t| t.class == class && t.start <= at && at < t.end)
            .count()
    };
    for _ in 0..200 {
        let from = next(240);
        let to = from + next(60);
        for (class, n) in [(WorkerClass::Aic, 1), (WorkerClass::Aiv, 2)] {
            let counted = (from..to).filter(|&at| running(class, at) >= n).count() as u64;
            assert_eq!(
                busy.full_within(class, from, to),
                counted,
                "{class:?} over [{from}, {to})"
            );
        }
    }
}
