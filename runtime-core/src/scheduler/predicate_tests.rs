//! Predicated dispatch against the scripted machine: a task whose predicate is false when it
//! is about to be dispatched finishes without a core and its consumers run; one whose
//! predicate holds runs; the predicate is read at dispatch, not at submit; a predicate that
//! cannot be read is refused at submit, or fails the run if it stops being readable.

use std::vec::Vec;

use crate::condition::Watch;
use crate::error::{FatalKind, SubmitError};
use crate::ids::{CoreId, TaskId};
use crate::predicate::{CmpOp, Predicate, PredicateError};
use crate::region::config::Config;
use crate::scheduler::Step;
use crate::sync::Ordering;
use crate::testing::rig::{Rig, aiv, steps};

/// The word the predicates read: a 32-bit counter at 0x1000 holding `count`.
const AT: u64 = 0x1000;

fn four_aiv() -> Config {
    Config {
        aiv_cores: 4,
        task_window: 8,
        ..Config::tiny()
    }
}

fn rung_tasks(rig_rung: &[(CoreId, crate::ids::Token, TaskId)]) -> Vec<TaskId> {
    rig_rung.iter().map(|r| r.2).collect()
}

/// The cores finish every lane rung since the last look; returns those lanes' tasks.
fn fin_rung(p: &crate::testing::rig::Script) -> Vec<TaskId> {
    let rung = p.rung();
    for &(core, token, _) in &rung {
        p.fin(core.0, token.bits());
    }
    rung_tasks(&rung)
}

#[test]
fn a_false_predicate_skips_the_task_and_its_consumer_runs() {
    let rig = Rig::new(four_aiv(), 0);
    let (t, p, mut o, mut s) = rig.start();
    p.word(Watch::Counter32(AT), 0);
    let count_is_zero = Predicate::new(AT, 4, CmpOp::Gt, 0);
    let a = o.submit(&aiv(&[]).when(count_is_zero)).unwrap();
    let b = o.submit(&aiv(&[a])).unwrap();
    drop(o);
    s.step();
    assert_eq!(fin_rung(p), [b], "A skipped, B dispatched");
    assert_eq!(t.sched()[0].skipped.load(Ordering::Relaxed), 1);
    assert_eq!(steps(&mut s, 3), Step::Done);
    assert_eq!(t.finished(), 2);
}

#[test]
fn a_true_predicate_runs_the_task_and_it_is_read_at_dispatch_not_at_submit() {
    let rig = Rig::new(four_aiv(), 0);
    let (t, p, mut o, mut s) = rig.start();
    p.word(Watch::Counter32(AT), 0);
    let a = o.submit(&aiv(&[])).unwrap();
    // Submitted while the word says 0 (false); the producer makes it 5 before it finishes.
    let b = o
        .submit(&aiv(&[a]).when(Predicate::new(AT, 4, CmpOp::Eq, 5)))
        .unwrap();
    let c = o
        .submit(&aiv(&[a]).when(Predicate::new(AT, 4, CmpOp::Ne, 5)))
        .unwrap();
    drop(o);
    s.step();
    p.word(Watch::Counter32(AT), 5);
    assert_eq!(fin_rung(p), [a]);
    steps(&mut s, 3);
    assert_eq!(fin_rung(p), [b], "B (== 5) runs, C (!= 5) is skipped");
    assert_eq!(t.sched()[0].skipped.load(Ordering::Relaxed), 1);
    assert_eq!(steps(&mut s, 3), Step::Done);
    assert_eq!(t.finished(), 3);
    let _ = c;
}

#[test]
fn a_predicate_of_a_byte_or_a_half_word_reads_its_own_bytes_of_the_word() {
    let rig = Rig::new(four_aiv(), 0);
    let (t, p, mut o, mut s) = rig.start();
    // Bytes 0x1000..0x1004: 0x11, 0x80 (-128 as an i8), 0x34, 0x12 (0x1234 as a u16).
    p.word(Watch::Counter32(AT), 0x1234_8011);
    let runs = [
        Predicate::new(AT, 1, CmpOp::Eq, 0x11),
        Predicate::new(AT + 1, 1, CmpOp::Lt, 0).signed(),
        Predicate::new(AT + 2, 2, CmpOp::Ge, 0x1234),
    ];
    let skips = [
        Predicate::new(AT + 1, 1, CmpOp::Lt, 0),
        Predicate::new(AT + 2, 2, CmpOp::Gt, 0x1234),
    ];
    let mut ran = Vec::new();
    for pr in runs {
        ran.push(o.submit(&aiv(&[]).when(pr)).unwrap());
    }
    for pr in skips {
        o.submit(&aiv(&[]).when(pr)).unwrap();
    }
    drop(o);
    s.step();
    let mut rung = rung_tasks(&p.rung());
    rung.sort_unstable_by_key(|t| t.raw());
    assert_eq!(rung, ran);
    assert_eq!(t.sched()[0].skipped.load(Ordering::Relaxed), 2);
}

#[test]
fn a_task_of_several_blocks_is_skipped_whole_or_runs_every_block() {
    let rig = Rig::new(four_aiv(), 0);
    let (t, p, mut o, mut s) = rig.start();
    p.word(Watch::Counter64(AT), 7);
    let a = o
        .submit(&aiv(&[]).blocks(3).when(Predicate::new(AT, 8, CmpOp::Le, 6)))
        .unwrap();
    let b = o
        .submit(&aiv(&[]).blocks(3).when(Predicate::new(AT, 8, CmpOp::Le, 7)))
        .unwrap();
    drop(o);
    s.step();
    let rung = rung_tasks(&p.rung());
    assert!(!rung.contains(&a), "A (7 <= 6) skipped whole");
    assert_eq!(rung, [b, b, b], "B runs each of its blocks");
    assert_eq!(t.sched()[0].skipped.load(Ordering::Relaxed), 1);
}

#[test]
fn an_unreadable_predicate_is_refused_at_submit_and_fails_the_run_if_it_goes_away() {
    let rig = Rig::new(four_aiv(), 0);
    let (t, p, mut o, mut s) = rig.start();
    let e = o
        .submit(&aiv(&[]).when(Predicate::new(AT, 4, CmpOp::Eq, 0)))
        .unwrap_err();
    assert_eq!(
        e,
        SubmitError::BadPredicate {
            error: PredicateError::Unreadable { addr: AT }
        }
    );
    for (pr, error) in [
        (
            Predicate::new(AT, 3, CmpOp::Eq, 0),
            PredicateError::Width { width: 3 },
        ),
        (
            Predicate::new(AT + 2, 4, CmpOp::Eq, 0),
            PredicateError::Misaligned {
                addr: AT + 2,
                width: 4,
            },
        ),
    ] {
        assert_eq!(
            o.submit(&aiv(&[]).when(pr)),
            Err(SubmitError::BadPredicate { error })
        );
    }
    p.word(Watch::Counter32(AT), 1);
    let a = o.submit(&aiv(&[])).unwrap();
    o.submit(&aiv(&[a]).when(Predicate::new(AT, 4, CmpOp::Eq, 1)))
        .unwrap();
    drop(o);
    s.step();
    p.forget_word(Watch::Counter32(AT));
    assert_eq!(fin_rung(p), [a]);
    steps(&mut s, 3);
    let e = t.shared().status().get().expect("the run failed");
    assert_eq!(e.kind(), FatalKind::BadPredicate, "{e}");
    assert!(std::format!("{e}").contains("predicate at 0x1000"), "{e}");
}
