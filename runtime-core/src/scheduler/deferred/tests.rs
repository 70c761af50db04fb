//! The deferred set on its own: ordering, sharing of reads, deadlines, pool accounting.

use std::vec::Vec;

use super::*;
use crate::ids::Seq;
use crate::region::config::Config;
use crate::testing::owned::Owned;

/// A region whose scheduler has deferred pools for `capacity` conditions.
fn pools(capacity: u32) -> Owned {
    Owned::new(Config {
        deferred_capacity: capacity,
        max_conditions: capacity.min(4) as u16,
        ..Config::tiny()
    })
}

fn task(i: u64) -> TaskId {
    TaskId::new(1, 0, Seq(i))
}

/// Polls everything once against `value(watch)`, closing and returning the tasks completed.
fn poll_all(set: &mut DeferredSet<'_>, value: impl Fn(Watch) -> u64) -> (Vec<u64>, usize) {
    let mut done = Vec::new();
    let mut reads = 0;
    set.poll(
        usize::MAX,
        |w| {
            reads += 1;
            Some(value(w))
        },
        |s, e| done.push(s.close(e).seq().0),
    )
    .unwrap();
    (done, reads)
}

#[test]
fn waiters_on_one_word_share_one_read_and_complete_in_expected_order() {
    let store = pools(16);
    let mut set = DeferredSet::new(store.take_store());
    let c = Watch::Counter32(0x100);
    // Registered out of order: 3, 1, 2.
    for (i, expected) in [(0u64, 3u64), (1, 1), (2, 2)] {
        let e = set.open(task(i));
        set.add(e, Condition { watch: c, expected }, 0);
        assert!(!set.arm(e, 1_000));
    }
    assert_eq!(set.watched(), 1);
    let (done, reads) = poll_all(&mut set, |_| 2);
    assert_eq!((done, reads), (std::vec![1, 2], 1));
    let (done, reads) = poll_all(&mut set, |_| 7);
    assert_eq!((done, reads), (std::vec![0], 1));
    assert!(set.is_empty());
    assert_eq!(set.watched(), 0);
    assert!(set.has_room(16, true), "every waiter and entry was freed");
}

#[test]
fn a_task_completes_when_its_last_condition_holds_and_only_once_armed() {
    let store = pools(8);
    let mut set = DeferredSet::new(store.take_store());
    let e = set.open(task(5));
    set.add(e, Condition::counter64(0x8, 1), 0);
    set.add(e, Condition::engine(2, 4), 0);
    set.add_met(e);
    assert_eq!(set.registered(e), 3);
    let vals = |w: Watch| if w == Watch::Engine(2) { 4 } else { 0 };
    // Not armed yet (another lane still running): nothing completes.
    assert_eq!(poll_all(&mut set, vals).0, Vec::<u64>::new());
    assert!(!set.arm(e, 10));
    assert_eq!(poll_all(&mut set, |_| 9).0, std::vec![5]);
}

#[test]
fn an_entry_whose_conditions_held_before_arming_completes_at_arming() {
    let store = pools(4);
    let mut set = DeferredSet::new(store.take_store());
    let e = set.open(task(1));
    set.add(e, Condition::counter32(0x4, 1), 0);
    assert!(poll_all(&mut set, |_| 1).0.is_empty());
    assert!(set.arm(e, 10));
    assert_eq!(set.close(e), task(1));
    assert!(set.is_empty());
}

#[test]
fn the_oldest_armed_task_expires_naming_its_unmet_word() {
    let store = pools(8);
    let mut set = DeferredSet::new(store.take_store());
    let a = set.open(task(1));
    set.add(a, Condition::counter32(0x40, 2), 0);
    set.add(a, Condition::counter32(0x80, 5), 0);
    set.arm(a, 100);
    let b = set.open(task(2));
    set.add(b, Condition::engine(0, 1), 0);
    set.arm(b, 200);
    let vals = |w: Watch| match w {
        Watch::Counter32(0x40) => 2,
        Watch::Counter32(_) => 3,
        _ => 0,
    };
    assert!(poll_all(&mut set, vals).0.is_empty());
    assert_eq!(set.expired(100), None);
    assert_eq!(
        set.expired(101),
        Some(Expired {
            task: task(1),
            watch: Watch::Counter32(0x80),
            expected: 5,
            last: 3,
        })
    );
    // Task 1 completes: task 2 is the oldest now.
    let mut done = poll_all(&mut set, |_| 5).0;
    done.sort();
    assert_eq!(done, std::vec![1, 2]);
    assert_eq!(set.expired(u64::MAX), None);
}

#[test]
fn the_budget_bounds_reads_and_round_robin_reaches_every_word() {
    let store = pools(8);
    let mut set = DeferredSet::new(store.take_store());
    for i in 0..6u64 {
        let e = set.open(task(i));
        set.add(e, Condition::counter64(i * 8, 1), 0);
        set.arm(e, 1_000);
    }
    let mut seen = Vec::new();
    for _ in 0..3 {
        let released = set
            .poll(
                2,
                |w| {
                    seen.push(w);
                    Some(0)
                },
                |_, _| unreachable!(),
            )
            .unwrap();
        assert_eq!(released, 0);
    }
    seen.sort_by_key(|w| w.counter().unwrap().0);
    seen.dedup();
    assert_eq!(seen.len(), 6, "three polls of 2 read all 6 words");
}

#[test]
fn an_unreadable_word_names_a_waiting_task() {
    let store = pools(2);
    let mut set = DeferredSet::new(store.take_store());
    let e = set.open(task(3));
    set.add(e, Condition::engine(9, 1), 0);
    let r = set.poll(4, |_| None, |_, _| {});
    assert_eq!(r, Err((Watch::Engine(9), task(3))));
}

#[test]
fn pools_refuse_what_does_not_fit() {
    let store = pools(2);
    let mut set = DeferredSet::new(store.take_store());
    assert!(set.has_room(2, true) && !set.has_room(3, true));
    let e = set.open(task(0));
    set.add(e, Condition::counter64(0, 1), 0);
    let f = set.open(task(1));
    set.add(f, Condition::counter64(8, 1), 0);
    assert!(!set.has_room(1, false));
    assert!(!set.has_room(0, true), "no entry left");
    set.arm(e, 0);
    set.arm(f, 0);
    assert_eq!(poll_all(&mut set, |_| 1).0.len(), 2);
    assert!(set.has_room(2, true));
}
