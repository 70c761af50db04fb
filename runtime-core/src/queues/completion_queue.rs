//! Completion queues: bounded lock-free rings of fixed-size completion records, many
//! producers (cores, engines, peers through a window) and one consumer (the scheduler that
//! owns the queue).
//!
//! A [`SeqRing`] of 3-word records underneath: slots carry absolute sequence numbers, so the
//! ring is formatted once and never zeroed again, survives wrap-around and tells a stale slot
//! from a fresh one; each producer's records stay in its order; a full ring refuses the push
//! (the producer retries: it never drops or overwrites); the consumer never reads a record
//! before its producer published it whole.
//!
//! The storage belongs to whoever hosts the queue (the runtime region on the chip, the
//! simulator's memory on threads): this module only lays records out and moves them.
#![forbid(unsafe_code)]

use crate::queues::seq_ring::{RingEnds, SeqCell, SeqRing};

/// Engines whose completion queues a scheduler drains: engine indices below this one
/// ([`crate::Platform::engine_queue`] is not asked about the others).
pub const MAX_ENGINE_QUEUES: usize = 8;

/// One cell of a completion queue: a sequence number and a 3-word record (32 bytes).
pub type CompletionCell = SeqCell<3>;

/// The producers' and the consumer's positions in a completion queue, each on its own cache
/// line.
pub type CompletionEnds = RingEnds;

/// What completed, as a producer reports it.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Completion {
    /// Who reports: a core's id, or an engine's index.
    pub source: u32,
    /// How it ended: 0 for success, else the producer's code.
    pub status: u32,
    /// What completed there: a core's token, or an engine's post id.
    pub id: u64,
    /// When (the platform's clock), or 0.
    pub time: u64,
}

impl Completion {
    fn to_words(self) -> [u64; 3] {
        [
            self.source as u64 | (self.status as u64) << 32,
            self.id,
            self.time,
        ]
    }

    fn from_words([a, id, time]: [u64; 3]) -> Self {
        Completion {
            source: a as u32,
            status: (a >> 32) as u32,
            id,
            time,
        }
    }
}

/// A view of one completion queue over its owner's cells.
///
/// ```
/// use pto_runtime_core::{Completion, CompletionCell, CompletionEnds, CompletionQueue};
/// let cells: Vec<CompletionCell> = (0..4).map(CompletionCell::new).collect();
/// let ends = CompletionEnds::new();
/// let q = CompletionQueue::new(&cells, &ends);
/// let c = Completion { source: 3, status: 0, id: 17, time: 0 };
/// q.push(c).unwrap();
/// assert_eq!(q.pop(), Some(c));
/// assert_eq!(q.pop(), None);
/// ```
#[derive(Clone, Copy)]
pub struct CompletionQueue<'a>(SeqRing<'a, 3>);

impl<'a> CompletionQueue<'a> {
    /// The queue over freshly made `cells` (cell `i` made by `CompletionCell::new(i)`; a
    /// power of two of them: cells past the largest power of two that fits go unused) and
    /// `ends`.
    pub fn new(cells: &'a [CompletionCell], ends: &'a CompletionEnds) -> Self {
        CompletionQueue(SeqRing::new(cells, ends))
    }

    /// Records usable at once.
    pub fn capacity(&self) -> usize {
        self.0.capacity()
    }

    /// Records queued, as a statistic: a snapshot that may be stale by the time it returns
    /// (see the module's ring; the consumer's own reading is exact between its pops).
    pub fn len(&self) -> u64 {
        self.0.len()
    }

    /// Whether the snapshot of [`Self::len`] is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends `c` (any producer thread), or gives it back when the queue is full: the
    /// producer must retry, never drop it.
    #[inline]
    pub fn push(&self, c: Completion) -> Result<(), Completion> {
        self.0.push(c.to_words()).map_err(Completion::from_words)
    }

    /// Takes the oldest record, or `None` if there is none yet (the queue's one consumer).
    #[inline]
    pub fn pop(&self) -> Option<Completion> {
        self.0.pop().map(Completion::from_words)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::vec::Vec;

    #[test]
    fn records_round_trip_in_order_through_many_wraps_and_a_full_queue_refuses() {
        let cells: Vec<CompletionCell> = (0..4).map(CompletionCell::new).collect();
        let ends = CompletionEnds::new();
        let q = CompletionQueue::new(&cells, &ends);
        assert_eq!(q.capacity(), 4);
        let rec = |i: u64| Completion {
            source: i as u32 % 7,
            status: u32::MAX - i as u32,
            id: i << 40 | i,
            time: !i,
        };
        for lap in 0..50u64 {
            for i in 0..4 {
                q.push(rec(lap * 4 + i)).unwrap();
            }
            assert_eq!(q.push(rec(999)), Err(rec(999)), "full: given back");
            for i in 0..4 {
                assert_eq!(q.pop(), Some(rec(lap * 4 + i)));
            }
            assert_eq!(q.pop(), None);
        }
    }

    #[test]
    fn a_queue_of_no_cells_refuses_every_push() {
        let ends = CompletionEnds::new();
        let q = CompletionQueue::new(&[], &ends);
        let c = Completion {
            source: 1,
            status: 0,
            id: 1,
            time: 0,
        };
        assert_eq!(q.push(c), Err(c));
        assert_eq!(q.pop(), None);
    }
}

/// loom models: every record pushed is popped once, whole, in its producer's order, through
/// wrap-around and a full ring. Run with `RUSTFLAGS="--cfg loom" cargo test -p
/// pto-runtime-core --release --lib loom_`.
#[cfg(all(test, loom))]
mod loom_completion_queue {
    use super::*;
    use loom::sync::Arc;
    use loom::thread;
    use std::vec::Vec;

    /// Producer `p`'s `k`-th record: its words tie together, so a torn read shows.
    fn rec(p: u32, k: u64) -> Completion {
        Completion {
            source: p,
            status: k as u32 + 1,
            id: (p as u64) << 8 | k,
            time: !((p as u64) << 8 | k),
        }
    }

    /// A queue of `cells` cells, shareable with threads.
    fn queue(cells: usize) -> (Arc<Vec<CompletionCell>>, Arc<CompletionEnds>) {
        (
            Arc::new((0..cells).map(CompletionCell::new).collect()),
            Arc::new(CompletionEnds::new()),
        )
    }

    #[test]
    fn loom_two_producers_lose_duplicate_and_tear_nothing() {
        // Two producers push while the consumer pops (a bounded number of tries, no spin),
        // then the consumer takes the rest.
        loom::model(|| {
            let (cells, ends) = queue(2);
            let threads: Vec<_> = (0..2u32)
                .map(|p| {
                    let (cells, ends) = (cells.clone(), ends.clone());
                    thread::spawn(move || {
                        CompletionQueue::new(&cells, &ends).push(rec(p, 0)).unwrap();
                    })
                })
                .collect();
            let q = CompletionQueue::new(&cells, &ends);
            let mut got: Vec<Completion> = (0..2).filter_map(|_| q.pop()).collect();
            for t in threads {
                t.join().unwrap();
            }
            got.extend(core::iter::from_fn(|| q.pop()));
            for c in &got {
                assert_eq!(*c, rec(c.source, 0), "a record read whole");
            }
            let mut sources: Vec<u32> = got.iter().map(|c| c.source).collect();
            sources.sort_unstable();
            assert_eq!(sources, [0, 1], "each record once");
        });
    }

    #[test]
    fn loom_an_engine_entry_publishes_the_data_its_transfer_landed() {
        // An engine lands a transfer's word, then posts its entry; the scheduler that pops
        // the entry reads the word (a consumer released by it would): never the old value.
        static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        loom::model(|| {
            RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let (cells, ends) = queue(2);
            let data = Arc::new(crate::sync::AtomicU64::new(0));
            let engine = {
                let (cells, ends, data) = (cells.clone(), ends.clone(), data.clone());
                thread::spawn(move || {
                    data.store(42, crate::sync::Ordering::Relaxed);
                    CompletionQueue::new(&cells, &ends).push(rec(7, 0)).unwrap();
                })
            };
            let q = CompletionQueue::new(&cells, &ends);
            thread::yield_now();
            let mut seen = None;
            for _ in 0..2 {
                if let Some(c) = q.pop() {
                    seen = Some((c, data.load(crate::sync::Ordering::Relaxed)));
                    break;
                }
                thread::yield_now();
            }
            engine.join().unwrap();
            if let Some((c, value)) = seen {
                assert_eq!(c, rec(7, 0));
                assert_eq!(value, 42, "the entry's pop sees the landed data");
            } else {
                assert_eq!(q.pop(), Some(rec(7, 0)), "the entry is there after all");
            }
        });
        let runs = RUNS.load(std::sync::atomic::Ordering::Relaxed);
        std::println!("engine entry publication: {runs} interleavings");
        assert!(runs > 3, "loom explored only {runs} interleavings");
    }

    #[test]
    fn loom_a_full_ring_refuses_and_a_producers_records_stay_in_order_through_the_wrap() {
        // Three records into two cells while the consumer pops once: the third push is
        // refused unless that pop freed a cell first; refused, it comes back whole and is
        // pushed again after. Nothing is overwritten, lost or reordered.
        loom::model(|| {
            let (cells, ends) = queue(2);
            let producer = {
                let (cells, ends) = (cells.clone(), ends.clone());
                thread::spawn(move || {
                    let q = CompletionQueue::new(&cells, &ends);
                    q.push(rec(0, 0)).unwrap();
                    q.push(rec(0, 1)).unwrap();
                    q.push(rec(0, 2)).err()
                })
            };
            let q = CompletionQueue::new(&cells, &ends);
            // A yield first: a scheduling point, so the model also runs the producer (some
            // or all of it) before this pop.
            thread::yield_now();
            let mut got: Vec<Completion> = q.pop().into_iter().collect();
            let refused = producer.join().unwrap();
            if let Some(c) = refused {
                assert_eq!(c, rec(0, 2), "the refused record comes back whole");
                got.extend(q.pop());
                q.push(c).unwrap();
            }
            got.extend(core::iter::from_fn(|| q.pop()));
            assert_eq!(got, [rec(0, 0), rec(0, 1), rec(0, 2)]);
        });
    }
}
