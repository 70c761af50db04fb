//! What the tensor map keeps of each argument of a live task, one [`MapEntry`] a cell (cell
//! `k` of slot `g` is `g * max_tensors + k`), one cache line: hottest first, the byte range
//! and the list links, all a lookup reads to pass an entry by; then whose argument it is and
//! which bucket lists it, read once the byte ranges meet, and when the entry leaves. One
//! record rather than two arrays: an entry is written with one index, and read with one.
//!
//! The tile itself, read for the exact test of a tile that is not dense (a dense tile is its
//! byte range), is the kernel's copy: the slot's tensor cell of the same index.
#![forbid(unsafe_code)]

use crate::index::table_index;
use crate::region::carve::Carve;
use crate::region::config::{Config, ConfigError};
use crate::tables::SlotIndex;

table_index! {
    /// A cell of the map: cell `k` of task slot `g` is `g * max_tensors + k`, and indexes
    /// both arrays alike (and the slots' tensor cells).
    CellIndex;
}

impl CellIndex {
    /// Cell `k` of slot `g`, with `per_slot` cells per slot.
    #[inline]
    pub(super) fn of(g: SlotIndex, k: usize, per_slot: usize) -> Self {
        CellIndex((g.get() * per_slot + k) as u32)
    }

    /// The first `count` cells of slot `g` (at most `per_slot`).
    #[inline]
    pub(super) fn of_slot(
        g: SlotIndex,
        count: usize,
        per_slot: usize,
    ) -> impl Iterator<Item = Self> {
        let first = (g.get() * per_slot) as u32;
        (first..first + count.min(per_slot) as u32).map(CellIndex)
    }
}

const NIL: CellIndex = CellIndex::NIL;

/// An entry: its byte range and its links in two lists (its cell's, its class's), then its
/// argument's buffer, task and use.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
pub(crate) struct MapEntry {
    /// First byte.
    pub(super) lo: u64,
    /// One past the last byte; 0: the cell holds no entry (a tile has at least one byte).
    pub(super) hi: u64,
    /// `[prev, next]` in each list.
    pub(super) links: [[CellIndex; 2]; 2],
    pub(super) buffer: u64,
    pub(super) task: u64,
    /// The bucket whose list holds the entry (it never moves).
    pub(super) bucket: u32,
    pub(super) writes: bool,
    /// The tile is its byte range; it was not stored.
    pub(super) dense: bool,
}

impl MapEntry {
    /// An empty cell.
    pub(crate) const fn new() -> Self {
        MapEntry {
            lo: 0,
            hi: 0,
            links: [[NIL; 2]; 2],
            buffer: 0,
            task: 0,
            bucket: 0,
            writes: false,
            dense: true,
        }
    }

    /// Whether the cell holds an entry.
    pub(super) fn linked(&self) -> bool {
        self.hi != 0
    }
}

/// Entries for `cells` cells: a power of two, so that a cell's entry is found by masking
/// its index, unchecked. As many when rings, window and `max_tensors` are powers of two (the
/// default), at most twice as many otherwise (the tiles the map no longer keeps took more
/// than that).
pub(crate) fn cells_len(cells: usize) -> usize {
    cells.next_power_of_two()
}

/// The orchestrator's map storage: `max_tensors` entry cells per task slot ([`cells_len`]
/// entries), the buffer index ([`super::heads_len`] slots) and the cell index
/// ([`super::buckets_len`] buckets).
pub(crate) struct TensorStore<'r> {
    pub(crate) entries: &'r mut [MapEntry],
    pub(crate) heads: &'r mut [super::Head],
    pub(crate) buckets: &'r mut [CellIndex],
}

impl<'r> TensorStore<'r> {
    /// Takes the map storage of `cfg` from `c`.
    pub(crate) fn carve(cfg: &Config, c: &mut impl Carve<'r>) -> Result<Self, ConfigError> {
        let cells = cfg.rings as usize * cfg.task_window as usize * cfg.max_tensors as usize;
        Ok(TensorStore {
            entries: c.table(cells_len(cells), |_| MapEntry::new())?,
            heads: c.table(super::heads_len(cells), |_| super::Head::EMPTY)?,
            buckets: c.table(super::buckets_len(cells), |_| NIL)?,
        })
    }
}

/// Entries a submitted task's writes cover exactly, found by its lookups.
#[derive(Default)]
pub(crate) struct Covered(pub(super) heapless::Vec<CellIndex, 32>);
