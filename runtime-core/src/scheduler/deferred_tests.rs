//! Deferred completion in the scheduler, against the scripted machine: the test registers
//! conditions for a token and moves the watched words.

use crate::condition::{Condition, Watch};
use crate::error::FatalCause;
use crate::ids::{CoreId, Token};
use crate::region::config::Config;
use crate::scheduler::{DEADLINES_EVERY, Step};
use crate::testing::rig::{Rig, a_then_b, aiv, one_aiv, steps, steps_until_failed};

const C: Watch = Watch::Counter32(0x1000);

#[test]
fn a_deferred_task_holds_its_consumer_until_the_counter_lands() {
    let rig = Rig::new(one_aiv(), 0);
    let (t, p, o, mut s) = rig.start();
    let (a, b) = a_then_b(o);
    p.defer(0, 1, &[Condition::counter32(0x1000, 2)]);
    p.word(C, 0);
    s.step();
    assert_eq!(p.rung(), [(CoreId(0), Token::new(1), a)]);
    p.fin(0, 1);
    steps(&mut s, 4);
    p.word(C, 1);
    steps(&mut s, 4);
    assert_eq!(t.finished(), 0, "A waits for its counter");
    assert!(p.rung().is_empty(), "B must not run before A's data landed");
    assert!(p.invalidated.lock().unwrap().contains(&0x1000));
    p.word(C, 2);
    s.step();
    assert_eq!(t.finished(), 1);
    s.step();
    assert_eq!(p.rung(), [(CoreId(0), Token::new(2), b)]);
    p.fin(0, 2);
    assert_eq!(steps(&mut s, 3), Step::Done);
}

#[test]
fn conditions_that_hold_at_fin_complete_the_task_at_once() {
    let rig = Rig::new(one_aiv(), 0);
    let (t, p, mut o, mut s) = rig.start();
    o.submit(&aiv(&[])).unwrap();
    drop(o);
    p.defer(
        0,
        1,
        &[Condition::counter64(0x8, 1), Condition::engine(0, 3)],
    );
    p.word(Watch::Counter64(0x8), 5);
    p.word(Watch::Engine(0), 3);
    s.step();
    p.fin(0, 1);
    s.step();
    assert_eq!(t.finished(), 1);
    assert_eq!(s.step(), Step::Done);
}

#[test]
fn a_full_deferred_set_holds_fins_until_room_frees_up() {
    // Room for 4 waiting conditions: the first task takes all of them.
    let cfg = Config {
        deferred_capacity: 4,
        ..one_aiv()
    };
    let rig = Rig::new(cfg, 0);
    let (t, p, mut o, mut s) = rig.start();
    o.submit(&aiv(&[])).unwrap();
    o.submit(&aiv(&[])).unwrap();
    drop(o);
    let four: [Condition; 4] = core::array::from_fn(|i| Condition::counter64(8 * i as u64, 1));
    p.defer(0, 1, &four);
    p.defer(0, 2, &[Condition::counter32(0x1000, 1)]);
    for c in &four {
        p.word(c.watch, 0);
    }
    p.word(C, 0);
    s.step();
    p.fin(0, 2); // both tokens finished
    steps(&mut s, 8);
    assert_eq!(
        t.finished(),
        0,
        "the second FIN waits for room, it is not dropped"
    );
    for c in &four {
        p.word(c.watch, 1);
    }
    steps(&mut s, 8);
    assert_eq!(
        t.finished(),
        1,
        "the first task left room for the second's condition"
    );
    p.word(C, 1);
    steps(&mut s, 8);
    assert_eq!(t.finished(), 2);
    assert_eq!(s.step(), Step::Done);
}

#[test]
fn a_condition_that_never_holds_fails_the_run_naming_task_word_and_values() {
    let cfg = Config {
        deferred_timeout_us: 1_000,
        ..one_aiv()
    };
    let rig = Rig::new(cfg, 400); // 400 µs per clock read
    let (t, p, o, mut s) = rig.start();
    let (a, b) = a_then_b(o);
    p.defer(0, 1, &[Condition::counter32(0x1000, 4)]);
    p.word(C, 3);
    s.step();
    p.fin(0, 1);
    assert_eq!(
        steps_until_failed(&mut s, DEADLINES_EVERY as usize * 8),
        Step::Failed
    );
    let e = t.shared().status().get().unwrap();
    assert_eq!(
        (e.cause, e.task),
        (
            FatalCause::DeferredTimeout {
                watch: C,
                expected: 4,
                last: 3
            },
            Some(a)
        )
    );
    assert!(p.rung().iter().all(|r| r.2 != b), "the consumer never ran");
    let msg = std::format!("{e}");
    assert!(msg.contains("32-bit counter at 0x1000") && msg.contains("reach 4"));
    assert!(msg.contains("last value read: 3"), "{msg}");
}

#[test]
fn one_condition_too_many_fails_the_run_with_a_typed_error() {
    let rig = Rig::new(one_aiv(), 0);
    let (t, p, mut o, mut s) = rig.start();
    let a = o.submit(&aiv(&[])).unwrap();
    drop(o);
    let max = t.cfg().max_conditions as u64;
    let too_many: std::vec::Vec<_> = (0..=max).map(|i| Condition::counter64(8 * i, 1)).collect();
    p.defer(0, 1, &too_many);
    s.step();
    p.fin(0, 1);
    assert_eq!(steps(&mut s, 2), Step::Failed);
    let e = t.shared().status().get().unwrap();
    assert_eq!(
        (e.cause, e.task),
        (
            FatalCause::TooManyConditions {
                registered: max as u32 + 1,
                limit: max as u32
            },
            Some(a)
        )
    );
    assert!(std::format!("{e}").contains("raise `max_conditions`"));
}

#[test]
fn a_word_the_platform_cannot_read_is_a_bad_condition() {
    let rig = Rig::new(one_aiv(), 0);
    let (t, p, mut o, mut s) = rig.start();
    let a = o.submit(&aiv(&[])).unwrap();
    drop(o);
    p.defer(0, 1, &[Condition::engine(7, 1)]); // engine 7 does not exist
    s.step();
    p.fin(0, 1);
    assert_eq!(steps(&mut s, 2), Step::Failed);
    let e = t.shared().status().get().unwrap();
    assert_eq!(
        (e.cause, e.task, e.core),
        (
            FatalCause::BadCondition {
                watch: Some(Watch::Engine(7))
            },
            Some(a),
            Some(CoreId(0)),
        )
    );
}

#[test]
fn mix_lanes_add_their_conditions_and_the_task_waits_for_all() {
    let rig = Rig::new(Config::tiny(), 0);
    let (t, p, mut o, mut s) = rig.start();
    o.submit(&crate::orchestrator::TaskSpec::new(
        crate::ids::KernelId(0),
        crate::ids::WorkerClass::Mix,
    ))
    .unwrap();
    drop(o);
    // Lanes 0 (AIC, core 0) and 2 (core 2) each register one condition.
    p.defer(0, 1, &[Condition::counter64(0x10, 1)]);
    p.defer(2, 1, &[Condition::counter64(0x18, 1)]);
    p.word(Watch::Counter64(0x10), 0);
    p.word(Watch::Counter64(0x18), 0);
    s.step();
    for core in 0..3 {
        p.fin(core, 1);
    }
    steps(&mut s, 4);
    p.word(Watch::Counter64(0x10), 1);
    steps(&mut s, 4);
    assert_eq!(t.finished(), 0, "lane 2's condition still waits");
    p.word(Watch::Counter64(0x18), 1);
    steps(&mut s, 2);
    assert_eq!(t.finished(), 1);
}

#[test]
fn an_error_entry_cancels_its_task_and_consumer_in_the_loop_that_drains_it() {
    let rig = Rig::new(one_aiv(), 0);
    let (t, p, mut o, mut s) = rig.start();
    let a = o.submit(&aiv(&[])).unwrap();
    let b = o.submit(&aiv(&[a])).unwrap();
    let c = o.submit(&aiv(&[])).unwrap();
    drop(o);
    p.defer(0, 1, &[Condition::entry(0, 5)]);
    s.step();
    let rung = [(CoreId(0), Token::new(1), a), (CoreId(0), Token::new(2), c)];
    assert_eq!(p.rung(), rung, "A, and C pending behind it");
    p.fin(0, 1);
    steps(&mut s, 4);
    assert_eq!(t.finished(), 0, "A waits for its entry");
    p.entry(4, 0);
    p.entry(5, crate::transfer_status::REMOTE_ACCESS);
    s.step();
    let e = t
        .shared()
        .task_failure()
        .get()
        .expect("recorded in that loop");
    assert_eq!(
        (e.cause, e.task),
        (
            FatalCause::TransferFailed {
                watch: Watch::Queue(0),
                post: 5,
                status: 1
            },
            Some(a)
        )
    );
    assert_eq!(
        t.finished(),
        2,
        "A, and B without running, in that same loop"
    );
    assert!(!t.shared().status().failed(), "the run goes on");
    p.fin(0, 2);
    assert_eq!(steps_until_failed(&mut s, 8), Step::Failed, "then ends");
    assert!(p.rung().is_empty(), "B never reached a core");
    assert_eq!(t.finished(), 3);
    assert_eq!(t.shared().status().get(), Some(e));
    assert_eq!(
        t.sched()[0].cancelled.load(crate::sync::Ordering::Relaxed),
        2
    );
    let _ = b;
}

#[test]
fn an_error_entry_drained_before_the_fin_cancels_the_task_at_its_fin() {
    let rig = Rig::new(one_aiv(), 0);
    let (t, p, o, mut s) = rig.start();
    let (a, _) = a_then_b(o);
    p.defer(
        0,
        1,
        &[Condition::entry(0, 1), Condition::counter32(0x1000, 1)],
    );
    p.word(C, 1);
    s.step();
    assert_eq!(p.rung(), [(CoreId(0), Token::new(1), a)]);
    p.entry(1, crate::transfer_status::LOST);
    // With nothing deferred, engine queues are drained every DEADLINES_EVERY loops.
    steps(&mut s, DEADLINES_EVERY as usize);
    assert!(
        t.shared().task_failure().get().is_none(),
        "no task named yet"
    );
    p.fin(0, 1);
    s.step();
    let e = t.shared().task_failure().get().expect("named at the FIN");
    assert!(
        matches!(
            e.cause,
            FatalCause::TransferFailed {
                post: 1,
                status: 2,
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(e.task, Some(a));
    assert_eq!(t.finished(), 2);
    assert_eq!(steps_until_failed(&mut s, 4), Step::Failed);
    assert!(p.rung().is_empty(), "the consumer never ran");
}

#[test]
fn a_queue_condition_on_an_engine_without_a_queue_is_a_bad_condition() {
    let rig = Rig::new(one_aiv(), 0);
    let (t, p, mut o, mut s) = rig.start();
    let a = o.submit(&aiv(&[])).unwrap();
    drop(o);
    p.defer(0, 1, &[Condition::entry(3, 1)]);
    s.step();
    p.fin(0, 1);
    assert_eq!(steps_until_failed(&mut s, 4), Step::Failed);
    let e = t.shared().status().get().unwrap();
    assert_eq!(
        (e.cause, e.task),
        (
            FatalCause::BadCondition {
                watch: Some(Watch::Queue(3))
            },
            Some(a)
        )
    );
}
