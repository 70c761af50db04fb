//! The deferred-condition slab of one payload buffer: the kernel of the buffer's token
//! appends conditions, the scheduler reads them after the token's FIN.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use pto_runtime_core::{Condition, MAX_CONDITIONS, RawCondition};

/// One stored condition, as a [`RawCondition`]: kind, the word's address or engine id, and
/// the expected value.
struct Cell {
    kind: AtomicU32,
    word: AtomicU64,
    expected: AtomicU64,
}

/// Conditions of the token running in one payload buffer. Written only by the core while
/// its kernel runs; published by the FIN store (Release) and read after the scheduler's
/// Acquire load of the status word.
pub(crate) struct Slab {
    /// Conditions registered, including any past the capacity (not stored).
    count: AtomicU32,
    cells: [Cell; MAX_CONDITIONS as usize],
}

/// The kernel registered more conditions than a slab stores.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("a kernel may register at most {MAX_CONDITIONS} deferred conditions per lane")]
pub struct SlabFull;

impl Slab {
    pub(crate) fn new() -> Self {
        Slab {
            count: AtomicU32::new(0),
            cells: std::array::from_fn(|_| Cell {
                kind: AtomicU32::new(0),
                word: AtomicU64::new(0),
                expected: AtomicU64::new(0),
            }),
        }
    }

    /// Empties the slab for the next token (the core, before running a kernel). Writes only
    /// if needed: the scheduler reads the count after every FIN, and a store on every token
    /// would move the line back and forth between the two.
    pub(crate) fn clear(&self) {
        if self.count.load(Ordering::Relaxed) != 0 {
            self.count.store(0, Ordering::Relaxed);
        }
    }

    /// Appends `c`. Past the capacity the condition is counted but not stored, so the
    /// scheduler sees the overflow and fails the task with a typed error.
    pub(crate) fn push(&self, c: Condition) -> Result<(), SlabFull> {
        let i = self.count.load(Ordering::Relaxed);
        self.count.store(i.saturating_add(1), Ordering::Relaxed);
        let cell = self.cells.get(i as usize).ok_or(SlabFull)?;
        let raw = RawCondition::encode(c);
        cell.kind.store(raw.kind, Ordering::Relaxed);
        cell.word.store(raw.word, Ordering::Relaxed);
        cell.expected.store(raw.expected, Ordering::Relaxed);
        Ok(())
    }

    /// Conditions registered (possibly more than stored).
    pub(crate) fn len(&self) -> usize {
        self.count.load(Ordering::Relaxed) as usize
    }

    /// Stored condition `i`, as the kernel wrote it.
    pub(crate) fn get(&self, i: usize) -> Option<RawCondition> {
        if i >= self.len() {
            return None;
        }
        let cell = self.cells.get(i)?;
        Some(RawCondition {
            kind: cell.kind.load(Ordering::Relaxed),
            reserved: 0,
            word: cell.word.load(Ordering::Relaxed),
            expected: cell.expected.load(Ordering::Relaxed),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stores_up_to_capacity_and_counts_the_rest() {
        let s = Slab::new();
        for i in 0..MAX_CONDITIONS as u64 {
            s.push(Condition::counter64(8 * i, i)).unwrap();
        }
        assert_eq!(s.push(Condition::engine(0, 1)), Err(SlabFull));
        assert_eq!(s.len(), MAX_CONDITIONS as usize + 1);
        assert_eq!(s.get(3), Some(Condition::counter64(24, 3).into()));
        assert_eq!(s.get(MAX_CONDITIONS as usize), None);
        s.clear();
        assert_eq!((s.len(), s.get(0)), (0, None));
    }
}
