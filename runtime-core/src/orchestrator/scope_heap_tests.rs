//! Scopes and the output heap against the scripted machine: a scope holds its tasks' slots
//! until it ends, output buffers return with their tasks, and a window or heap that only a
//! scope's end could free is a clear error at once.

use crate::error::SubmitError;
use crate::orchestrator::MAX_SCOPE_DEPTH;
use crate::region::config::Config;
use crate::scheduler::Step;
use crate::sync::Ordering;
use crate::tables::SlotIndex;
use crate::testing::rig::{Rig, aiv, one_aiv, steps};

/// A tiny machine (4 slots, a 256-byte heap at 0x10_0000) whose clock moves 100 µs a read, so
/// a submit or an allocation that must wait gives up after 1 ms.
fn impatient_rig() -> Rig {
    let cfg = Config {
        submit_timeout_us: 1_000,
        ..Config::tiny()
    };
    Rig::new(cfg, 100)
}

fn retired(rig: &Rig) -> u64 {
    rig.tables().rings()[0].retired.0.load(Ordering::Acquire)
}

#[test]
fn a_scope_keeps_its_finished_tasks_until_it_ends() {
    let rig = Rig::new(one_aiv(), 0);
    let p = &rig.p;
    let mut o = rig.orchestrator();
    let mut s = rig.scheduler();
    o.scope_begin().unwrap();
    o.submit(&aiv(&[])).unwrap();
    o.submit(&aiv(&[])).unwrap();
    s.step();
    p.fin(0, 2);
    steps(&mut s, 3);
    assert_eq!(rig.tables().finished(), 2);
    assert_eq!(retired(&rig), 0, "finished, but the scope holds them");
    o.scope_end().unwrap();
    assert_eq!(retired(&rig), 2);
    drop(o);
    assert_eq!(s.step(), Step::Done);
}

#[test]
fn nested_scopes_release_their_own_tasks() {
    let rig = Rig::new(Config::tiny(), 0);
    let mut o = rig.orchestrator();
    let mut s = rig.scheduler();
    o.scope_begin().unwrap();
    o.submit(&crate::orchestrator::TaskSpec::dummy()).unwrap(); // 0: outer
    let inner = o
        .scope(|o| o.submit(&crate::orchestrator::TaskSpec::dummy()).unwrap()) // 1: inner
        .unwrap();
    assert_eq!(inner.seq().0, 1);
    o.submit(&crate::orchestrator::TaskSpec::dummy()).unwrap(); // 2: outer
    steps(&mut s, 3);
    assert_eq!(rig.tables().finished(), 3);
    assert_eq!(retired(&rig), 0, "task 0 is still held by the outer scope");
    let slot1 = rig.tables().slot(SlotIndex::at(1));
    assert_eq!(
        slot1.holds.load(Ordering::Acquire),
        0,
        "the inner scope let task 1 go"
    );
    o.scope_end().unwrap();
    assert_eq!(retired(&rig), 3);
    assert_eq!(o.scope_end(), Err(SubmitError::NoOpenScope));
}

#[test]
fn a_window_full_of_scoped_tasks_is_a_deadlock_error_at_once() {
    // 4 slots; without the check, the wait would end in WindowFull after 1 ms.
    let rig = impatient_rig();
    let mut o = rig.orchestrator();
    let mut s = rig.scheduler();
    o.scope_begin().unwrap();
    let first = o.submit(&crate::orchestrator::TaskSpec::dummy()).unwrap();
    for _ in 1..4 {
        o.submit(&crate::orchestrator::TaskSpec::dummy()).unwrap();
    }
    steps(&mut s, 3);
    let e = o
        .submit(&crate::orchestrator::TaskSpec::dummy())
        .unwrap_err();
    assert_eq!(
        e,
        SubmitError::ScopeDeadlock {
            held: first,
            ring: 0,
            window: 4,
            open: 1
        }
    );
    assert!(std::format!("{e}").contains("end a scope sooner"));
    o.scope_end().unwrap();
    o.submit(&crate::orchestrator::TaskSpec::dummy()).unwrap();
}

#[test]
fn dropping_the_orchestrator_ends_open_scopes() {
    let rig = Rig::new(Config::tiny(), 0);
    let mut o = rig.orchestrator();
    let mut s = rig.scheduler();
    o.scope_begin().unwrap();
    o.scope_begin().unwrap();
    o.submit(&crate::orchestrator::TaskSpec::dummy()).unwrap();
    drop(o);
    assert_eq!(steps(&mut s, 3), Step::Done);
    assert_eq!(retired(&rig), 1);
}

#[test]
fn scopes_nest_to_a_limit() {
    let rig = Rig::new(Config::tiny(), 0);
    let mut o = rig.orchestrator();
    for _ in 0..MAX_SCOPE_DEPTH {
        o.scope_begin().unwrap();
    }
    assert_eq!(
        o.scope_begin(),
        Err(SubmitError::ScopeTooDeep {
            max: MAX_SCOPE_DEPTH
        })
    );
}

#[test]
fn output_buffers_come_from_the_heap_and_return_with_their_tasks() {
    let rig = impatient_rig(); // a 256-byte heap at 0x10_0000
    let mut o = rig.orchestrator();
    let mut s = rig.scheduler();
    let a = o.alloc(0, 100, 64).unwrap();
    assert_eq!(a, 0x10_0000);
    o.submit(&crate::orchestrator::TaskSpec::dummy()).unwrap();
    let b = o.alloc(0, 100, 64).unwrap();
    assert_eq!(b, 0x10_0000 + 128, "aligned to 64");
    // 100 more bytes need the first task's buffer back: it has not run yet.
    assert!(matches!(
        o.alloc(0, 100, 64),
        Err(SubmitError::HeapFull { ring: 0, .. })
    ));
    o.submit(&crate::orchestrator::TaskSpec::dummy()).unwrap();
    steps(&mut s, 2); // both DUMMY tasks finish and retire
    let c = o.alloc(0, 100, 64).unwrap();
    assert_eq!(c, 0x10_0000, "wrapped to the start of the heap");
    assert_eq!(
        o.alloc(0, 300, 1),
        Err(SubmitError::HeapTooSmall {
            bytes: 300,
            heap: 256
        })
    );
    assert_eq!(
        o.alloc(0, 8, 3),
        Err(SubmitError::BadAlignment { align: 3 })
    );
}

#[test]
fn a_heap_only_a_scope_could_free_is_a_deadlock_error_at_once() {
    let rig = impatient_rig();
    let mut o = rig.orchestrator();
    let mut s = rig.scheduler();
    o.scope_begin().unwrap();
    o.alloc(0, 200, 8).unwrap();
    let owner = o.submit(&crate::orchestrator::TaskSpec::dummy()).unwrap();
    steps(&mut s, 2);
    assert_eq!(
        o.alloc(0, 100, 8),
        Err(SubmitError::ScopeDeadlock {
            held: owner,
            ring: 0,
            window: 4,
            open: 1
        })
    );
    o.scope_end().unwrap();
    assert!(o.alloc(0, 100, 8).is_ok());
}

#[test]
fn heap_shares_give_a_ring_what_its_weight_says() {
    // The rig's 256-byte heap over two rings: evenly, 128 bytes each; weighted 3 to 1,
    // 192 and 64; `[1, 0]`, all to ring 0 and none to ring 1. A ring's size is what a
    // request too large for it reports.
    let sizes = |shares: [u16; 4]| {
        let cfg = Config {
            rings: 2,
            heap_shares: shares,
            ..Config::tiny()
        };
        let rig = Rig::new(cfg, 100);
        let mut o = rig.orchestrator();
        [0, 1].map(|ring| match o.alloc(ring, 1 << 20, 1) {
            Err(SubmitError::HeapTooSmall { heap, .. }) => heap,
            other => panic!("{other:?}"),
        })
    };
    assert_eq!(sizes([0; 4]), [128, 128]);
    assert_eq!(sizes([3, 1, 0, 0]), [192, 64]);
    assert_eq!(sizes([1, 0, 0, 0]), [256, 0]);
    assert_eq!(
        sizes([0, 0, 9, 9]),
        [128, 128],
        "rings past `rings` do not count"
    );
}
