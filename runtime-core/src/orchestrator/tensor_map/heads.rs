//! The tensor map's buffer index: an open-addressing table (linear probing, no tombstones)
//! from a buffer to its head (its mask of classes in use and its main class's list), or from
//! a buffer and a class to that class's list.
#![forbid(unsafe_code)]

use super::entry::CellIndex;
use crate::region::raw::masked::MaskedTable;

/// Kind of a free slot: no key has it.
const FREE: u8 = 0;
/// Kind of a buffer's head: its mask of classes in use, and its main class's list.
const BUFFER: u8 = 0xff;
/// Kind of a class's list (every entry of one class of a buffer): this bit, plus the class.
const CLASS_LIST: u8 = 0x80;
// A head's kind is never that of a free slot.
const _: () = assert!(CLASS_LIST != FREE && BUFFER != FREE);

/// What a head stands for: a buffer, or one of its class lists.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Key {
    buffer: u64,
    /// `CLASS_LIST | class`, or `BUFFER`.
    kind: u8,
}

impl Key {
    /// The buffer's head: its mask of classes in use.
    pub(crate) const fn buffer(buffer: u64) -> Self {
        Key {
            buffer,
            kind: BUFFER,
        }
    }

    /// The list of the buffer's entries of `class`.
    pub(crate) const fn class(buffer: u64, class: u8) -> Self {
        Key {
            buffer,
            kind: CLASS_LIST | class,
        }
    }

    /// The key's hash (multiplicative: its top bits are the best mixed).
    #[inline]
    fn hash(&self) -> u64 {
        let x = self.buffer ^ (self.kind as u64).wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        x.wrapping_mul(0x9e37_79b9_7f4a_7c15)
    }
}

/// A buffer's hash, that of its head's key: its top bits pick the head's home slot, and the
/// buckets of its cells follow from it ([`super::buckets::Buckets::of`]). Computed beside a
/// probe for the head, it is the same multiplication.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct BufferHash(pub(super) u64);

impl BufferHash {
    /// The hash of `buffer`.
    #[inline]
    pub(crate) fn of(buffer: u64) -> Self {
        BufferHash(Key::buffer(buffer).hash())
    }
}

/// One slot of the table.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub(crate) struct Head {
    buffer: u64,
    /// A buffer's head: bit `c - MIN_CLASS` set while class `c` has entries.
    pub(crate) mask: u64,
    /// A list's first entry. A buffer's head holds the list of its main class.
    pub(crate) first: CellIndex,
    /// The key's kind; 0: a free slot.
    kind: u8,
    /// A buffer's head: the class whose list it holds (0: none), so that a buffer using one
    /// size of tile needs no class head.
    pub(crate) main: u8,
}

impl Head {
    /// A free slot.
    pub(crate) const EMPTY: Head = Head {
        buffer: 0,
        mask: 0,
        first: CellIndex::NIL,
        kind: FREE,
        main: 0,
    };

    /// Whether it is `k`'s head.
    pub(crate) fn is(&self, k: &Key) -> bool {
        self.kind == k.kind && self.buffer == k.buffer
    }
}

/// A slot of the buffer index. Slot numbers found before a removal are stale after it
/// ([`Heads::remove`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct HeadIndex(usize);

/// Where a probe for a key ended: the key's slot, or the free slot where it would go (good
/// until the next insertion).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Probe {
    Found(HeadIndex),
    Vacant(HeadIndex),
}

/// Slots the index needs for `cells` entries, a power of two (at least 2, so the table is
/// never empty). A buffer's head holds one class's list, and every other class in use has a
/// head, so a buffer has no more heads than entries: at most `cells` heads, which the table
/// keeps at most half full.
pub(crate) fn heads_len(cells: usize) -> usize {
    crate::index::map_len(cells.max(1))
}

/// The table over its slots ([`heads_len`] of them), read without bounds checks.
pub(crate) struct Heads<'r> {
    slots: MaskedTable<'r, Head>,
    /// `64 - log2(len)`: a hash's top bits pick the home slot.
    shift: u32,
}

impl<'r> Heads<'r> {
    /// An empty table over `slots` ([`heads_len`] long: a power of two, at least 2).
    pub(crate) fn new(slots: &'r mut [Head]) -> Self {
        slots.fill(Head::EMPTY);
        let shift = u64::BITS - slots.len().max(2).trailing_zeros();
        Heads {
            slots: MaskedTable::new(slots),
            shift,
        }
    }

    /// The slot holding `k`'s head, or the free slot where it would go.
    #[inline]
    pub(crate) fn probe(&self, k: &Key) -> Probe {
        let mask = self.slots.len() - 1;
        let mut i = self.home(k);
        loop {
            let h = self.slots.at(i);
            if h.is(k) {
                return Probe::Found(HeadIndex(i));
            }
            if h.kind == FREE {
                return Probe::Vacant(HeadIndex(i));
            }
            i = (i + 1) & mask;
            debug_assert!(i != self.home(k), "the tensor map's index is full");
        }
    }

    /// The slot holding `k`'s head.
    #[inline]
    pub(crate) fn find(&self, k: &Key) -> Option<HeadIndex> {
        match self.probe(k) {
            Probe::Found(i) => Some(i),
            Probe::Vacant(_) => None,
        }
    }

    /// Makes `k`'s head (empty list, empty mask) in free slot `i`, which a probe for `k`
    /// returned with no insertion since. Returns `i`.
    pub(crate) fn claim(&mut self, i: HeadIndex, k: &Key) -> HeadIndex {
        debug_assert_eq!(self.probe(k), Probe::Vacant(i));
        *self.slots.at_mut(i.0) = Head {
            buffer: k.buffer,
            kind: k.kind,
            ..Head::EMPTY
        };
        i
    }

    /// The slot holding `k`'s head, made if there was none.
    pub(crate) fn find_or_insert(&mut self, k: &Key) -> HeadIndex {
        match self.probe(k) {
            Probe::Found(i) => i,
            Probe::Vacant(i) => self.claim(i, k),
        }
    }

    /// The head in slot `i`.
    pub(crate) fn at(&self, i: HeadIndex) -> &Head {
        self.slots.at(i.0)
    }

    /// The head in slot `i`, to change its list or mask.
    pub(crate) fn at_mut(&mut self, i: HeadIndex) -> &mut Head {
        self.slots.at_mut(i.0)
    }

    /// Frees slot `i`, moving later members of its probe chain back: slot numbers found
    /// before a removal are stale after it.
    pub(crate) fn remove(&mut self, i: HeadIndex) {
        let mut i = i.0;
        let mask = self.slots.len() - 1;
        let mut j = i;
        loop {
            j = (j + 1) & mask;
            let h = *self.slots.at(j);
            if h.kind == FREE {
                break;
            }
            let home = self.home(&Key {
                buffer: h.buffer,
                kind: h.kind,
            });
            // `h` may move back to `i` unless its home lies cyclically in `(i, j]`.
            let stays = if i <= j {
                i < home && home <= j
            } else {
                i < home || home <= j
            };
            if !stays {
                *self.slots.at_mut(i) = h;
                i = j;
            }
        }
        *self.slots.at_mut(i) = Head::EMPTY;
    }

    /// The slot where the probe for buffer `base`'s head starts (for tests).
    #[cfg(all(test, not(loom)))]
    pub(super) fn home_of_buffer(&self, base: u64) -> usize {
        self.home(&Key::buffer(base))
    }

    /// Slots in use (for tests).
    #[cfg(all(test, not(loom)))]
    pub(crate) fn used(&self) -> usize {
        self.slots.iter().filter(|h| h.kind != FREE).count()
    }

    /// Where `k`'s probe starts: the top bits of its hash.
    #[inline]
    fn home(&self, k: &Key) -> usize {
        (k.hash() >> self.shift) as usize
    }
}
