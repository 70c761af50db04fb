//! loom models of the stall log (two entries kept under loom): entries are never torn,
//! lost or duplicated; past the capacity they are counted, not kept; an entry pushed before
//! its thread departs is seen by the last out.

use loom::sync::Arc;
use loom::thread;
use pto_runtime_core::TaskId;
use pto_runtime_core::sync::{AtomicU32, Ordering, spin_loop};
use std::vec::Vec;

use super::stall_log::{PtoStallEntry, StallLog};

/// Pusher `p`'s entry: every word derives from `p`, so a torn read shows.
fn entry(p: u64) -> PtoStallEntry {
    PtoStallEntry {
        task: p,
        kind: 1,
        watch: p as u16 + 10,
        core: p as u32 + 20,
        a: !p,
        b: p * 3,
        c: p ^ 0x55,
    }
}

/// The entries read now: each whole, none twice.
fn read(log: &StallLog) -> Vec<u64> {
    let mut tasks: Vec<u64> = log
        .entries()
        .map(|e| {
            assert_eq!(e, entry(e.task), "an entry is read whole");
            e.task
        })
        .collect();
    let n = tasks.len();
    tasks.sort_unstable();
    tasks.dedup();
    assert_eq!(tasks.len(), n, "no entry twice");
    tasks
}

/// `pushers` threads push one entry each while this thread reads once.
fn race(pushers: u64) -> (Arc<StallLog>, Vec<u64>) {
    let log = Arc::new(StallLog::new());
    let threads: Vec<_> = (1..=pushers)
        .map(|p| {
            let log = log.clone();
            thread::spawn(move || log.push_entry(entry(p)))
        })
        .collect();
    // No yield here: with one, loom missed a torn read (a Relaxed ready flag).
    let during = read(&log);
    for t in threads {
        t.join().unwrap();
    }
    (log, during)
}

#[test]
fn two_pushers_and_a_reader_tear_lose_and_duplicate_nothing() {
    loom::model(|| {
        let (log, during) = race(2);
        assert!(during.len() <= 2);
        assert_eq!(log.told(), 2);
        assert_eq!(read(&log), [1, 2], "both kept, once each");
    });
}

#[test]
fn a_full_log_counts_what_it_cannot_keep() {
    loom::model(|| {
        let (log, _) = race(3);
        assert_eq!(log.told(), 3, "every push is counted");
        let kept = read(&log);
        assert_eq!(kept.len(), 2, "the log keeps two under loom");
        log.clear();
        assert_eq!((log.told(), log.entries().count()), (0, 0), "cleared");
    });
}

#[test]
fn an_entry_pushed_before_departing_is_seen_by_the_last_out() {
    // Two schedulers push, then depart (one AcqRel count, as the hand-off's); whoever makes
    // the count reads the log, as the last thread out of a run does.
    loom::model(|| {
        let log = Arc::new(StallLog::new());
        let departed = Arc::new(AtomicU32::new(0));
        let seen = Arc::new(AtomicU32::new(0));
        let threads: Vec<_> = (1..=2u64)
            .map(|p| {
                let (log, departed, seen) = (log.clone(), departed.clone(), seen.clone());
                thread::spawn(move || {
                    log.push_entry(entry(p));
                    if departed.fetch_add(1, Ordering::AcqRel) + 1 == 2 {
                        assert!(log.mentions(TaskId::from_raw(1)), "the first's entry");
                        assert!(log.mentions(TaskId::from_raw(2)), "the second's entry");
                        assert_eq!(read(&log), [1, 2]);
                        seen.store(1, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        while departed.load(Ordering::Acquire) < 2 {
            spin_loop();
        }
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(
            seen.load(Ordering::Relaxed),
            1,
            "one of them was the last out"
        );
    });
}
