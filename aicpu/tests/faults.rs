//! Runs of the fault-injecting build of libpto_aicpu.so (feature `fault-injection`, never
//! shipped): a test arms a lost release or a lost ready entry for the next run
//! (`pto_aicpu_inject_fault`), and the run must end as making no progress, with the stall
//! class and the tasks the device's report names: a dependency deadlock naming the producer
//! that finished without releasing its consumer, or ready-but-idle naming the task no
//! scheduler saw. The next run is whole again. Natively, and for aarch64 under qemu-aarch64.

/// The SO these tests load: the fault-injecting build.
const SO_FEATURES: &[&str] = &["fault-injection"];

// The harness serves the other test binaries too; this one uses part of it.
#[allow(dead_code)]
mod harness {
    pub mod chip;
    pub mod record_host;
    pub mod rig;
    pub mod so;
}

use harness::rig::{Extra, Rig, SERIAL, init};
use harness::so::so;
use pto_device_sys::abi::{PtoAicpuCode, PtoAicpuReport};
use pto_runtime_core::{Config, FatalKind, Stall, StallKind, TaskId, WorkerClass};

/// Arms fault `kind` (1: lose an edge, 2: lose a ready entry) for the next run.
fn inject(kind: u32) {
    let f = so()
        .inject_fault
        .expect("the fault-injecting SO exports pto_aicpu_inject_fault");
    // SAFETY: the SO's entry point, of that shape; no run is going on.
    assert_eq!(unsafe { f(kind) }, 0, "arming fault {kind}");
}

/// A rig whose stuck runs end in about a second: no task finishing for longer than any one
/// may take (here 1 s, the least) fails the run as making no progress.
fn quick() -> Rig {
    Rig::with(Config {
        task_timeout_us: 200_000,
        deferred_timeout_us: 50_000,
        ..Rig::config()
    })
}

/// Checks that `r` failed as making no progress, with a class; its class.
fn stuck(r: &PtoAicpuReport) -> pto_runtime_core::StallClass {
    assert_eq!(r.code, PtoAicpuCode::RunFailed as u32, "{r}");
    assert_eq!(r.sched.error_kind, FatalKind::NoProgress as u32, "{r}");
    assert!(r.to_string().contains("no task finished for longer"), "{r}");
    r.stall_class().expect("a stalled run has a class")
}

#[test]
fn a_lost_release_is_a_dependency_deadlock_naming_the_producer_that_finished() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    init(30_000, 5_000);
    let mut rig = quick();
    inject(1);
    let r = rig.run(Extra::None, &[]);
    let class = stuck(&r);
    let text = r.to_string();
    assert_eq!(class.kind, StallKind::DependencyDeadlock, "{text}");
    // The first task with a producer: block 0's add, whose first producer is a fill.
    let Some(Stall::Producers { task, left: 1 }) = class.entry else {
        panic!("not a task waiting for one producer: {text}")
    };
    let entry = r.stalls[..(r.nstalls as usize).min(r.stalls.len())]
        .iter()
        .find(|e| e.task == task.raw())
        .unwrap_or_else(|| panic!("{task} has no entry: {text}"));
    assert!(entry.producers_finished(), "{entry:?}: {text}");
    let producers: Vec<TaskId> = entry.producers().collect();
    assert!(
        !producers.is_empty() && producers.iter().all(|p| p.seq() < task.seq()),
        "{producers:?}: {text}"
    );
    assert!(
        text.contains(&format!(
            "stall class: dependency-deadlock: {task} waiting for 1 producer"
        )) && text.contains(&format!(
            "{} finished without releasing it",
            producers.last().unwrap()
        )),
        "{text}"
    );
    eprintln!("{text}");
    // The fault was the run's alone.
    init(30_000, 5_000);
    rig.good_run();
}

#[test]
fn a_lost_ready_entry_is_ready_but_idle_naming_the_task() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    init(30_000, 5_000);
    let mut rig = quick();
    inject(2);
    let r = rig.run(Extra::None, &[]);
    let class = stuck(&r);
    let text = r.to_string();
    // The first task ready at submit: block 0's first fill, an AIV task.
    let Some(Stall::Ready { task, class: kind }) = class.entry else {
        panic!("not a ready task: {text}")
    };
    assert_eq!(
        (class.kind, kind, task.seq().0),
        (StallKind::ReadyButIdle, WorkerClass::Aiv, 0),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "stall class: ready-but-idle: {task} ready (Aiv) but not dispatched"
        )) && text.contains(&format!("waiting for 1 producer: {task}")),
        "its consumer waits for it: {text}"
    );
    init(30_000, 5_000);
    rig.good_run();
}

#[test]
fn an_unknown_fault_is_refused() {
    let f = so().inject_fault.expect("exported");
    // SAFETY: the SO's entry point; arming nothing.
    assert_eq!(unsafe { f(3) }, 1);
}
