//! Bounded lock-free MPMC ready queue (Vyukov's array queue with 64-bit sequence numbers),
//! and [`make_ready`], the one way a task enters one (the orchestrator and the schedulers
//! both use it).
//!
//! Each cell carries a sequence number: `pos` when free for the push at `pos`, `pos + 1` when
//! it holds that push's value, `pos + capacity` once popped. 64-bit positions never wrap in a
//! run. A push that finds the queue full returns the value, it never overwrites; the runtime
//! sizes each queue to the number of live tasks, so that cannot happen, and reports it if it
//! does. A pop may find the queue empty while a push is half-way; callers never take "empty"
//! as "no work left" (termination counts finished tasks instead).
#![forbid(unsafe_code)]

use crate::config::{Config, ConfigError};
use crate::error::{FatalError, FatalKind};
use crate::ids::WorkerClass;
use crate::layout::Carve;
use crate::profile::ProfileLevel;
use crate::slot::Meta;
use crate::sync::{AtomicU64, Ordering};
use crate::tables::Tables;

/// One cell of a queue.
pub(crate) struct QueueCell {
    seq: AtomicU64,
    value: AtomicU64,
}

impl QueueCell {
    /// The cell at `index` of an empty queue.
    pub(crate) fn new(index: usize) -> Self {
        QueueCell {
            seq: AtomicU64::new(index as u64),
            value: AtomicU64::new(0),
        }
    }
}

/// A word alone on its cache line.
#[repr(C, align(64))]
pub(crate) struct CachePadded<T>(pub(crate) T);

/// The two positions of a queue, each on its own cache line.
pub(crate) struct QueueCtl {
    enqueue: CachePadded<AtomicU64>,
    dequeue: CachePadded<AtomicU64>,
}

impl QueueCtl {
    pub(crate) fn new() -> Self {
        QueueCtl {
            enqueue: CachePadded(AtomicU64::new(0)),
            dequeue: CachePadded(AtomicU64::new(0)),
        }
    }
}

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
}

/// A view of one queue in the region. `cells.len()` is a power of two.
#[derive(Clone, Copy)]
pub(crate) struct ReadyQueue<'r> {
    cells: &'r [QueueCell],
    ctl: &'r QueueCtl,
    mask: u64,
}

impl<'r> ReadyQueue<'r> {
    /// A queue over freshly formatted `cells` (cell `i` made by `QueueCell::new(i)`).
    pub(crate) fn new(cells: &'r [QueueCell], ctl: &'r QueueCtl) -> Self {
        debug_assert!(cells.len().is_power_of_two());
        ReadyQueue {
            cells,
            ctl,
            mask: cells.len() as u64 - 1,
        }
    }

    #[inline]
    fn cell(&self, pos: u64) -> &QueueCell {
        // In bounds: `mask == cells.len() - 1` and the length is a power of two.
        &self.cells[(pos & self.mask) as usize]
    }

    /// Appends `value`, or gives it back when the queue is full.
    pub(crate) fn push(&self, value: u64) -> Result<(), u64> {
        let mut pos = self.ctl.enqueue.0.load(Ordering::Relaxed);
        loop {
            let cell = self.cell(pos);
            let seq = cell.seq.load(Ordering::Acquire);
            let diff = seq.wrapping_sub(pos) as i64;
            if diff == 0 {
                match self.ctl.enqueue.0.compare_exchange_weak(
                    pos,
                    pos + 1,
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => {
                        cell.value.store(value, Ordering::Relaxed);
                        cell.seq.store(pos + 1, Ordering::Release);
                        return Ok(());
                    }
                    Err(now) => pos = now,
                }
            } else if diff < 0 {
                return Err(value);
            } else {
                pos = self.ctl.enqueue.0.load(Ordering::Relaxed);
            }
        }
    }

    /// Takes the oldest value, or `None` if the queue is (or looks) empty.
    pub(crate) fn pop(&self) -> Option<u64> {
        let mut pos = self.ctl.dequeue.0.load(Ordering::Relaxed);
        loop {
            let cell = self.cell(pos);
            let seq = cell.seq.load(Ordering::Acquire);
            let diff = seq.wrapping_sub(pos + 1) as i64;
            if diff == 0 {
                match self.ctl.dequeue.0.compare_exchange_weak(
                    pos,
                    pos + 1,
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => {
                        let value = cell.value.load(Ordering::Relaxed);
                        cell.seq.store(pos + self.mask + 1, Ordering::Release);
                        return Some(value);
                    }
                    Err(now) => pos = now,
                }
            } else if diff < 0 {
                return None;
            } else {
                pos = self.ctl.dequeue.0.load(Ordering::Relaxed);
            }
        }
    }

    /// A cheap hint that the queue holds something (two relaxed loads). May be stale.
    #[inline]
    pub(crate) fn maybe_nonempty(&self) -> bool {
        self.ctl.enqueue.0.load(Ordering::Relaxed) != self.ctl.dequeue.0.load(Ordering::Relaxed)
    }
}

/// Publishes slot `g`'s task to the ready queue of its class, stamped `now` (profiling at
/// `level`). The caller is the one thread whose fan-in decrement reached zero.
pub(crate) fn make_ready(t: &Tables<'_>, g: usize, now: u64, level: ProfileLevel) {
    let slot = t.slot(g);
    if t.cfg.record_latency || level == ProfileLevel::Tasks {
        // `now` is a lap-clock stamp taken a little before this moment: a producer that
        // finished while the orchestrator was submitting this task may carry a stamp older
        // than the submit stamp. A task is never ready before it was submitted.
        let row = &t.prof_rows[g];
        row.ready.store(
            now.max(row.submit.load(Ordering::Relaxed)),
            Ordering::Relaxed,
        );
    }
    let id = t.task_at(g);
    let meta = match Meta::decode(slot.meta.load(Ordering::Relaxed)) {
        Ok(meta) => meta,
        Err(class) => {
            t.shared.status.fail(
                FatalError::new(FatalKind::CorruptSlot)
                    .with_task(id)
                    .with_detail(class as u64, 0),
            );
            return;
        }
    };
    if t.queue(meta.class).push(id.raw()).is_err() {
        t.shared.status.fail(
            FatalError::new(FatalKind::ReadyQueueOverflow)
                .with_task(id)
                .with_detail(meta.class as u64, 0),
        );
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
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
        let (cells, ctl) = queue(64);
        let q = ReadyQueue::new(&cells, &ctl);
        let per = if cfg!(miri) { 200u64 } else { 20_000 };
        let popped: Vec<Vec<u64>> = std::thread::scope(|s| {
            for p in 0..2u64 {
                s.spawn(move || {
                    for i in 0..per {
                        let mut v = p << 32 | i;
                        while let Err(back) = q.push(v) {
                            v = back;
                            std::hint::spin_loop();
                        }
                    }
                });
            }
            let consumers: Vec<_> = (0..2)
                .map(|_| {
                    s.spawn(move || {
                        let mut got = Vec::new();
                        let mut idle = 0u64;
                        while idle < if cfg!(miri) { 20_000 } else { 2_000_000 } {
                            match q.pop() {
                                Some(v) => {
                                    got.push(v);
                                    idle = 0;
                                }
                                None => idle += 1,
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
