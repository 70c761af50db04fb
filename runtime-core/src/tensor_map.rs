//! The tensor map: which live tasks read or write which tiles, so a new task's dependencies
//! follow from its tensor arguments.
//!
//! Only the orchestrator uses it, so it is plain data, carved from the region and handed to the
//! orchestrator with its handle. Every task slot owns `max_tensors` entry cells (cell `k` of
//! slot `g` holds argument `k` of the slot's tenant); a buffer's entries are linked in a list
//! found through an open-addressing index keyed by the buffer. Entries of retired tasks are
//! unlinked when a lookup meets them, and at the latest when their slot gets its next tenant.
#![forbid(unsafe_code)]

use crate::deferred::NIL;
use crate::ids::TaskId;
use crate::tensor::{Access, Tile, overlaps};

/// A tensor argument: a tile of a buffer, and how the task uses it. Tiles of different buffers
/// never conflict; within a buffer, conflicts follow [`overlaps`].
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct TensorArg {
    /// The buffer the tile belongs to (its base address, say): the map's key.
    pub buffer: u64,
    /// The elements the task touches.
    pub tile: Tile,
    /// Read, written, or both.
    pub access: Access,
}

impl TensorArg {
    /// The task reads `tile` of `buffer`.
    pub const fn input(buffer: u64, tile: Tile) -> Self {
        TensorArg {
            buffer,
            tile,
            access: Access::In,
        }
    }

    /// The task writes `tile` of `buffer`.
    pub const fn output(buffer: u64, tile: Tile) -> Self {
        TensorArg {
            buffer,
            tile,
            access: Access::Out,
        }
    }

    /// The task reads, then writes `tile` of `buffer`.
    pub const fn inout(buffer: u64, tile: Tile) -> Self {
        TensorArg {
            buffer,
            tile,
            access: Access::InOut,
        }
    }

    /// A task doing `self` (whose tile spans bytes `range`) must wait for an earlier task
    /// with entry `e` of the same buffer: read after write, write after write, write after
    /// read, on overlapping tiles. The cheap tests go first.
    fn conflicts_with(&self, range: (u64, u64), e: &MapEntry) -> bool {
        (self.access.writes() || e.arg.access.writes())
            && range.0 < e.hi
            && e.lo < range.1
            && overlaps(&self.tile, &e.arg.tile)
    }
}

/// One argument of a live task, in its buffer's list.
#[derive(Clone, Copy, Debug)]
pub(crate) struct MapEntry {
    arg: TensorArg,
    /// The tile's byte range, for a quick rejection before the exact test.
    lo: u64,
    hi: u64,
    task: u64,
    prev: u32,
    next: u32,
    linked: bool,
}

impl MapEntry {
    pub(crate) const fn new() -> Self {
        MapEntry {
            arg: TensorArg::input(0, Tile::contiguous(0, 1, 1)),
            lo: 0,
            hi: 0,
            task: 0,
            prev: NIL,
            next: NIL,
            linked: false,
        }
    }
}

/// A buffer with entries: its key and the first entry of its list (`NIL`: slot unused).
#[derive(Clone, Copy, Debug)]
pub(crate) struct BufferHead {
    buffer: u64,
    first: u32,
}

impl BufferHead {
    pub(crate) const fn new() -> Self {
        BufferHead {
            buffer: 0,
            first: NIL,
        }
    }
}

/// The orchestrator's map storage: `max_tensors` cells per task slot, and the buffer index
/// (a power of two at least twice the cells).
pub(crate) struct TensorStore<'r> {
    pub(crate) entries: &'r mut [MapEntry],
    pub(crate) heads: &'r mut [BufferHead],
}

/// The tensor map over its storage.
pub(crate) struct TensorMap<'r> {
    s: TensorStore<'r>,
    per_slot: usize,
}

impl<'r> TensorMap<'r> {
    /// A map with no entries, `per_slot` cells per task slot.
    pub(crate) fn new(s: TensorStore<'r>, per_slot: usize) -> Self {
        s.entries.fill(MapEntry::new());
        s.heads.fill(BufferHead::new());
        TensorMap { s, per_slot }
    }

    /// Calls `dep` with every live task that `arg` must wait for. `live` says whether a task
    /// has not retired yet; entries of retired tasks are unlinked on the way.
    pub(crate) fn conflicts<E>(
        &mut self,
        arg: &TensorArg,
        live: impl Fn(TaskId) -> bool,
        mut dep: impl FnMut(TaskId) -> Result<(), E>,
    ) -> Result<(), E> {
        let Some(h) = self.find(arg.buffer) else {
            return Ok(());
        };
        let range = arg.tile.bytes().unwrap_or((0, u64::MAX));
        let mut e = self.s.heads[h].first;
        while e != NIL {
            let entry = &self.s.entries[e as usize];
            let (next, task) = (entry.next, TaskId::from_raw(entry.task));
            if !live(task) {
                self.unlink(e);
            } else if arg.conflicts_with(range, entry) {
                dep(task)?;
            }
            e = next;
        }
        Ok(())
    }

    /// Records the arguments of `task`, the new tenant of slot `g` (at most `per_slot` of
    /// them), after dropping whatever the slot's previous tenant left. An earlier entry whose
    /// tile one of these arguments writes exactly is dropped too: whoever would have waited
    /// for it now waits for `task`, which itself waits for it.
    pub(crate) fn register(&mut self, g: usize, task: TaskId, args: &[TensorArg]) {
        let cells = g * self.per_slot..(g + 1) * self.per_slot;
        for c in cells.clone() {
            if self.s.entries[c].linked {
                self.unlink(c as u32);
            }
        }
        for (c, arg) in cells.zip(args) {
            if arg.access.writes() {
                self.drop_covered(arg);
            }
            self.link(c as u32, task, *arg);
        }
    }

    /// Entries linked now, all buffers (for tests).
    #[cfg(all(test, not(loom)))]
    pub(crate) fn linked(&self) -> usize {
        self.s.entries.iter().filter(|e| e.linked).count()
    }

    fn drop_covered(&mut self, arg: &TensorArg) {
        let Some(h) = self.find(arg.buffer) else {
            return;
        };
        let mut e = self.s.heads[h].first;
        while e != NIL {
            let entry = self.s.entries[e as usize];
            if entry.arg.tile == arg.tile {
                self.unlink(e);
            }
            e = entry.next;
        }
    }

    fn link(&mut self, c: u32, task: TaskId, arg: TensorArg) {
        let h = match self.find(arg.buffer) {
            Some(h) => h,
            None => self.insert_head(arg.buffer),
        };
        let first = self.s.heads[h].first;
        let (lo, hi) = arg.tile.bytes().unwrap_or((0, u64::MAX));
        self.s.entries[c as usize] = MapEntry {
            arg,
            lo,
            hi,
            task: task.raw(),
            prev: NIL,
            next: first,
            linked: true,
        };
        if first != NIL {
            self.s.entries[first as usize].prev = c;
        }
        self.s.heads[h].first = c;
    }

    fn unlink(&mut self, c: u32) {
        let MapEntry {
            prev, next, arg, ..
        } = self.s.entries[c as usize];
        self.s.entries[c as usize].linked = false;
        if next != NIL {
            self.s.entries[next as usize].prev = prev;
        }
        if prev != NIL {
            self.s.entries[prev as usize].next = next;
            return;
        }
        // `c` was first in its buffer's list.
        if let Some(h) = self.find(arg.buffer) {
            self.s.heads[h].first = next;
            if next == NIL {
                self.remove_head(h);
            }
        }
    }

    fn home(&self, buffer: u64) -> usize {
        let mask = self.s.heads.len() - 1;
        (buffer.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 32) as usize & mask
    }

    fn find(&self, buffer: u64) -> Option<usize> {
        let mask = self.s.heads.len().checked_sub(1)?;
        let mut i = self.home(buffer);
        loop {
            let h = &self.s.heads[i];
            if h.first == NIL {
                return None;
            }
            if h.buffer == buffer {
                return Some(i);
            }
            i = (i + 1) & mask;
        }
    }

    /// A head for `buffer` (not indexed yet). The index is at most half full by sizing.
    fn insert_head(&mut self, buffer: u64) -> usize {
        let mask = self.s.heads.len() - 1;
        let mut i = self.home(buffer);
        while self.s.heads[i].first != NIL {
            i = (i + 1) & mask;
        }
        self.s.heads[i].buffer = buffer;
        i
    }

    /// Frees head slot `i`, shifting later members of its probe chain back (no tombstones).
    fn remove_head(&mut self, mut i: usize) {
        let mask = self.s.heads.len() - 1;
        let mut j = i;
        loop {
            j = (j + 1) & mask;
            if self.s.heads[j].first == NIL {
                break;
            }
            let h = self.home(self.s.heads[j].buffer);
            let stays = if i <= j {
                i < h && h <= j
            } else {
                i < h || h <= j
            };
            if !stays {
                self.s.heads[i] = self.s.heads[j];
                i = j;
            }
        }
        self.s.heads[i] = BufferHead::new();
    }
}

#[cfg(all(test, not(loom)))]
mod tests;
