//! Bounded lock-free MPMC ready queues of task ids (a [`SeqRing`] of one-word records). The
//! ways a task enters one are in `tables/ready.rs`.
//!
//! A push that finds the queue full returns the value, it never overwrites; the runtime
//! sizes each queue to the number of live tasks, so that cannot happen, and reports it if it
//! does (a pop still in flight does not make the queue look full: the push waits for it). A pop may find the queue empty while a push is half-way; callers never take "empty"
//! as "no work left" (termination counts finished tasks instead).
#![forbid(unsafe_code)]

use crate::ids::WorkerClass;
use crate::queues::seq_ring::{RingEnds, SeqCell, SeqRing};
use crate::region::carve::Carve;
use crate::region::config::{Config, ConfigError};

/// One cell of a ready queue: a task id.
pub(crate) type QueueCell = SeqCell<1>;
/// The two positions of a ready queue.
pub(crate) type QueueCtl = RingEnds;

/// The ready queues' tables: each class's positions and cells.
pub(crate) struct QueueParts<'r> {
    pub(crate) ctl: &'r mut [QueueCtl],
    pub(crate) cells: [&'r mut [QueueCell]; WorkerClass::COUNT],
}

impl<'r> QueueParts<'r> {
    /// Takes the ready queues of `cfg` from `c`.
    pub(crate) fn carve(cfg: &Config, c: &mut impl Carve<'r>) -> Result<Self, ConfigError> {
        let cap = cfg.ready_queue_capacity();
        let ctl = c.table(WorkerClass::COUNT, |_| QueueCtl::new())?;
        let mut cells: [&'r mut [QueueCell]; WorkerClass::COUNT] = Default::default();
        for q in cells.iter_mut() {
            *q = c.table(cap, QueueCell::new)?;
        }
        Ok(QueueParts { ctl, cells })
    }

    /// The queues over their freshly formatted tables, in class order.
    pub(crate) fn into_queues(self) -> [ReadyQueue<'r>; WorkerClass::COUNT] {
        let ctl: &'r [QueueCtl] = self.ctl;
        let mut cells = self.cells.into_iter();
        core::array::from_fn(|i| {
            // One table per class: the iterator has exactly COUNT of them.
            ReadyQueue::new(cells.next().map_or(&[][..], |c| &*c), &ctl[i])
        })
    }
}

/// A view of one queue in the region: task ids, any thread pushes and pops.
#[derive(Clone, Copy)]
pub(crate) struct ReadyQueue<'r>(SeqRing<'r, 1>);

impl<'r> ReadyQueue<'r> {
    /// A queue over freshly formatted `cells` (cell `i` made by `QueueCell::new(i)`; a power
    /// of two of them, as [`Config::ready_queue_capacity`] gives).
    pub(crate) fn new(cells: &'r [QueueCell], ctl: &'r QueueCtl) -> Self {
        ReadyQueue(SeqRing::new(cells, ctl))
    }

    /// Appends `value`, or gives it back when the queue is full.
    #[inline]
    pub(crate) fn push(&self, value: u64) -> Result<(), u64> {
        self.0.push([value]).map_err(|[v]| v)
    }

    /// Takes the oldest value, or `None` if the queue is (or looks) empty.
    #[inline]
    pub(crate) fn pop(&self) -> Option<u64> {
        self.0.pop().map(|[v]| v)
    }

    /// A cheap hint that the queue holds something (two relaxed loads). May be stale.
    #[inline]
    pub(crate) fn maybe_nonempty(&self) -> bool {
        self.0.maybe_nonempty()
    }

    /// Task ids pushed so far (tests: which path a task took).
    #[cfg(all(test, not(loom)))]
    pub(crate) fn pushed(&self) -> u64 {
        self.0.pushed()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::sync::Ordering;
    use std::vec::Vec;

    fn queue(cap: usize) -> (Vec<QueueCell>, QueueCtl) {
        ((0..cap).map(QueueCell::new).collect(), QueueCtl::new())
    }

    #[test]
    fn fifo_through_many_wraps_and_full_gives_the_value_back() {
        let (cells, ctl) = queue(4);
        let q = ReadyQueue::new(&cells, &ctl);
        for round in 0..100u64 {
            for i in 0..4 {
                q.push(round * 10 + i).unwrap();
            }
            assert_eq!(
                q.push(999),
                Err(999),
                "a full queue refuses, never overwrites"
            );
            for i in 0..4 {
                assert_eq!(q.pop(), Some(round * 10 + i));
            }
            assert_eq!(q.pop(), None);
            assert!(!q.maybe_nonempty());
        }
    }

    #[test]
    fn threads_lose_and_duplicate_nothing() {
        use std::sync::atomic::AtomicU64;
        use std::time::{Duration, Instant};

        let (cells, ctl) = queue(64);
        let q = ReadyQueue::new(&cells, &ctl);
        let per = if cfg!(miri) { 200u64 } else { 20_000 };
        // The consumers stop once every value pushed was popped, not after a run of empty
        // pops (a producer preempted for that long would then spin on a full queue for
        // ever); every spin is bounded by the deadline, which only a lost value reaches.
        let popped_total = AtomicU64::new(0);
        let deadline = Instant::now() + Duration::from_secs(120);
        let (q, popped_total) = (&q, &popped_total);
        let popped: Vec<Vec<u64>> = std::thread::scope(|s| {
            for p in 0..2u64 {
                s.spawn(move || {
                    for i in 0..per {
                        let mut v = p << 32 | i;
                        while let Err(back) = q.push(v) {
                            v = back;
                            assert!(Instant::now() < deadline, "a full queue never drained");
                            std::hint::spin_loop();
                        }
                    }
                });
            }
            let consumers: Vec<_> = (0..2)
                .map(|_| {
                    s.spawn(move || {
                        let mut got = Vec::new();
                        while popped_total.load(Ordering::Acquire) < 2 * per {
                            match q.pop() {
                                Some(v) => {
                                    got.push(v);
                                    popped_total.fetch_add(1, Ordering::AcqRel);
                                }
                                None => {
                                    assert!(Instant::now() < deadline, "values were lost");
                                    std::hint::spin_loop();
                                }
                            }
                        }
                        got
                    })
                })
                .collect();
            consumers.into_iter().map(|c| c.join().unwrap()).collect()
        });
        let mut all: Vec<u64> = popped.iter().flatten().copied().collect();
        for got in &popped {
            for p in 0..2u64 {
                let mine: Vec<u64> = got.iter().copied().filter(|v| v >> 32 == p).collect();
                assert!(mine.windows(2).all(|w| w[0] < w[1]), "FIFO per producer");
            }
        }
        all.sort_unstable();
        let expected: Vec<u64> = (0..2u64)
            .flat_map(|p| (0..per).map(move |i| p << 32 | i))
            .collect();
        assert_eq!(all, expected);
    }
}
