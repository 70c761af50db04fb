//! A bounded lock-free ring of fixed-size records (Vyukov's array queue with 64-bit
//! positions), the one algorithm under the ready queues and the completion queues.
//!
//! Each cell carries a sequence number: `pos` when free for the push at `pos`, `pos + 1` when
//! it holds that push's record, `pos + capacity` once popped. Positions are absolute and
//! 64-bit, so they never wrap in a run, the cells are never zeroed again, and a stale cell
//! (one lap behind) is never taken for a fresh one. A push that finds the ring full gives its
//! record back, it never overwrites. Pops finish out of order, so a push may find its cell
//! still held by a pop in flight while the ring holds fewer records than its capacity: that
//! push waits for the pop (a few instructions, none of them a wait) rather than report a full
//! ring. A consumer reads a record only after the producer's Release store of its sequence
//! number, so never half-written. One producer's records are popped in its push order.
#![forbid(unsafe_code)]

use crate::sync::{AtomicU64, CachePadded, Ordering, spin_loop};

/// One cell: its sequence number and an `N`-word record.
pub struct SeqCell<const N: usize> {
    seq: AtomicU64,
    words: [AtomicU64; N],
}

impl<const N: usize> SeqCell<N> {
    /// The cell at `index` of an empty ring.
    pub fn new(index: usize) -> Self {
        SeqCell {
            seq: AtomicU64::new(index as u64),
            words: core::array::from_fn(|_| AtomicU64::new(0)),
        }
    }
}

/// The two positions of a ring, each on its own cache line.
pub struct RingEnds {
    enqueue: CachePadded<AtomicU64>,
    dequeue: CachePadded<AtomicU64>,
}

impl RingEnds {
    /// The positions of an empty ring.
    pub fn new() -> Self {
        RingEnds {
            enqueue: CachePadded(AtomicU64::new(0)),
            dequeue: CachePadded(AtomicU64::new(0)),
        }
    }
}

impl Default for RingEnds {
    fn default() -> Self {
        Self::new()
    }
}

/// A view of one ring. `cells.len()` is a power of two.
#[derive(Clone, Copy)]
pub(crate) struct SeqRing<'a, const N: usize> {
    cells: &'a [SeqCell<N>],
    ends: &'a RingEnds,
    mask: u64,
}

impl<'a, const N: usize> SeqRing<'a, N> {
    /// A ring over freshly made `cells` (cell `i` made by `SeqCell::new(i)`). Callers size
    /// them to a power of two; cells past the largest power of two that fits are unused, and
    /// a ring of no cells refuses every push.
    pub(crate) fn new(cells: &'a [SeqCell<N>], ends: &'a RingEnds) -> Self {
        let usable = match cells.len() {
            0 => 0,
            n => 1 << n.ilog2(),
        };
        SeqRing {
            cells: &cells[..usable],
            ends,
            mask: (usable as u64).wrapping_sub(1),
        }
    }

    /// Cells of the ring.
    pub(crate) fn capacity(&self) -> usize {
        self.cells.len()
    }

    /// Records pushed and not yet popped, as two relaxed loads see them: exact when no push
    /// or pop runs meanwhile, else a snapshot for statistics (never used to decide).
    pub(crate) fn len(&self) -> u64 {
        let enq = self.ends.enqueue.0.load(Ordering::Relaxed);
        let deq = self.ends.dequeue.0.load(Ordering::Relaxed);
        enq.saturating_sub(deq)
    }

    #[inline]
    fn cell(&self, pos: u64) -> &SeqCell<N> {
        // In bounds: `mask == cells.len() - 1` and the length is a power of two.
        &self.cells[(pos & self.mask) as usize]
    }

    /// Appends `record`, or gives it back when the ring is full. Any thread.
    pub(crate) fn push(&self, record: [u64; N]) -> Result<(), [u64; N]> {
        if self.cells.is_empty() {
            return Err(record);
        }
        let mut pos = self.ends.enqueue.0.load(Ordering::Relaxed);
        loop {
            let cell = self.cell(pos);
            let seq = cell.seq.load(Ordering::Acquire);
            let diff = seq.wrapping_sub(pos) as i64;
            if diff == 0 {
                match self.ends.enqueue.0.compare_exchange_weak(
                    pos,
                    pos + 1,
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => {
                        for (w, v) in cell.words.iter().zip(record) {
                            w.store(v, Ordering::Relaxed);
                        }
                        cell.seq.store(pos + 1, Ordering::Release);
                        return Ok(());
                    }
                    Err(now) => pos = now,
                }
            } else if diff < 0 {
                // The cell still holds the record pushed one lap ago. The ring is full if
                // that record was not taken yet. But pops finish out of order: if a pop
                // claimed it (the dequeue position is past it) and has not released the
                // cell yet, the ring holds fewer than `capacity` records while this cell
                // is busy. That pop stores the cell's sequence number a few instructions
                // after its claim, with no wait between, so this push waits for it. The
                // read-modify-write reads the latest dequeue position, never a stale one
                // that would make the ring look full.
                let dequeued = self.ends.dequeue.0.fetch_add(0, Ordering::Relaxed);
                if pos.wrapping_sub(dequeued) >= self.capacity() as u64 {
                    return Err(record);
                }
                spin_loop();
                pos = self.ends.enqueue.0.load(Ordering::Relaxed);
            } else {
                pos = self.ends.enqueue.0.load(Ordering::Relaxed);
            }
        }
    }

    /// Takes the oldest record, or `None` if the ring is (or looks) empty. Any thread.
    pub(crate) fn pop(&self) -> Option<[u64; N]> {
        let mut pos = self.ends.dequeue.0.load(Ordering::Relaxed);
        loop {
            // A ring of no cells has none to give (the one bounds check serves for both).
            let cell = self.cells.get((pos & self.mask) as usize)?;
            let seq = cell.seq.load(Ordering::Acquire);
            let diff = seq.wrapping_sub(pos + 1) as i64;
            if diff == 0 {
                match self.ends.dequeue.0.compare_exchange_weak(
                    pos,
                    pos + 1,
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => {
                        let record =
                            core::array::from_fn(|i| cell.words[i].load(Ordering::Relaxed));
                        cell.seq.store(pos + self.mask + 1, Ordering::Release);
                        return Some(record);
                    }
                    Err(now) => pos = now,
                }
            } else if diff < 0 {
                return None;
            } else {
                pos = self.ends.dequeue.0.load(Ordering::Relaxed);
            }
        }
    }

    /// A cheap hint that the ring holds something (two relaxed loads). May be stale.
    #[inline]
    pub(crate) fn maybe_nonempty(&self) -> bool {
        self.ends.enqueue.0.load(Ordering::Relaxed) != self.ends.dequeue.0.load(Ordering::Relaxed)
    }

    /// Records pushed so far (tests: which path a task took).
    #[cfg(all(test, not(loom)))]
    pub(crate) fn pushed(&self) -> u64 {
        self.ends.enqueue.0.load(Ordering::Relaxed)
    }
}
