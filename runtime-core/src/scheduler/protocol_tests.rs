//! The completion protocol against the scripted machine: results that no later report can
//! erase, reports nobody asked for, tokens that do not repeat across runs, and back-pressure
//! from the deferred set that neither times out nor starves.

use std::vec::Vec;

use crate::condition::{Condition, Watch};
use crate::error::{FatalCause, FatalKind};
use crate::ids::{CoreId, KernelId, TaskId, Token, WorkerClass};
use crate::orchestrator::{Orchestrator, TaskSpec};
use crate::protocol::{RawCondition, ResultWord, StatusWord};
use crate::region::config::Config;
use crate::scheduler::{Scheduler, Step, WATCHDOG_EVERY};
use crate::testing::rig::{Rig, Script, a_then_b, aiv, one_aiv, steps, steps_until_failed};

fn tasks_rung(rig: &Rig) -> Vec<TaskId> {
    rig.p.rung().into_iter().map(|r| r.2).collect()
}

#[test]
fn a_kernel_error_followed_at_once_by_the_pending_fin_fails_the_run() {
    for ack in [false, true] {
        let rig = Rig::new(one_aiv(), 0);
        let (t, p) = (rig.tables(), &rig.p);
        let mut o = rig.orchestrator();
        let mut s = rig.scheduler();
        let a = o.submit(&aiv(&[])).unwrap();
        let b = o.submit(&aiv(&[])).unwrap();
        let c = o.submit(&aiv(&[a])).unwrap();
        s.step();
        assert_eq!(tasks_rung(&rig), [a, b], "B waits in the pending slot");
        p.fail(0, 1, 42);
        // The core moves on to B at once: its report overwrites A's before the scheduler looks.
        if ack {
            p.ack(0, 2);
        } else {
            p.fin(0, 2);
        }
        assert_eq!(s.step(), Step::Failed, "ack: {ack}");
        let e = t.shared().status().get().unwrap();
        assert_eq!(
            (e.cause, e.task, e.core),
            (
                FatalCause::KernelFailed { code: 42 },
                Some(a),
                Some(CoreId(0))
            )
        );
        assert!(!tasks_rung(&rig).contains(&c), "the consumer never ran");
        assert_eq!(t.finished(), 0);
    }
}

#[test]
fn a_report_past_a_token_without_its_result_is_a_protocol_error() {
    let rig = Rig::new(one_aiv(), 0);
    let (t, p, mut o, mut s) = rig.start();
    let a = o.submit(&aiv(&[])).unwrap();
    o.submit(&aiv(&[])).unwrap();
    s.step();
    p.set_result(0, 2, ResultWord::done(Token::new(2)));
    p.set_status(0, StatusWord::fin(Token::new(2))); // token 1's result never written
    assert_eq!(s.step(), Step::Failed);
    let e = t.shared().status().get().unwrap();
    assert_eq!(
        (e.cause, e.task),
        (FatalCause::MissingResult { token: 1, named: 0 }, Some(a))
    );
    assert!(std::format!("{e}").contains("without its result word"));
}

#[test]
fn a_report_from_an_idle_core_fails_the_run_naming_core_and_token() {
    let rig = Rig::new(Config::tiny(), 0);
    let (t, p) = (rig.tables(), &rig.p);
    let o = rig.orchestrator();
    let mut s = rig.scheduler();
    p.set_status(0, StatusWord::fin(Token::new(3)));
    assert_eq!(
        steps_until_failed(&mut s, WATCHDOG_EVERY as usize + 1),
        Step::Failed,
        "nothing was dispatched to core 0"
    );
    let e = t.shared().status().get().unwrap();
    assert_eq!(
        (e.kind(), e.task, e.core),
        (FatalKind::CoreProtocol, None, Some(CoreId(0)))
    );
    drop(o);
}

#[test]
fn a_fin_forged_before_dispatch_does_not_complete_the_task() {
    let rig = Rig::new(one_aiv(), 0);
    let (t, p, mut o, mut s) = rig.start();
    let a = o.submit(&aiv(&[])).unwrap();
    p.set_status(0, StatusWord::fin(Token::FIRST)); // before token 1 is rung
    s.step();
    assert_eq!(tasks_rung(&rig), [a]);
    assert_eq!(steps_until_failed(&mut s, 4), Step::Failed);
    assert_eq!(t.finished(), 0, "A never ran");
    let e = t.shared().status().get().unwrap();
    assert_eq!((e.kind(), e.task), (FatalKind::MissingResult, Some(a)));
}

#[test]
fn tokens_continue_after_the_last_report_of_an_earlier_run() {
    // The previous run left FIN(7) and its result in the core's words.
    let rig = Rig::new(one_aiv(), 0);
    let (t, p) = (rig.tables(), &rig.p);
    p.set_result(0, 7, ResultWord::done(Token::new(7)));
    p.set_status(0, StatusWord::fin(Token::new(7)));
    let mut o = rig.orchestrator();
    let mut s = rig.scheduler();
    let a = o.submit(&aiv(&[])).unwrap();
    drop(o);
    s.step();
    assert_eq!(
        p.rung(),
        [(CoreId(0), Token::new(8), a)],
        "never a token reported before"
    );
    steps(&mut s, WATCHDOG_EVERY as usize + 1);
    assert_eq!(t.finished(), 0, "the old FIN completes nothing");
    assert!(!t.shared().status().failed(), "and is no protocol error");
    p.fin(0, 8);
    assert_eq!(steps(&mut s, 2), Step::Done);
}

#[test]
fn an_unknown_condition_kind_is_a_bad_condition_not_a_fake_one() {
    let rig = Rig::new(one_aiv(), 0);
    let (t, p, mut o, mut s) = rig.start();
    let a = o.submit(&aiv(&[])).unwrap();
    let raw = RawCondition {
        kind: 9,
        word: 0x40,
        expected: 1,
        ..RawCondition::default()
    };
    p.defer_raw(0, 1, std::vec![raw]);
    s.step();
    p.fin(0, 1);
    assert_eq!(steps_until_failed(&mut s, 3), Step::Failed);
    let e = t.shared().status().get().unwrap();
    assert_eq!(
        (e.cause, e.task),
        (FatalCause::UnknownCondition { kind: 9 }, Some(a))
    );
    assert!(std::format!("{e}").contains("kind 9"), "{e}");
}

/// One AIV core and room for one unmet condition; the clock moves `tick` µs per read.
fn one_waiter(tick: u64, cfg: Config) -> Rig {
    Rig::new(
        Config {
            max_conditions: 1,
            deferred_capacity: 1,
            ..cfg
        },
        tick,
    )
}

const X: Watch = Watch::Counter32(0x100);
const Y: Watch = Watch::Counter32(0x200);

/// Core 0's tokens 1 and 2 defer on X and on Y, neither set yet.
fn defer_on_x_then_y(p: &Script) {
    p.defer(0, 1, &[Condition::counter32(0x100, 1)]);
    p.defer(0, 2, &[Condition::counter32(0x200, 1)]);
    p.word(X, 0);
    p.word(Y, 0);
}

/// Submits A and B to core 0 and lets both finish: A enters the one-entry set (waiting for
/// X) and B's lane is held for room (waiting for Y).
fn a_waits_and_b_is_held(
    o: Orchestrator<'_, '_, Script>,
    p: &Script,
    s: &mut Scheduler<'_, '_, Script>,
) {
    let mut o = o;
    o.submit(&aiv(&[])).unwrap();
    o.submit(&aiv(&[])).unwrap();
    drop(o);
    defer_on_x_then_y(p);
    s.step();
    p.fin(0, 2);
}

#[test]
fn a_lane_held_for_deferred_room_is_not_timed_as_running() {
    let rig = one_waiter(
        100,
        Config {
            task_timeout_us: 1_000,
            ..one_aiv()
        },
    );
    let (t, p, o, mut s) = rig.start();
    a_waits_and_b_is_held(o, p, &mut s);
    // Two watchdog passes (the first starts timing, the second compares), 100 µs a clock
    // read: well past the task timeout.
    steps(&mut s, 2 * WATCHDOG_EVERY as usize + 1);
    assert!(
        !t.shared().status().failed(),
        "{:?}",
        t.shared().status().get()
    );
    assert_eq!(t.finished(), 0);
    p.word(X, 1);
    p.word(Y, 1);
    assert_eq!(steps(&mut s, 8), Step::Done);
    assert_eq!(t.finished(), 2);
}

#[test]
fn a_set_that_cannot_drain_fails_naming_the_knob_not_a_lost_transfer() {
    // One core: A waits in the set for X, B waits for room (for Y), C sits in the pending
    // slot, and D, which would set X, finds no slot free. The set cannot drain.
    let rig = one_waiter(
        500,
        Config {
            deferred_timeout_us: 2_000,
            ..one_aiv()
        },
    );
    let (t, p, mut o, mut s) = rig.start();
    for _ in 0..4 {
        o.submit(&aiv(&[])).unwrap();
    }
    drop(o);
    defer_on_x_then_y(p);
    s.step();
    p.fin(0, 1);
    s.step();
    p.fin(0, 3);
    assert_eq!(steps_until_failed(&mut s, 200_000), Step::Failed);
    let e = t.shared().status().get().unwrap();
    assert_eq!(
        (e.kind(), e.core),
        (FatalKind::DeferredFull, Some(CoreId(0)))
    );
    assert!(
        std::format!("{e}").contains("raise `deferred_capacity`"),
        "{e}"
    );
}

#[test]
fn mix_priority_does_not_hold_back_a_cluster_only_the_deferred_set_can_drain() {
    // One cluster: two AIV tasks wait on X and Y (the second for room), a MIX task waits for
    // the cluster, and the AIC task behind it is the one that sets X and Y.
    let rig = one_waiter(0, Config::tiny());
    let (t, p, mut o, mut s) = rig.start();
    let a = o.submit(&aiv(&[])).unwrap();
    let b = o.submit(&aiv(&[])).unwrap();
    p.defer(1, 1, &[Condition::counter32(0x100, 1)]);
    p.defer(2, 1, &[Condition::counter32(0x200, 1)]);
    p.word(X, 0);
    p.word(Y, 0);
    s.step();
    assert_eq!(tasks_rung(&rig), [a, b]);
    p.fin(1, 1);
    p.fin(2, 1);
    steps(&mut s, 2); // A enters the set, B is held
    let m = o
        .submit(&TaskSpec::new(KernelId(0), WorkerClass::Mix))
        .unwrap();
    let setter = o
        .submit(&TaskSpec::new(KernelId(0), WorkerClass::Aic))
        .unwrap();
    drop(o);
    steps(&mut s, 2);
    assert_eq!(
        tasks_rung(&rig),
        [setter],
        "the setter gets the held cluster's AIC"
    );
    p.word(X, 1);
    p.word(Y, 1);
    p.fin(0, 1);
    steps(&mut s, 4);
    assert_eq!(
        tasks_rung(&rig),
        [m, m, m],
        "then the cluster drains and MIX starts"
    );
    for core in 0..3 {
        p.fin(core, 2);
    }
    assert_eq!(steps(&mut s, 4), Step::Done);
    assert_eq!(t.finished(), 4);
}

#[test]
fn a_held_lane_whose_conditions_came_to_hold_completes_without_room() {
    // A stays in the set (X never lands in this test); B is held for room, then its own
    // word lands: B needs no room any more and completes, with nothing closing meanwhile.
    let rig = one_waiter(0, one_aiv());
    let (t, p, o, mut s) = rig.start();
    a_waits_and_b_is_held(o, p, &mut s);
    steps(&mut s, 8);
    assert_eq!(t.finished(), 0);
    p.word(Y, 1);
    steps(&mut s, 2 * crate::scheduler::DEADLINES_EVERY as usize);
    assert_eq!(t.finished(), 1, "B completed while A still waits");
    assert!(!t.shared().status().failed());
}

#[test]
fn in_ring_mode_a_core_is_read_when_its_record_comes_and_only_then() {
    use crate::region::config::CompletionMode;
    let rig = Rig::new(
        Config {
            completion: CompletionMode::Ring,
            ..one_aiv()
        },
        0,
    );
    let (t, p, o, mut s) = rig.start();
    let (a, b) = a_then_b(o);
    s.step();
    p.fin(0, 1);
    steps(&mut s, 8);
    assert_eq!(
        t.finished(),
        0,
        "no record yet: the status word is not polled"
    );
    p.post(0, 1);
    s.step();
    assert_eq!(t.finished(), 1, "the record names core 0: its FIN is read");
    s.step();
    assert_eq!(
        p.rung(),
        [(CoreId(0), Token::new(1), a), (CoreId(0), Token::new(2), b)]
    );
    p.fin(0, 2);
    p.post(0, 2);
    assert_eq!(steps(&mut s, 3), Step::Done);
}

#[test]
fn in_ring_mode_a_record_from_a_core_of_no_scheduler_is_a_protocol_error() {
    use crate::region::config::CompletionMode;
    let rig = Rig::new(
        Config {
            completion: CompletionMode::Ring,
            ..one_aiv()
        },
        0,
    );
    let (t, p) = (rig.tables(), &rig.p);
    let o = rig.orchestrator();
    let mut s = rig.scheduler();
    p.post(7, 1);
    assert_eq!(s.step(), Step::Failed);
    let e = t.shared().status().get().unwrap();
    assert_eq!(e.cause, FatalCause::StrayCompletion { source: 7, id: 1 });
    drop(o);
}
