//! Profiling as a run-time flag, end to end on the simulator: every task (normal, MIX, DUMMY)
//! reaches the profile through the one completion funnel, and the phase counters add up.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use pto_runtime_core::{
    Config, KernelId, PhaseCounters, ProfileLevel, RegionLayout, RunReport, Runtime, TaskId,
    TaskRecord, TaskSpec, WorkerClass,
};
use pto_sim::{KernelTable, Region, Signal, SimMachine, SimOptions, Transfer};

const K: KernelId = KernelId(0);
const TASKS: usize = 200;

/// What a profiled run left in its region.
struct Profiled {
    submitted: Vec<(TaskId, WorkerClass)>,
    records: Vec<TaskRecord>,
    phases: Vec<PhaseCounters>,
    report: RunReport,
}

/// Runs 200 tasks of every class (a third of them chained) at `level`.
fn run_at(level: ProfileLevel, capacity: u32) -> Profiled {
    let cfg = Config {
        profile: level,
        profile_capacity: capacity,
        schedulers: 2,
        aic_cores: 2,
        aiv_cores: 4,
        task_window: 8,
        ..Config::tiny()
    };
    let mut region = Region::new(RegionLayout::new(&cfg).unwrap().size()).unwrap();
    let rt = Runtime::init(region.bytes(), cfg).unwrap();
    let kernels = KernelTable::new().with(K, "k", |_| Ok(()));
    let machine = SimMachine::start(&cfg, kernels, SimOptions::default()).unwrap();
    let p = machine.platform();
    let mut o = rt.orchestrator(p).unwrap();
    let scheds: Vec<_> = (0..cfg.schedulers)
        .map(|i| rt.scheduler(i, p).unwrap())
        .collect();
    let submitted = std::thread::scope(|s| {
        let hs: Vec<_> = scheds
            .into_iter()
            .map(|sc| s.spawn(move || sc.run()))
            .collect();
        let mut submitted = Vec::new();
        let mut prev: Option<TaskId> = None;
        for i in 0..TASKS {
            let class = WorkerClass::ALL[i % 4];
            let deps: Vec<TaskId> = prev.into_iter().filter(|_| i % 3 == 0).collect();
            let id = o.submit(&TaskSpec::new(K, class).deps(&deps)).unwrap();
            submitted.push((id, class));
            prev = Some(id);
        }
        drop(o);
        for h in hs {
            h.join().unwrap().unwrap();
        }
        submitted
    });
    Profiled {
        submitted,
        records: rt.task_records().collect(),
        phases: (0..cfg.schedulers)
            .map(|i| rt.phase_counters(i).unwrap())
            .collect(),
        report: rt.report(),
    }
}

#[test]
fn tasks_level_has_one_ordered_record_per_task_of_every_class() {
    let run = run_at(ProfileLevel::Tasks, 1024);
    assert_eq!(run.report.finished, TASKS as u64);
    assert_eq!(run.report.profile_dropped, 0);
    assert_eq!(run.records.len(), TASKS, "one record per task");
    let ids: Vec<TaskId> = run.records.iter().map(|r| r.task).collect();
    let submitted: Vec<TaskId> = run.submitted.iter().map(|(id, _)| *id).collect();
    assert_eq!(ids, submitted, "records come back in submit order");
    for r in &run.records {
        let class = run
            .submitted
            .iter()
            .find(|(id, _)| *id == r.task)
            .unwrap()
            .1;
        assert_eq!(r.class, class);
        assert!(
            r.submit > 0 && r.submit <= r.ready && r.ready <= r.complete,
            "{r:?}"
        );
        if class == WorkerClass::Dummy {
            assert_eq!(
                (r.core, r.start, r.end, r.dispatch),
                (None, 0, 0, 0),
                "{r:?}"
            );
        } else {
            assert!(r.core.is_some(), "{r:?}");
            let order = [r.ready, r.dispatch, r.start, r.end, r.fin, r.complete];
            assert!(
                order.windows(2).all(|w| w[0] <= w[1]),
                "out of order: {r:?}"
            );
        }
        assert_eq!(r.deferred_done, 0, "nothing here is deferred");
    }
}

#[test]
fn counters_add_up_to_the_loop_total_and_cover_every_phase_that_ran() {
    for level in [ProfileLevel::Counters, ProfileLevel::Tasks] {
        let run = run_at(level, 1024);
        for c in &run.phases {
            assert_eq!(c.ticks.iter().sum::<u64>(), c.total);
            // A scheduler reads the clock only around work: one that found the run over at
            // its first loop has a total of 0, legitimately.
            assert!(c.loops > 0, "{c:?}");
        }
        assert!(
            run.phases.iter().any(|c| c.total > 0),
            "some scheduler measured its loops: {:?}",
            run.phases
        );
        let all: u64 = run.phases.iter().map(|c| c.ticks[0] + c.ticks[1]).sum();
        assert!(all > 0, "complete and dispatch took time somewhere");
        if level == ProfileLevel::Counters {
            assert!(run.records.is_empty(), "counters keep no task records");
        }
    }
}

#[test]
fn off_measures_nothing() {
    let run = run_at(ProfileLevel::Off, 1024);
    assert!(run.records.is_empty());
    assert!(run.phases.iter().all(|c| c.total == 0 && c.loops == 0));
}

#[test]
fn a_full_profile_ring_counts_what_it_dropped_and_never_blocks() {
    let run = run_at(ProfileLevel::Tasks, 50);
    assert_eq!(run.report.finished, TASKS as u64, "the run went on");
    assert_eq!(run.records.len(), 50);
    assert_eq!(run.report.profile_dropped, (TASKS - 50) as u64);
}

/// Spins until its gate opens (bounded: 10 s).
const GATED: KernelId = KernelId(2);

/// Waits (bounded) until the runtime has finished `n` tasks.
fn wait_finished(rt: &Runtime<'_>, n: u64) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while rt.report().finished < n {
        assert!(
            Instant::now() < deadline,
            "{n} tasks did not finish in 10 s"
        );
        std::thread::yield_now();
    }
}

/// The level changes while tasks live: a task keeps a record only if it was submitted and
/// finished at `Tasks`, and the tasks submitted below `Tasks` and run at `Tasks`, in slots
/// whose earlier tenants kept records, stamp none of those records.
#[test]
fn tasks_submitted_below_tasks_level_leave_the_records_of_earlier_tenants_alone() {
    let cfg = Config {
        profile: ProfileLevel::Tasks,
        profile_capacity: 1024,
        task_window: 8,
        ..Config::tiny()
    };
    let mut region = Region::new(RegionLayout::new(&cfg).unwrap().size()).unwrap();
    let rt = Runtime::init(region.bytes(), cfg).unwrap();
    let gate = Arc::new(AtomicBool::new(false));
    let g = gate.clone();
    let kernels = KernelTable::new()
        .with(K, "k", |_| Ok(()))
        .with(GATED, "gated", move |_| {
            let deadline = Instant::now() + Duration::from_secs(10);
            while !g.load(Ordering::Acquire) && Instant::now() < deadline {
                std::thread::yield_now();
            }
            Ok(())
        });
    let machine = SimMachine::start(&cfg, kernels, SimOptions::default()).unwrap();
    let p = machine.platform();
    let mut o = rt.orchestrator(p).unwrap();
    let sched = rt.scheduler(0, p).unwrap();
    let (recorded, unrecorded) = std::thread::scope(|s| {
        let h = s.spawn(move || sched.run());
        let spec = TaskSpec::new(K, WorkerClass::Aiv);
        // Recorded: submitted and finished at `Tasks`, in every slot of the window.
        let first: Vec<TaskId> = (0..16).map(|_| o.submit(&spec).unwrap()).collect();
        wait_finished(&rt, 16);
        // Submitted at `Off` behind a gate, and so dispatched and finished at `Tasks`.
        rt.set_profile_level(ProfileLevel::Off);
        let gated = o.submit(&TaskSpec::new(GATED, WorkerClass::Aic)).unwrap();
        let mut unrecorded = vec![gated];
        unrecorded.extend((0..6).map(|_| o.submit(&spec.deps(&[gated])).unwrap()));
        rt.set_profile_level(ProfileLevel::Tasks);
        gate.store(true, Ordering::Release);
        wait_finished(&rt, 23);
        // Recorded again.
        let last: Vec<TaskId> = (0..8).map(|_| o.submit(&spec).unwrap()).collect();
        drop(o);
        h.join().unwrap().unwrap();
        ([first, last].concat(), unrecorded)
    });
    assert_eq!(rt.report().finished, 31);
    let records: Vec<TaskRecord> = rt.task_records().collect();
    let ids: Vec<TaskId> = records.iter().map(|r| r.task).collect();
    assert_eq!(
        ids, recorded,
        "exactly the tasks submitted and finished at Tasks"
    );
    assert!(ids.iter().all(|id| !unrecorded.contains(id)));
    for r in &records {
        let order = [
            r.submit, r.ready, r.dispatch, r.start, r.end, r.fin, r.complete,
        ];
        assert!(order.windows(2).all(|w| w[0] <= w[1]), "{r:?}");
        assert!(r.core.is_some(), "{r:?}");
    }
}

/// Posts a 64-bit counter bump landing after 100 µs and waits for it (`args[0]`: the counter).
const DEFERRED: KernelId = KernelId(1);

#[test]
fn deferred_dummy_and_normal_tasks_all_reach_the_profile_and_counters_add_up() {
    let cfg = Config {
        profile: ProfileLevel::Tasks,
        max_args: 1,
        ..Config::tiny()
    };
    let kernels = KernelTable::new()
        .with(K, "k", |_| Ok(()))
        .with(DEFERRED, "deferred", |ctx| {
            let counter = ctx.args[0];
            let bump = Transfer::signal_only(Signal::Add64 {
                addr: counter,
                delta: 1,
            })
            .after(std::time::Duration::from_micros(100));
            ctx.post(0, bump)?;
            ctx.defer_counter64(counter, 1).map_err(Into::into)
        });
    let out = pto_sim::run(cfg, kernels, SimOptions::default(), |o| {
        let mem = o.platform().memory();
        let mut ids = Vec::new();
        for i in 0..60 {
            let spec = match i % 3 {
                0 => TaskSpec::new(DEFERRED, WorkerClass::Aiv),
                1 => TaskSpec::dummy(),
                _ => TaskSpec::new(K, WorkerClass::Aic),
            };
            let counter = [mem.alloc(8, 8).unwrap()];
            let spec = if i % 3 == 0 {
                spec.args(&counter)
            } else {
                spec
            };
            ids.push((o.submit(&spec).unwrap(), i % 3 == 0));
        }
        ids
    })
    .unwrap();
    assert_eq!(
        out.records.len(),
        60,
        "one record per task, deferred ones included"
    );
    let mut longest = 0;
    // A task whose condition had landed by the time its FIN was taken completes at once,
    // without entering the deferred set (on a loaded machine, all of them may).
    let mut polled = false;
    for (id, deferred) in &out.value {
        let r = out.records.iter().find(|r| r.task == *id).unwrap();
        if *deferred {
            assert!(
                r.deferred_done >= r.fin && r.complete >= r.deferred_done,
                "{r:?}"
            );
            longest = longest.max(r.deferred_done - r.start);
            polled |= r.deferred_done > r.fin;
        } else {
            assert_eq!(r.deferred_done, 0, "{r:?}");
        }
    }
    // Each counter lands 100 µs after its kernel posted it: the tasks waited for that.
    assert!(longest >= 100 * out.ticks_per_us, "{longest} ticks");
    let c = out.phases[0];
    assert_eq!(c.ticks.iter().sum::<u64>(), c.total);
    assert!(
        !polled || c.ticks[pto_runtime_core::Phase::DeferredPoll as usize] > 0,
        "deferred polling is counted: {c:?}"
    );
}
