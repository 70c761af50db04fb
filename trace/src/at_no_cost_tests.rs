use super::*;
use pto_runtime_core::{CoreId, KernelId, Seq, WorkerClass};

/// A record of task `seq` of `class` whose kernel ran `duration` ticks (on a core unless
/// `class` is DUMMY); its other times are the run's, which the replay replaces.
fn ran(seq: u64, class: WorkerClass, duration: u64) -> TaskRecord {
    TaskRecord {
        task: TaskId::new(1, 0, Seq(seq)),
        kernel: KernelId(0),
        class,
        core: (class != WorkerClass::Dummy).then_some(CoreId(0)),
        scheduler: 0,
        submit: 0,
        ready: 0,
        dispatch: 7,
        start: 1_000,
        end: 1_000 + duration,
        fin: 99_999,
        deferred_done: 0,
        complete: 99_999,
        cancelled: false,
        skipped: false,
        block: 0,
        blocks: 1,
    }
}

const FIXED: ChipLatencies = ChipLatencies {
    dispatch: 100,
    seen_min: 600,
    seen_avg: 600,
};

#[test]
fn a_cross_class_edge_costs_the_time_its_completion_takes_to_be_seen() {
    // A (AIC, 1000 ticks) then B (AIV, 1000), 1 tick = 1 ns. A runs 100..1100 and is seen
    // at 1700; B is dispatched then and runs 1800..2800. B was ready (by the definition)
    // from 1100, with the AIV core idle: 600 of the 2700 window, the AIC class idle of
    // ready work meanwhile.
    let (a, b) = (
        ran(0, WorkerClass::Aic, 1_000),
        ran(1, WorkerClass::Aiv, 1_000),
    );
    let tasks = vec![(a.task, vec![]), (b.task, vec![a.task])];
    let f = overhead_at_no_cost(&[a, b], &tasks, (1, 1), 1_000, FIXED).unwrap();
    assert_eq!(f.makespan_ns, 2_700.0, "{f:?}");
    assert_eq!(f.aiv, 600.0 / 2_700.0, "{f:?}");
    assert_eq!((f.aic, f.all_engines), (0.0, 0.0), "{f:?}");
    assert_eq!(f.has_overhead, 600.0 / 2_700.0, "{f:?}");
    assert_eq!((f.head_ns, f.tail_ns), (100.0, 600.0), "{f:?}");
}

#[test]
fn a_dummy_releases_its_consumers_when_it_is_released() {
    // A (AIV) -> D (DUMMY) -> B (AIV): D completes the moment A is seen, so B waits for
    // A's completion alone.
    let (a, d, b) = (
        ran(0, WorkerClass::Aiv, 1_000),
        ran(1, WorkerClass::Dummy, 0),
        ran(2, WorkerClass::Aiv, 1_000),
    );
    let tasks = vec![
        (a.task, vec![]),
        (d.task, vec![a.task]),
        (b.task, vec![d.task]),
    ];
    let f = overhead_at_no_cost(&[a, d, b], &tasks, (0, 1), 1_000, FIXED).unwrap();
    assert_eq!(f.makespan_ns, 2_700.0, "{f:?}");
    assert_eq!(f.has_overhead, 600.0 / 2_700.0, "{f:?}");
}

/// A random DAG of AIC and AIV tasks, each with up to 3 producers among the 16 before it.
fn random_dag(seed: u64, n: u64) -> (Vec<TaskRecord>, Vec<(TaskId, Vec<TaskId>)>) {
    let mut x = seed | 1;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut records = Vec::new();
    let mut tasks = Vec::new();
    for i in 0..n {
        let class = [WorkerClass::Aic, WorkerClass::Aiv][(next() % 2) as usize];
        let r = ran(i, class, 1 + next() % 5_000);
        let deps = (0..next() % 4)
            .filter(|_| i > 0)
            .map(|_| TaskId::new(1, 0, Seq(i - 1 - next() % i.min(16))))
            .collect();
        tasks.push((r.task, deps));
        records.push(r);
    }
    (records, tasks)
}

#[test]
fn with_no_latencies_no_dag_has_overhead_and_with_them_every_share_is_a_share() {
    let none = ChipLatencies {
        dispatch: 0,
        seen_min: 0,
        seen_avg: 0,
    };
    let a2a3 = ChipLatencies {
        dispatch: 140,
        seen_min: 180,
        seen_avg: 600,
    };
    for seed in 1..40 {
        let (records, tasks) = random_dag(seed, 200);
        let cores = (1 + (seed % 3) as u16, 1 + (seed % 5) as u16);
        let f = overhead_at_no_cost(&records, &tasks, cores, 1_000, none).unwrap();
        assert_eq!(
            (f.aic, f.aiv, f.all_engines, f.has_overhead),
            (0.0, 0.0, 0.0, 0.0),
            "seed {seed}: {f:?}"
        );
        let g = overhead_at_no_cost(&records, &tasks, cores, 1_000, a2a3).unwrap();
        for s in [g.aic, g.aiv, g.all_engines, g.has_overhead] {
            assert!((0.0..=1.0).contains(&s), "seed {seed}: {g:?}");
        }
        assert!(g.makespan_ns >= f.makespan_ns, "seed {seed}: {g:?} {f:?}");
        assert_eq!(g.head_ns, 140.0);
        assert!((180.0..=1_020.0).contains(&g.tail_ns), "seed {seed}: {g:?}");
    }
}

#[test]
fn seen_delays_are_uniform_about_their_average_and_never_below_their_least() {
    let l = ChipLatencies {
        dispatch: 0,
        seen_min: 180,
        seen_avg: 600,
    };
    let n = 100_000;
    let draws: Vec<u64> = (1..=n).map(|i| seen_delay(l, i)).collect();
    assert!(draws.iter().all(|&d| (180..=1_020).contains(&d)));
    let mean = draws.iter().sum::<u64>() / n;
    assert!((590..=610).contains(&mean), "{mean}");
}

#[test]
fn a_task_waiting_on_itself_or_needing_absent_cores_has_no_replay() {
    let a = ran(0, WorkerClass::Aiv, 10);
    let cycle = vec![(a.task, vec![a.task])];
    assert!(overhead_at_no_cost(&[a], &cycle, (1, 1), 1_000, FIXED).is_none());
    let alone = vec![(a.task, vec![])];
    assert!(overhead_at_no_cost(&[a], &alone, (1, 0), 1_000, FIXED).is_none());
    assert!(overhead_at_no_cost(&[a], &alone, (0, 1), 1_000, FIXED).is_some());
}
