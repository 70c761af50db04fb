//! The scheduler against a scripted platform: the test plays every core, step by step.

use std::vec::Vec;

use crate::error::{FatalCause, FatalKind, SubmitError};
use crate::ids::{CoreId, KernelId, Seq, TaskId, Token, WorkerClass};
use crate::orchestrator::TaskSpec;
use crate::region::config::Config;
use crate::scheduler::{Step, WATCHDOG_EVERY};
use crate::testing::rig::{Rig, a_then_b, aiv, one_aiv, steps, steps_until_failed};

#[test]
fn a_duplicated_or_stale_fin_completes_nothing_twice() {
    let rig = Rig::new(Config::tiny(), 0);
    let (t, p, mut o, mut s) = rig.start();
    let a = o.submit(&aiv(&[])).unwrap();
    let b = o.submit(&aiv(&[a])).unwrap();
    s.step();
    assert_eq!(
        p.rung(),
        [(CoreId(1), Token::new(1), a)],
        "A goes to the first AIV core"
    );
    p.fin(1, 1);
    s.step();
    assert_eq!(
        p.rung(),
        [(CoreId(1), Token::new(2), b)],
        "B follows once A finished"
    );
    assert_eq!(t.finished(), 1);
    steps(&mut s, 5); // FIN(1) is still in the status word
    assert_eq!(t.finished(), 1, "the old FIN is not counted again");
    p.fin(1, 2);
    steps(&mut s, 5);
    assert_eq!(t.finished(), 2);
    drop(o);
    assert_eq!(s.step(), Step::Done);
}

#[test]
fn a_consumer_released_by_a_fin_goes_to_the_idle_core_without_the_queue() {
    let rig = Rig::new(Config::tiny(), 0);
    let (t, p, o, mut s) = rig.start();
    let (_, b) = a_then_b(o);
    let queue = *t.queue(WorkerClass::Aiv);
    s.step();
    assert_eq!(queue.pushed(), 1, "A was queued by the orchestrator");
    p.fin(1, 1);
    s.step();
    assert_eq!(p.rung()[1..], [(CoreId(1), Token::new(2), b)]);
    assert_eq!(
        queue.pushed(),
        1,
        "B was handed from the funnel to the core"
    );
    p.fin(1, 2);
    assert_eq!(steps(&mut s, 3), Step::Done);
}

#[test]
fn a_consumer_released_by_a_fin_does_not_overtake_a_queued_task() {
    let rig = Rig::new(one_aiv(), 0);
    let (t, p, mut o, mut s) = rig.start();
    let a = o.submit(&aiv(&[])).unwrap();
    s.step();
    let b = o.submit(&aiv(&[a])).unwrap();
    let w = o.submit(&aiv(&[])).unwrap();
    p.fin(0, 1);
    s.step();
    // W was waiting in the queue when A's FIN released B: W runs first, B after it.
    assert_eq!(
        p.rung()[1..],
        [(CoreId(0), Token::new(2), w), (CoreId(0), Token::new(3), b)]
    );
    assert_eq!(
        t.queue(WorkerClass::Aiv).pushed(),
        3,
        "B was queued behind W"
    );
    drop(o);
    p.fin(0, 3);
    assert_eq!(steps(&mut s, 3), Step::Done);
}

#[test]
fn a_consumer_released_by_a_fin_leaves_a_waiting_mix_task_its_cluster() {
    let rig = Rig::new(Config::tiny(), 0);
    let (t, p, mut o, mut s) = rig.start();
    let a = o.submit(&aiv(&[])).unwrap();
    let x = o.submit(&aiv(&[])).unwrap();
    s.step();
    let m = o
        .submit(&TaskSpec::new(KernelId(0), WorkerClass::Mix))
        .unwrap();
    let b = o.submit(&aiv(&[a])).unwrap();
    drop(o);
    let tasks = |r: Vec<(CoreId, Token, TaskId)>| r.iter().map(|r| r.2).collect::<Vec<_>>();
    assert_eq!(tasks(p.rung()), [a, x]);
    p.fin(1, 1);
    s.step();
    assert_eq!(
        tasks(p.rung()),
        [],
        "B waits while the cluster drains for M"
    );
    p.fin(2, 1);
    s.step();
    assert_eq!(
        tasks(p.rung()),
        [m, m, m, b],
        "then M, and B in a pending slot"
    );
    p.fin(0, 1);
    p.fin(1, 3);
    p.fin(2, 2);
    assert_eq!(steps(&mut s, 3), Step::Done);
    assert_eq!(t.finished(), 4);
}

#[test]
fn fin_of_the_pending_token_completes_both_lanes() {
    let rig = Rig::new(one_aiv(), 0);
    let (t, p, mut o, mut s) = rig.start();
    o.submit(&aiv(&[])).unwrap();
    o.submit(&aiv(&[])).unwrap();
    s.step();
    assert_eq!(p.rung().len(), 2, "running and pending slot both filled");
    p.fin(0, 2); // FIN(1) was overwritten before the scheduler looked
    s.step();
    assert_eq!(t.finished(), 2);
}

#[test]
fn a_token_never_dispatched_is_a_protocol_error() {
    let rig = Rig::new(Config::tiny(), 0);
    let (t, p, mut o, mut s) = rig.start();
    let a = o.submit(&aiv(&[])).unwrap();
    s.step();
    p.fin(1, 9);
    assert_eq!(s.step(), Step::Failed);
    let e = t.shared().status().get().unwrap();
    assert_eq!(
        (e.cause, e.task, e.core),
        (
            FatalCause::CoreProtocol { seen: 9, newest: 1 },
            Some(a),
            Some(CoreId(1))
        )
    );
    assert!(
        matches!(o.submit(&aiv(&[])), Err(SubmitError::RunFailed(_))),
        "submit stops too"
    );
}

#[test]
fn a_kernel_error_fails_the_run_naming_task_and_core() {
    let rig = Rig::new(Config::tiny(), 0);
    let (t, p, mut o, mut s) = rig.start();
    let a = o
        .submit(&TaskSpec::new(KernelId(1), WorkerClass::Aic))
        .unwrap();
    let b = o.submit(&aiv(&[a])).unwrap();
    s.step();
    p.fail(0, 1, 42);
    assert_eq!(s.step(), Step::Failed);
    let e = t.shared().status().get().unwrap();
    assert_eq!(
        (e.cause, e.task, e.core),
        (
            FatalCause::KernelFailed { code: 42 },
            Some(a),
            Some(CoreId(0))
        )
    );
    assert!(p.rung().iter().all(|r| r.2 != b), "the consumer never ran");
    assert!(std::format!("{e}").contains("error code 42"));
}

#[test]
fn a_task_that_never_finishes_times_out() {
    let rig = Rig::new(
        Config {
            task_timeout_us: 1_000,
            ..Config::tiny()
        },
        600,
    ); // 600 µs per clock read
    let t = rig.tables();
    let mut o = rig.orchestrator();
    let mut s = rig.scheduler();
    let a = o.submit(&aiv(&[])).unwrap();
    assert_eq!(
        steps_until_failed(&mut s, WATCHDOG_EVERY as usize * 4),
        Step::Failed
    );
    let e = t.shared().status().get().unwrap();
    assert_eq!(
        (e.kind(), e.task, e.core),
        (FatalKind::TaskTimeout, Some(a), Some(CoreId(1)))
    );
    assert!(matches!(e.cause, FatalCause::TaskTimeout { waited_us } if waited_us > 1_000));
}

#[test]
fn a_full_window_pushes_back_then_times_out_leaving_nothing() {
    let rig = Rig::new(
        Config {
            submit_timeout_us: 500,
            ..Config::tiny()
        },
        1,
    );
    let p = &rig.p;
    let mut o = rig.orchestrator();
    for _ in 0..4 {
        o.submit(&aiv(&[])).unwrap();
    }
    let e = o.submit(&aiv(&[])).unwrap_err();
    assert!(
        matches!(e, SubmitError::WindowFull { ring: 0, window: 4, waited_us } if waited_us > 500),
        "{e:?}"
    );
    assert_eq!(o.submitted(), 4, "the refused task left nothing behind");
    // Once the scheduler reclaims, the same submit goes through.
    let mut s = rig.scheduler();
    s.step();
    p.fin(1, 1);
    s.step();
    o.submit(&aiv(&[])).unwrap();
}

#[test]
fn bad_submissions_are_typed_errors_that_say_what_to_change() {
    let rig = Rig::new(
        Config {
            aic_cores: 0,
            aiv_cores: 2,
            epoch: 7,
            ..Config::tiny()
        },
        1,
    );
    let mut o = rig.orchestrator();
    o.submit(&aiv(&[])).unwrap();
    let stale = TaskId::new(6, 0, Seq(0));
    let foreign = TaskId::new(7, 3, Seq(0));
    let future = TaskId::new(7, 0, Seq(5));
    // Nine distinct ids (duplicates would count once): refused before they are looked up.
    let nine: [TaskId; 9] = core::array::from_fn(|k| TaskId::new(7, 0, Seq(k as u64)));
    let cases: [(TaskSpec<'_>, &str); 9] = [
        (aiv(core::slice::from_ref(&stale)), "epoch 6"),
        (aiv(core::slice::from_ref(&foreign)), "names ring 3"),
        (aiv(core::slice::from_ref(&future)), "never submitted"),
        (aiv(&nine), "exceed the 8 a task may have: raise `max_deps`"),
        (
            aiv(&[]).args(&[0; 5]),
            "exceed the 4 a task may have: raise `max_args`",
        ),
        (
            TaskSpec::new(KernelId(99), WorkerClass::Aiv),
            "kernel 99 is not registered",
        ),
        (
            TaskSpec::new(KernelId(0), WorkerClass::Aic),
            "no core can run a Aic task",
        ),
        (TaskSpec::new(KernelId(0), WorkerClass::Mix), "MIX"),
        (aiv(&[]).ring(1), "ring 1 does not exist"),
    ];
    for (spec, says) in cases {
        let e = o.submit(&spec).unwrap_err();
        let msg = std::format!("{e}");
        assert!(msg.contains(says), "{msg:?} should say {says:?}");
    }
    assert_eq!(o.submitted(), 1, "no refused task was kept");
}

#[test]
fn a_task_refused_for_its_tensors_leaves_the_map_as_it_was() {
    use crate::orchestrator::tensor_map::TensorArg;
    use crate::region::slot::Meta;
    use crate::sync::Ordering;
    use crate::tensor::tile::Tile;
    let key = |base| crate::tensor::arg::Buffer::new(base, 0x1000);
    let rig = Rig::new(
        Config {
            task_window: 8,
            max_deps: 2,
            ..Config::tiny()
        },
        0,
    );
    let mut o = rig.orchestrator();
    let row = |r: u64| Tile::contiguous(0x1000 + r * 64, 4, 16);
    for r in 0..3 {
        o.submit(&aiv(&[]).tensors(&[TensorArg::output(key(0x1000), row(r))]))
            .unwrap();
    }
    // Three writers to wait for, two allowed: refused after two of its arguments went in.
    let all = [0, 1, 2].map(|r| TensorArg::input(key(0x1000), row(r)));
    let e = o.submit(&aiv(&[]).tensors(&all)).unwrap_err();
    assert!(
        std::format!("{e}").contains("exceed the 2 a task may have: raise `max_deps`"),
        "{e}"
    );
    assert_eq!(
        o.tensor_entries(),
        3,
        "the refused task's arguments were taken back"
    );
    // The same sequence number, within bounds: it waits for both writers, not for itself
    // (it reads and writes row 0), and for nothing the refused task left.
    let ok = [
        TensorArg::input(key(0x1000), row(0)),
        TensorArg::inout(key(0x1000), row(0)),
        TensorArg::input(key(0x1000), row(1)),
    ];
    let id = o.submit(&aiv(&[]).tensors(&ok)).unwrap();
    assert_eq!(id.seq(), Seq(3));
    let t = rig.tables();
    let meta = Meta::unpack(t.slot(t.gslot(id)).meta.load(Ordering::Relaxed));
    assert_eq!(meta.pinned, 2);
    assert_eq!(
        o.tensor_entries(),
        5,
        "its write of row 0 stands in for the first writer"
    );
}

#[test]
fn a_dependency_on_a_reclaimed_task_is_met_and_never_aliases_the_new_tenant() {
    let rig = Rig::new(one_aiv(), 0);
    let (t, p, mut o, mut s) = rig.start();
    let a = o.submit(&aiv(&[])).unwrap();
    s.step();
    p.fin(0, 1);
    s.step();
    // Fill the window so a's slot gets a new tenant that will not finish.
    let mut tenants = Vec::new();
    for _ in 0..3 {
        tenants.push(o.submit(&TaskSpec::dummy().deps(&[])).unwrap());
        steps(&mut s, 2);
    }
    let new_tenant = o.submit(&aiv(&[])).unwrap();
    assert_eq!(
        t.gslot(new_tenant),
        t.gslot(a),
        "same slot, next generation"
    );
    s.step(); // new tenant dispatched, not finished
    let c = o.submit(&TaskSpec::dummy().deps(&[a])).unwrap();
    s.step();
    assert_eq!(
        t.finished(),
        5,
        "c ran at once: a finished long ago, the new tenant is not a"
    );
    let _ = c;
}

#[test]
fn a_slot_whose_class_was_overwritten_fails_the_run_instead_of_running_as_dummy() {
    use crate::region::slot::Meta;
    use crate::sync::Ordering;
    let rig = Rig::new(one_aiv(), 0);
    let (t, p, o, mut s) = rig.start();
    let (_, b) = a_then_b(o);
    // B waits for A; a stray write puts class byte 9 into its slot meanwhile.
    let word = &t.slot(t.gslot(b)).meta;
    word.store(word.load(Ordering::Relaxed) | 9 << 16, Ordering::Relaxed);
    assert!(Meta::decode(word.load(Ordering::Relaxed)).is_err());
    s.step();
    p.fin(0, 1);
    assert_eq!(steps_until_failed(&mut s, 4), Step::Failed);
    let e = t.shared().status().get().unwrap();
    assert_eq!(
        (e.cause, e.task),
        (FatalCause::CorruptSlot { class: 9 }, Some(b))
    );
    assert_eq!(t.finished(), 1, "B neither ran nor completed");
}

#[test]
fn spin_hint_is_told_the_idle_streak_and_work_starts_it_again() {
    let rig = Rig::fin_when_idle(one_aiv(), 0, 3);
    let (t, p, o, s) = rig.start();
    a_then_b(o);
    s.run().unwrap();
    assert_eq!(t.finished(), 2);
    // A is dispatched at once; three idle iterations later its core finishes it, the next
    // iteration completes it and dispatches B (work: the streak starts again), and B's core
    // finishes it three idle iterations later.
    assert_eq!(p.hints(), [1, 2, 3, 1, 2, 3]);
}

#[test]
fn a_consumer_handed_on_is_not_stamped_before_its_producers_kernel_ended() {
    use crate::observe::profile::ProfileLevel;
    use crate::observe::record::TaskRecord;
    let cfg = Config {
        profile: ProfileLevel::Tasks,
        ..Config::tiny()
    };
    let rig = Rig::new(cfg, 1);
    let (t, p, mut o, mut s) = rig.start();
    let first = o.submit(&aiv(&[])).unwrap();
    let second = o.submit(&aiv(&[first])).unwrap();
    s.step();
    let rung = p.rung();
    assert_eq!(rung.len(), 1);
    let (core, token, _) = rung[0];
    // The core's clock says the kernel ended well after the scheduler's lap clock: the FIN
    // is seen in a phase cut before it.
    p.kernel_times(core.0, token.bits(), 5, 1_000);
    p.fin(core.0, token.bits());
    s.step();
    let rung = p.rung();
    assert_eq!(rung.len(), 1, "the consumer follows in the same loop");
    p.fin(rung[0].0.0, rung[0].1.bits());
    steps(&mut s, 2);
    assert_eq!(t.finished(), 2);
    let records: Vec<TaskRecord> = t.shared().prof().records(t.records()).collect();
    let [a, b] = [first, second].map(|id| *records.iter().find(|r| r.task == id).unwrap());
    assert_eq!((a.end, a.complete), (1_000, 1_000), "{a:?}");
    assert!(b.ready >= a.complete, "{a:?} {b:?}");
    assert!(b.dispatch >= a.complete, "{a:?} {b:?}");
}

#[test]
fn tasks_finished_at_their_last_fin_keep_whole_records() {
    use crate::observe::profile::ProfileLevel;
    use crate::observe::record::TaskRecord;
    let cfg = Config {
        profile: ProfileLevel::Tasks,
        ..Config::tiny()
    };
    let rig = Rig::new(cfg, 1);
    let (t, p, mut o, mut s) = rig.start();
    let mix = o
        .submit(&TaskSpec::new(KernelId(0), WorkerClass::Mix))
        .unwrap();
    let one = o.submit(&aiv(&[mix])).unwrap();
    s.step();
    let lanes = p.rung();
    assert_eq!(lanes.len(), 3, "the MIX task takes the cluster");
    // Its lanes finish one loop apart: the last one's FIN is the task's.
    for (core, token, _) in lanes {
        p.fin(core.0, token.bits());
        s.step();
    }
    let rung = p.rung();
    assert_eq!(rung.len(), 1, "the AIV task follows");
    p.fin(rung[0].0.0, rung[0].1.bits());
    steps(&mut s, 2);
    assert_eq!(t.finished(), 2);
    let records: Vec<TaskRecord> = t.shared().prof().records(t.records()).collect();
    assert_eq!(
        records.iter().map(|r| r.task).collect::<Vec<_>>(),
        [mix, one]
    );
    for r in &records {
        assert!(r.core.is_some(), "{r:?}");
        let order = [r.submit, r.ready, r.dispatch, r.fin, r.complete];
        assert!(order.windows(2).all(|w| w[0] <= w[1]), "{r:?}");
        assert!(
            r.fin > r.dispatch,
            "a FIN seen a loop after dispatch: {r:?}"
        );
    }
    assert!(
        records[1].ready >= records[0].fin,
        "ready once its producer's last lane finished: {records:?}"
    );
}
