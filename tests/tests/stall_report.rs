//! Deliberately hung runs end with a stall report that names every live task and what it
//! waited for, and the run's stall class: a kernel that never returns, a deferred condition
//! that never lands, and a scope that holds the window the orchestrator needs; and runs
//! that lost a signal on purpose (`Orchestrator::inject`), which end as making no progress,
//! classed a dependency deadlock or ready-but-idle.

use std::sync::Arc;

use pto_runtime_core::{
    Config, FatalCause, Fault, KernelId, Stall, StallKind, SubmitError, TaskId, TaskSpec, Watch,
    WorkerClass,
};
use pto_sim::{FailedRun, KernelTable, SimError, SimOptions, run};
use pto_tests::Gate;

const OK: KernelId = KernelId(0);
/// Blocks at the test's gate, opened once the run failed: it outlives any task timeout (the
/// simulator cannot kill a kernel).
const HANG: KernelId = KernelId(1);
/// `[counter]`: completes once the 32-bit counter reaches 1, which nobody writes.
const NEVER: KernelId = KernelId(2);

fn kernels(gate: &Arc<Gate>) -> KernelTable {
    let gate = gate.clone();
    KernelTable::new()
        .with(OK, "ok", |_| Ok(()))
        .with(HANG, "hang", move |_| {
            gate.wait();
            Ok(())
        })
        .with(NEVER, "never", |ctx| {
            let [counter] = ctx.args_array()?;
            ctx.defer_counter32(counter, 1).map_err(Into::into)
        })
}

fn failed_run<T: Send + 'static>(r: Result<pto_sim::SimRun<T>, SimError>) -> (String, FailedRun) {
    match r {
        Err(e @ SimError::Run { .. }) => {
            let text = e.to_string();
            let SimError::Run { run, .. } = e else {
                unreachable!()
            };
            (text, *run)
        }
        Err(e) => panic!("not a run error: {e}"),
        Ok(_) => panic!("the hung run succeeded"),
    }
}

#[test]
fn a_hung_kernel_is_reported_running_and_its_consumer_waiting_for_it() {
    let cfg = Config {
        task_timeout_us: 20_000,
        schedulers: 1,
        ..Config::tiny()
    };
    let gate = Gate::new();
    let (text, run) = failed_run(run(cfg, kernels(&gate), SimOptions::default(), |o| {
        let hung = o.submit(&TaskSpec::new(HANG, WorkerClass::Aic)).unwrap();
        let waiting = o
            .submit(&TaskSpec::new(OK, WorkerClass::Aiv).deps(&[hung]))
            .unwrap();
        (hung, waiting)
    }));
    gate.open();
    let tasks = &run.stalls.tasks;
    assert_eq!(tasks.len(), 2, "{text}");
    let Stall::Running {
        task: hung, for_us, ..
    } = tasks[0].stall
    else {
        panic!("the hung task is not reported running: {text}")
    };
    assert!(for_us.is_some_and(|us| us >= 20_000), "{text}");
    assert_eq!(
        tasks[1].stall,
        Stall::Producers {
            task: tasks[1].stall.task(),
            left: 1
        },
        "{text}"
    );
    assert_eq!(tasks[1].producers, vec![hung], "{text}");
    let class = run.stalls.class.expect("a stalled run has a class");
    assert_eq!(class.kind, StallKind::RunningStalled, "{text}");
    assert_eq!(
        class.entry,
        Some(tasks[0].stall),
        "the hung lane shows it: {text}"
    );
    let json = serde_json::to_value(class).unwrap();
    assert_eq!(json["class"], "running-stalled", "{json}");
    assert_eq!(json["task"], hung.to_string(), "{json}");
    assert!(json["core"].is_u64(), "{json}");
    assert_eq!(json["stall"], class.to_string(), "{json}");
    assert!(
        text.contains(&format!(
            "stall class: running-stalled: {hung} running on core"
        )) && text.contains("2 live tasks when the run stopped")
            && text.contains(&format!("{hung} running on core"))
            && text.contains(&format!("waiting for 1 producer: {hung}")),
        "{text}"
    );
}

#[test]
fn a_condition_that_never_lands_is_reported_with_its_word_and_value() {
    let cfg = Config {
        deferred_timeout_us: 20_000,
        ..Config::tiny()
    };
    let gate = Gate::new();
    let (text, mut run) = failed_run(run(cfg, kernels(&gate), SimOptions::default(), |o| {
        let counter = o.platform().memory().alloc(8, 8).unwrap();
        let deferred = o
            .submit(&TaskSpec::new(NEVER, WorkerClass::Aiv).args(&[counter]))
            .unwrap();
        let consumer = o
            .submit(&TaskSpec::new(OK, WorkerClass::Aic).deps(&[deferred]))
            .unwrap();
        (deferred, consumer, counter)
    }));
    gate.open();
    let (deferred, consumer, counter) = run.take_value().unwrap();
    let tasks = &run.stalls.tasks;
    assert_eq!(
        tasks.iter().map(|t| t.stall).collect::<Vec<_>>(),
        vec![
            Stall::Deferred {
                task: deferred,
                watch: Watch::Counter32(counter),
                expected: 1,
                last: 0
            },
            Stall::Producers {
                task: consumer,
                left: 1
            },
        ],
        "{text}"
    );
    assert_eq!(tasks[1].producers, vec![deferred]);
    assert!(text.contains("to reach 1 (last read: 0)"), "{text}");
    let class = run.stalls.class.expect("a stalled run has a class");
    assert_eq!(
        (class.kind, class.entry),
        (StallKind::Deferred, Some(tasks[0].stall)),
        "{text}"
    );
    assert!(text.contains("stall class: deferred: "), "{text}");
}

#[test]
fn ready_tasks_behind_a_hung_core_are_reported_ready() {
    let cfg = Config {
        task_timeout_us: 20_000,
        schedulers: 1,
        aic_cores: 1,
        aiv_cores: 1,
        ..Config::tiny()
    };
    let gate = Gate::new();
    let (text, run) = failed_run(run(cfg, kernels(&gate), SimOptions::default(), |o| {
        for _ in 0..3 {
            o.submit(&TaskSpec::new(HANG, WorkerClass::Aic)).unwrap();
        }
    }));
    gate.open();
    let kinds: Vec<&str> = run
        .stalls
        .tasks
        .iter()
        .map(|t| match t.stall {
            Stall::Running { .. } => "running",
            Stall::Behind { .. } => "behind",
            Stall::Ready { .. } => "ready",
            _ => "other",
        })
        .collect();
    // One runs; the second sits in the core's second payload slot or in the queue.
    assert_eq!(kinds.len(), 3, "{text}");
    assert_eq!(kinds[0], "running", "{text}");
    assert!(
        kinds[1..].iter().all(|k| *k == "behind" || *k == "ready"),
        "{text}"
    );
    assert!(text.contains("ready (Aic) but not dispatched"), "{text}");
    // The ready tasks wait behind the hung core: the class names the core, not the queue.
    let class = run.stalls.class.expect("a stalled run has a class");
    assert_eq!(class.kind, StallKind::RunningStalled, "{text}");
}

#[test]
fn a_scope_deadlock_names_the_task_the_scope_holds() {
    let cfg = Config {
        task_window: 4,
        submit_timeout_us: 1_000_000,
        ..Config::tiny()
    };
    let gate = Gate::new();
    let out = run(cfg, kernels(&gate), SimOptions::default(), |o| {
        o.scope_begin().unwrap();
        let first = o.submit(&TaskSpec::new(OK, WorkerClass::Aiv)).unwrap();
        for _ in 1..4 {
            o.submit(&TaskSpec::new(OK, WorkerClass::Aiv)).unwrap();
        }
        let refused = o.submit(&TaskSpec::new(OK, WorkerClass::Aiv));
        o.scope_end().unwrap();
        (first, refused)
    })
    .unwrap();
    let (first, refused) = out.value;
    let Err(e @ SubmitError::ScopeDeadlock { held, .. }) = refused else {
        panic!("not a scope deadlock: {refused:?}")
    };
    assert_eq!(held, first);
    assert!(
        e.to_string().contains(&format!(
            "one of the 1 open scope(s) holds {first} until scope_end"
        )),
        "{e}"
    );
}

#[test]
fn an_orchestration_that_gives_up_waiting_with_nothing_live_is_classed_starved() {
    // The orchestration's own watchdog: its tasks have all finished (settle waited for the
    // one writing `c`), it has nothing more to submit yet and aborts the run, its handle
    // still open. Nothing was live, so the run waited on its orchestrator.
    let cfg = Config {
        schedulers: 1,
        ..Config::tiny()
    };
    let gate = Gate::new();
    let (text, run) = failed_run(run(cfg, kernels(&gate), SimOptions::default(), |o| {
        let c = o.platform().memory().alloc_buffer(8, 64).unwrap();
        let word = pto_runtime_core::Tile::contiguous(c.base, 8, 1);
        let t = [pto_runtime_core::TensorArg::output(c, word)];
        o.submit(&TaskSpec::new(OK, WorkerClass::Aiv).tensors(&t))
            .unwrap();
        o.settle(&pto_runtime_core::TensorArg::input(c, word))
            .unwrap();
        assert!(o.abort(77), "the run's first error");
    }));
    assert!(run.stalls.tasks.is_empty(), "no task was live: {text}");
    let class = run.stalls.class.expect("a starved run has a class");
    assert_eq!(
        (class.kind, class.entry),
        (StallKind::OrchestratorStarved, None),
        "{text}"
    );
    assert!(text.contains("stall class: orchestrator-starved"), "{text}");
    let json = serde_json::to_value(class).unwrap();
    assert_eq!(json["class"], "orchestrator-starved", "{json}");
}

/// Timeouts that let a stuck run end within about a second: nothing finishing for longer
/// than any one task may take (here 1 s, the least) fails the run as making no progress.
fn quick() -> Config {
    Config {
        task_timeout_us: 200_000,
        deferred_timeout_us: 50_000,
        ..Config::tiny()
    }
}

#[test]
fn a_lost_release_ends_the_run_as_a_dependency_deadlock_naming_the_producer() {
    let gate = Gate::new();
    let go = gate.clone();
    let (text, mut run) = failed_run(run(quick(), kernels(&gate), SimOptions::default(), |o| {
        // The producer runs until the consumer is wired, so the consumer pins it.
        let producer = o.submit(&TaskSpec::new(HANG, WorkerClass::Aic)).unwrap();
        o.inject(Fault::LoseEdge);
        let consumer = o
            .submit(&TaskSpec::new(OK, WorkerClass::Aiv).deps(&[producer]))
            .unwrap();
        go.open();
        (producer, consumer)
    }));
    let (producer, consumer) = run.take_value().unwrap();
    let e = run.run.report.error.expect("the run failed");
    assert!(
        matches!(e.cause, FatalCause::NoProgress { live: 1, idle_us } if idle_us >= 1_000_000),
        "{text}"
    );
    let tasks = &run.stalls.tasks;
    assert_eq!(tasks.len(), 1, "only the consumer was live: {text}");
    assert_eq!(
        tasks[0].stall,
        Stall::Producers {
            task: consumer,
            left: 1
        },
        "{text}"
    );
    assert!(tasks[0].producers.is_empty(), "{text}");
    assert_eq!(tasks[0].finished_producers, vec![producer], "{text}");
    let class = run.stalls.class.expect("a stalled run has a class");
    assert_eq!(
        (class.kind, class.entry),
        (StallKind::DependencyDeadlock, Some(tasks[0].stall)),
        "{text}"
    );
    assert!(
        text.contains("no task finished for")
            && text.contains(&format!(
                "stall class: dependency-deadlock: {consumer} waiting for 1 producer"
            ))
            && text.contains(&format!("; {producer} finished without releasing it")),
        "{text}"
    );
    let json = serde_json::to_value(class).unwrap();
    eprintln!("{text}");
    assert_eq!(json["class"], "dependency-deadlock", "{json}");
    assert_eq!(json["task"], consumer.to_string(), "{json}");
}

#[test]
fn a_lost_ready_entry_ends_the_run_as_ready_but_idle_naming_the_task() {
    let gate = Gate::new();
    let (text, mut run) = failed_run(run(quick(), kernels(&gate), SimOptions::default(), |o| {
        o.inject(Fault::LoseReady);
        let lost = o.submit(&TaskSpec::new(OK, WorkerClass::Aiv)).unwrap();
        let after = o
            .submit(&TaskSpec::new(OK, WorkerClass::Aic).deps(&[lost]))
            .unwrap();
        let fine = o.submit(&TaskSpec::new(OK, WorkerClass::Aic)).unwrap();
        (lost, after, fine)
    }));
    let (lost, after, fine): (TaskId, TaskId, TaskId) = run.take_value().unwrap();
    let e = run.run.report.error.expect("the run failed");
    assert!(
        matches!(e.cause, FatalCause::NoProgress { live: 2, .. }),
        "{text}"
    );
    let stalls: Vec<Stall> = run.stalls.tasks.iter().map(|t| t.stall).collect();
    assert_eq!(
        stalls,
        vec![
            Stall::Producers {
                task: after,
                left: 1
            },
            Stall::Ready {
                task: lost,
                class: WorkerClass::Aiv
            },
        ],
        "the other task ran: {text}"
    );
    assert!(!text.contains(&fine.to_string()), "{text}");
    assert_eq!(run.stalls.tasks[0].producers, vec![lost], "{text}");
    let class = run.stalls.class.expect("a stalled run has a class");
    assert_eq!(
        (class.kind, class.entry),
        (StallKind::ReadyButIdle, Some(stalls[1])),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "stall class: ready-but-idle: {lost} ready (Aiv) but not dispatched"
        )),
        "{text}"
    );
}
