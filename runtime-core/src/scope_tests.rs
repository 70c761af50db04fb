//! Scopes against the scripted machine: a scope holds its tasks' slots until it ends, and a
//! window that only a scope's end could free is a clear error at once.

use crate::config::Config;
use crate::error::SubmitError;
use crate::platform::CorePhase;
use crate::scheduler::Step;
use crate::submit::MAX_SCOPE_DEPTH;
use crate::sync::Ordering;
use crate::test_rig::{Rig, aiv, one_aiv, steps};

fn retired(rig: &Rig) -> u64 {
    rig.tables().rings[0].retired.0.load(Ordering::Acquire)
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
    p.set(0, 2, CorePhase::Fin);
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
    o.submit(&crate::submit::TaskSpec::dummy()).unwrap(); // 0: outer
    let inner = o
        .scope(|o| o.submit(&crate::submit::TaskSpec::dummy()).unwrap()) // 1: inner
        .unwrap();
    assert_eq!(inner.seq().0, 1);
    o.submit(&crate::submit::TaskSpec::dummy()).unwrap(); // 2: outer
    steps(&mut s, 3);
    assert_eq!(rig.tables().finished(), 3);
    assert_eq!(retired(&rig), 0, "task 0 is still held by the outer scope");
    let slot1 = rig.tables().slot(1);
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
    let cfg = Config {
        submit_timeout_us: 1_000,
        ..Config::tiny()
    };
    let rig = Rig::new(cfg, 100);
    let mut o = rig.orchestrator();
    let mut s = rig.scheduler();
    o.scope_begin().unwrap();
    for _ in 0..4 {
        o.submit(&crate::submit::TaskSpec::dummy()).unwrap();
    }
    steps(&mut s, 3);
    let e = o.submit(&crate::submit::TaskSpec::dummy()).unwrap_err();
    assert_eq!(
        e,
        SubmitError::ScopeDeadlock {
            ring: 0,
            window: 4,
            open: 1
        }
    );
    assert!(std::format!("{e}").contains("end a scope sooner"));
    o.scope_end().unwrap();
    o.submit(&crate::submit::TaskSpec::dummy()).unwrap();
}

#[test]
fn dropping_the_orchestrator_ends_open_scopes() {
    let rig = Rig::new(Config::tiny(), 0);
    let mut o = rig.orchestrator();
    let mut s = rig.scheduler();
    o.scope_begin().unwrap();
    o.scope_begin().unwrap();
    o.submit(&crate::submit::TaskSpec::dummy()).unwrap();
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
