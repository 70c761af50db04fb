//! The tensor map's cell index: a fixed array of list heads, one `u32` each. A cell's entries
//! are in the list of the bucket its key (buffer, class, cell) hashes to, beside those of any
//! other cell that hashes there; a walk tells them apart by buffer and byte range. A bucket
//! stores no key: it never moves, and an entry leaves it by being unlinked.
#![forbid(unsafe_code)]

use super::entry::CellIndex;
use super::heads::BufferHash;
use crate::region::raw::masked::MaskedTable;

const NIL: CellIndex = CellIndex::NIL;

/// Buckets for `cells` entries: a power of two, at least eight times as many (4 bytes each),
/// so that a lookup mostly finds its cell's bucket empty or holding that cell alone (and at
/// least 8, so the index is never empty). Twice the four times it was: half as often does a
/// new argument find other cells' entries in its bucket (1 in 18 rather than 1 in 9 in the
/// submit bench, every cell live), for 16 bytes a cell.
pub(crate) fn buckets_len(cells: usize) -> usize {
    crate::index::map_len(4 * cells.max(1))
}

/// A bucket of the cell index.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct BucketIndex(usize);

impl BucketIndex {
    /// The bucket as an entry stores it.
    #[inline]
    pub(crate) fn word(self) -> u32 {
        self.0 as u32
    }
    /// The bucket an entry names.
    #[inline]
    pub(crate) fn from_word(word: u32) -> Self {
        BucketIndex(word as usize)
    }
}

/// The buckets ([`buckets_len`] of them), read without bounds checks.
pub(crate) struct Buckets<'r> {
    first: MaskedTable<'r, CellIndex>,
    /// `64 - log2(len)`: a hash's top bits pick a buffer's class's first bucket.
    shift: u32,
}

impl<'r> Buckets<'r> {
    /// Empty buckets over `first` ([`buckets_len`] long: a power of two).
    pub(crate) fn new(first: &'r mut [CellIndex]) -> Self {
        first.fill(NIL);
        let shift = u64::BITS - first.len().max(2).trailing_zeros();
        Buckets {
            first: MaskedTable::new(first),
            shift,
        }
    }

    /// The bucket of `cell` of `class` in the buffer of hash `buffer`. The cells of one class
    /// of a buffer go to consecutive buckets, from a start that a second hash of the
    /// buffer's, with the class, picks: tiles next to each other in memory have neighbouring
    /// buckets (walking a matrix tile by tile reuses the index's cache lines), and a buffer's
    /// cells of one class share no bucket with each other until they outnumber the buckets.
    #[inline]
    pub(crate) fn of(&self, buffer: BufferHash, class: u8, cell: u64) -> BucketIndex {
        let start = (buffer.0 ^ class as u64).wrapping_mul(0xff51_afd7_ed55_8ccd) >> self.shift;
        BucketIndex(start.wrapping_add(cell) as usize & self.first.len().wrapping_sub(1))
    }

    /// The first entry of bucket `b`'s list.
    #[inline]
    pub(crate) fn first(&self, b: BucketIndex) -> CellIndex {
        *self.first.at(b.0)
    }

    /// Bucket `b`'s first entry, to change.
    #[inline]
    pub(crate) fn first_mut(&mut self, b: BucketIndex) -> &mut CellIndex {
        self.first.at_mut(b.0)
    }

    /// Buckets with a list (for tests).
    #[cfg(all(test, not(loom)))]
    pub(crate) fn used(&self) -> usize {
        self.first.iter().filter(|&&e| e != NIL).count()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn neighbouring_cells_share_a_line_and_keys_spread() {
        /// `u32`s in a cache line.
        const LINE: usize = 16;
        let len = buckets_len(1 << 12);
        let mut first = std::vec![NIL; len];
        let b = Buckets::new(&mut first);
        assert!(first_is_nil(&b));
        let h = BufferHash::of;
        // Neighbouring cells: consecutive buckets.
        let start = b.of(h(0x4000), 8, 32).0;
        for cell in 32..48 {
            assert_eq!(
                b.of(h(0x4000), 8, cell).0,
                (start + (cell - 32) as usize) % len
            );
        }
        // Other buffers and classes start elsewhere (not all on one line).
        let lines: std::collections::BTreeSet<usize> = (0..64u64)
            .map(|i| b.of(h(0x4000 + i * 0x1_0000), 8, 32).0 / LINE)
            .chain((1..=64u8).map(|c| b.of(h(0x4000), c, 32).0 / LINE))
            .collect();
        assert!(lines.len() > 100, "{} lines", lines.len());
    }

    fn first_is_nil(b: &Buckets<'_>) -> bool {
        b.used() == 0 && b.first(BucketIndex(0)) == NIL
    }
}
