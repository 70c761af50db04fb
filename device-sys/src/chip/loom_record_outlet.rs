//! loom models of the record stream: the pump's [`RecordOutlet`] against a host that takes
//! records as the real one does (reads the pump's count with Acquire, copies the entries,
//! stores its own count with Release). An entry is never read while it is written (loom's
//! cells would say), records arrive whole and in order, and every record is either taken
//! or counted lost; with an unbounded wait none is lost, and a host that takes nothing
//! costs the pump a bound, not a hang.
#![allow(unsafe_code)] // loom's cells: their accesses are what the model checks.

use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::thread;
use pto_runtime_core::ffi::PtoRecord;
use pto_runtime_core::sync::{AtomicU32, AtomicU64, Ordering};
use std::vec::Vec;

use super::record_outlet::{RecordOutlet, RecordWindow};

/// The stream's memory: the ring, the two counts, `done`, and a clock that ticks on each
/// look at it.
struct Stream {
    ring: Vec<UnsafeCell<PtoRecord>>,
    produced: AtomicU64,
    collected: AtomicU64,
    lost: AtomicU64,
    done: AtomicU32,
    clock: AtomicU64,
}

impl Stream {
    fn new(cap: usize) -> Arc<Self> {
        Arc::new(Stream {
            ring: (0..cap)
                .map(|_| UnsafeCell::new(PtoRecord::default()))
                .collect(),
            produced: AtomicU64::new(0),
            collected: AtomicU64::new(0),
            lost: AtomicU64::new(0),
            done: AtomicU32::new(0),
            clock: AtomicU64::new(0),
        })
    }
}

/// The pump's view of the stream.
struct Window(Arc<Stream>);

impl RecordWindow for Window {
    type Entry = PtoRecord;
    fn capacity(&self) -> u64 {
        self.0.ring.len() as u64
    }
    fn collected(&self) -> u64 {
        self.0.collected.load(Ordering::Acquire)
    }
    fn write(&self, i: u64, r: &PtoRecord) {
        let cell = &self.0.ring[(i % self.capacity()) as usize];
        // SAFETY: loom checks that no host read of this entry races the write.
        cell.with_mut(|p| unsafe { *p = *r });
    }
    fn publish(&self, _from: u64, to: u64) {
        self.0.produced.store(to, Ordering::Release);
    }
    fn close(&self, lost: u64) {
        self.0.lost.store(lost, Ordering::Relaxed);
        self.0.done.store(1, Ordering::Release);
    }
    fn now(&self) -> u64 {
        self.0.clock.fetch_add(1, Ordering::Relaxed)
    }
    fn idle(&self) {
        thread::yield_now();
    }
}

/// A model checker bounded to three preemptions: the races here are between one write
/// or read of an entry and the other side's count, each a single step, and a bug in the
/// protocol shows within two (the host reads an entry, the pump overwrites it).
fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(3);
    b.check(f);
}

/// Record `i`: its words derive from `i`, so a torn read shows.
fn record(i: u64) -> PtoRecord {
    PtoRecord {
        task: i,
        kernel: i as u32 + 7,
        end: !i,
        ..PtoRecord::default()
    }
}

/// The host: takes what the pump published until it says it is done.
fn host(s: &Stream) -> Vec<u64> {
    let mut taken = Vec::new();
    loop {
        let done = s.done.load(Ordering::Acquire) == 1;
        let upto = s.produced.load(Ordering::Acquire);
        for i in taken.len() as u64..upto {
            let cell = &s.ring[(i % s.ring.len() as u64) as usize];
            // SAFETY: loom checks that the pump does not write this entry meanwhile.
            let r = cell.with(|p| unsafe { *p });
            assert_eq!(r, record(r.task), "a record arrives whole");
            taken.push(r.task);
        }
        s.collected.store(upto, Ordering::Release);
        if done {
            return taken;
        }
        thread::yield_now();
    }
}

/// The pump pushes `n` records through a ring of `cap` with a wait of `wait` ticks while
/// the host takes them (or, with `collects` false, takes none): (taken, written, lost).
fn run(n: u64, cap: usize, wait: u64, collects: bool) -> (Vec<u64>, u64, u64) {
    let s = Stream::new(cap);
    let host = collects.then(|| {
        let s = s.clone();
        thread::spawn(move || host(&s))
    });
    let mut out = RecordOutlet::new(Window(s.clone()), wait);
    for i in 0..n {
        out.push(&record(i));
    }
    let (written, lost) = out.close();
    let taken = host.map_or_else(Vec::new, |h| h.join().unwrap());
    assert_eq!(
        s.lost.load(Ordering::Relaxed),
        lost,
        "the block says what was lost"
    );
    (taken, written, lost)
}

#[test]
fn with_an_unbounded_wait_every_record_reaches_the_host_in_order() {
    model(|| {
        let (taken, written, lost) = run(3, 2, u64::MAX, true);
        assert_eq!((written, lost), (3, 0));
        assert_eq!(taken, [0, 1, 2]);
    });
}

#[test]
fn with_a_bounded_wait_a_record_is_taken_or_counted_lost_never_both() {
    model(|| {
        let (taken, written, lost) = run(3, 1, 1, true);
        assert_eq!(written + lost, 3, "every record is written or counted lost");
        assert_eq!(
            taken.len() as u64,
            written,
            "the host takes every one written"
        );
        assert!(taken.windows(2).all(|w| w[0] < w[1]), "in order: {taken:?}");
        assert_eq!(taken.first(), Some(&0), "the first always has room");
    });
}

#[test]
fn a_host_that_takes_nothing_costs_one_bound_then_records_are_counted_lost() {
    model(|| {
        let (taken, written, lost) = run(3, 1, 2, false);
        assert!(taken.is_empty());
        assert_eq!(
            (written, lost),
            (1, 2),
            "the ring's one entry, then two lost"
        );
    });
}
