//! The tensor map: which live tasks read or write which tiles, so a new task's dependencies
//! follow from its tensor arguments.
//!
//! Only the orchestrator uses it, so it is plain data, carved from the region and handed to the
//! orchestrator with its handle. Every task slot owns `max_tensors` entry cells (cell `k` of
//! slot `g` holds argument `k` of the slot's tenant). An entry is in two lists, found through
//! one open-addressing index: its buffer's list of every entry, and a local list (the 4 KiB
//! granule its tile starts in, or the buffer's list of wide tiles). Entries of retired tasks
//! are unlinked when a lookup meets them, and at the latest when their slot gets its next
//! tenant.
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
    fn conflicts_with(&self, range: (u64, u64), e: &MapEntry, tile: &Tile) -> bool {
        (self.access.writes() || e.writes)
            && range.0 < e.hi
            && e.lo < range.1
            && overlaps(&self.tile, tile)
    }
}

/// Bytes of a granule: the unit of the local index.
const GRANULE_SHIFT: u32 = 12;
/// Granules a tile may span and still be indexed locally (by its first granule); wider tiles
/// go to their buffer's wide list.
const LOCAL_SPAN: u64 = 1;
/// Granules a lookup walks at most before it walks the buffer's whole list instead.
const LOOKUP_SPAN: u64 = 16;
/// List tags besides granule numbers: every entry of a buffer, and its wide entries.
const ALL: u64 = u64::MAX;
const WIDE: u64 = u64::MAX - 1;
/// Link pairs of an entry: in its buffer's list of every entry, and in its local list (its
/// first granule's, or the buffer's wide list).
const IN_ALL: usize = 0;
const IN_LOCAL: usize = 1;

/// One argument of a live task, in two lists (its buffer's, and a local one): what a lookup
/// reads for every entry it passes, on one cache line. The tile itself, needed only when the
/// byte ranges meet, is in the cold array beside it.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
pub(crate) struct MapEntry {
    /// The tile's byte range, for a quick rejection before the exact test.
    lo: u64,
    hi: u64,
    task: u64,
    buffer: u64,
    /// The local list's tag: the first granule, or `WIDE`.
    local: u64,
    /// `[prev, next]` in each list.
    links: [[u32; 2]; 2],
    writes: bool,
    linked: bool,
}

impl MapEntry {
    pub(crate) const fn new() -> Self {
        MapEntry {
            lo: 0,
            hi: 0,
            task: 0,
            buffer: 0,
            local: WIDE,
            links: [[NIL; 2]; 2],
            writes: false,
            linked: false,
        }
    }
}

/// The tile of an entry (the cold half).
pub(crate) const NO_TILE: Tile = Tile::contiguous(0, 1, 1);

/// A list with entries: its key (buffer and tag) and its first entry (`NIL`: slot unused).
/// A buffer's `ALL` head also holds the first of its wide entries, so a lookup finds both
/// lists with one probe.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BufferHead {
    buffer: u64,
    tag: u64,
    first: u32,
    wide: u32,
}

impl BufferHead {
    pub(crate) const fn new() -> Self {
        BufferHead {
            buffer: 0,
            tag: 0,
            first: NIL,
            wide: NIL,
        }
    }
}

/// Head slots the index needs for `cells` entries (each is in two lists): a power of two,
/// at most half full.
pub(crate) fn heads_len(cells: usize) -> usize {
    crate::deferred::map_len(2 * cells)
}

/// Entries a submitted task's writes cover exactly, found by its lookups.
#[derive(Default)]
pub(crate) struct Covered(heapless::Vec<u32, 32>);

/// The orchestrator's map storage: `max_tensors` cells per task slot, and the list index
/// ([`heads_len`] slots).
pub(crate) struct TensorStore<'r> {
    pub(crate) entries: &'r mut [MapEntry],
    /// Each entry's tile, same index.
    pub(crate) tiles: &'r mut [Tile],
    pub(crate) heads: &'r mut [BufferHead],
}

/// The tensor map over its storage. A lookup for a tile spanning few granules walks the
/// local lists of those granules (and of the few before, whose entries may reach in) plus the
/// buffer's wide list, so its cost follows the entries near the tile, not all the buffer's.
pub(crate) struct TensorMap<'r> {
    s: TensorStore<'r>,
    per_slot: usize,
}

impl<'r> TensorMap<'r> {
    /// A map with no entries, `per_slot` cells per task slot.
    pub(crate) fn new(s: TensorStore<'r>, per_slot: usize) -> Self {
        s.entries.fill(MapEntry::new());
        s.tiles.fill(NO_TILE);
        s.heads.fill(BufferHead::new());
        TensorMap { s, per_slot }
    }

    /// Calls `dep` with every live task that `arg` (whose tile spans bytes `range`) must wait
    /// for. `live` says whether a task has not retired yet; entries of retired tasks met on
    /// the way are unlinked. Entries whose tile `arg` writes exactly go to `covered`, for
    /// [`TensorMap::register`] to drop.
    pub(crate) fn conflicts<E>(
        &mut self,
        arg: &TensorArg,
        range: (u64, u64),
        live: impl Fn(TaskId) -> bool,
        covered: &mut Covered,
        mut dep: impl FnMut(TaskId) -> Result<(), E>,
    ) -> Result<(), E> {
        self.visit(arg.buffer, range, |map, e| {
            let entry = &map.s.entries[e as usize];
            let tile = &map.s.tiles[e as usize];
            let task = TaskId::from_raw(entry.task);
            if !live(task) {
                map.unlink(e);
            } else if arg.conflicts_with(range, entry, tile) {
                if arg.access.writes() && *tile == arg.tile {
                    // Past the list's capacity an entry just stays: correct, a little slower.
                    let _ = covered.0.push(e);
                }
                dep(task)?;
            }
            Ok(())
        })
    }

    /// Records the arguments of `task`, the new tenant of slot `g`, after dropping the
    /// `old` entries the slot's previous tenant left and the entries `covered` by the task's
    /// writes: whoever would have waited for those now waits for `task`, which itself waits
    /// for them. `ranges[k]` is the byte range of `args[k]`; at most `per_slot` arguments.
    pub(crate) fn register(
        &mut self,
        g: usize,
        task: TaskId,
        old: usize,
        args: &[TensorArg],
        ranges: &[(u64, u64)],
        covered: &Covered,
    ) {
        let first = g * self.per_slot;
        for c in first..first + old.min(self.per_slot) {
            if self.s.entries[c].linked {
                self.unlink(c as u32);
            }
        }
        for &c in &covered.0 {
            if self.s.entries[c as usize].linked {
                self.unlink(c);
            }
        }
        for (k, (arg, &range)) in args.iter().zip(ranges).take(self.per_slot).enumerate() {
            self.link((first + k) as u32, task, *arg, range);
        }
    }

    /// Entries linked now, all buffers (for tests).
    #[cfg(all(test, not(loom)))]
    pub(crate) fn linked(&self) -> usize {
        self.s.entries.iter().filter(|e| e.linked).count()
    }

    /// Calls `f` with every entry of `buffer` that may overlap bytes `range` (and maybe a few
    /// more); `f` may unlink the entry it is given.
    fn visit<E>(
        &mut self,
        buffer: u64,
        range: (u64, u64),
        mut f: impl FnMut(&mut Self, u32) -> Result<(), E>,
    ) -> Result<(), E> {
        let first = range.0 >> GRANULE_SHIFT;
        let last = range.1.saturating_sub(1) >> GRANULE_SHIFT;
        let from = first.saturating_sub(LOCAL_SPAN - 1);
        let Some(all) = self.find(buffer, ALL) else {
            return Ok(()); // nothing of this buffer is in the map
        };
        if last - from >= LOOKUP_SPAN {
            let first = self.s.heads[all].first;
            return self.walk(first, IN_ALL, &mut f);
        }
        let wide = self.s.heads[all].wide;
        self.walk(wide, IN_LOCAL, &mut f)?;
        for granule in from..=last {
            if let Some(h) = self.find(buffer, granule) {
                let first = self.s.heads[h].first;
                self.walk(first, IN_LOCAL, &mut f)?;
            }
        }
        Ok(())
    }

    /// Calls `f` with every entry of a list, from `e` on, following `list`'s links.
    fn walk<E>(
        &mut self,
        mut e: u32,
        list: usize,
        f: &mut impl FnMut(&mut Self, u32) -> Result<(), E>,
    ) -> Result<(), E> {
        while e != NIL {
            let next = self.s.entries[e as usize].links[list][1];
            f(self, e)?;
            e = next;
        }
        Ok(())
    }

    fn link(&mut self, c: u32, task: TaskId, arg: TensorArg, (lo, hi): (u64, u64)) {
        let first = lo >> GRANULE_SHIFT;
        let last = hi.saturating_sub(1) >> GRANULE_SHIFT;
        let local = if last - first < LOCAL_SPAN {
            first
        } else {
            WIDE
        };
        self.s.entries[c as usize] = MapEntry {
            lo,
            hi,
            task: task.raw(),
            buffer: arg.buffer,
            local,
            links: [[NIL; 2]; 2],
            writes: arg.access.writes(),
            linked: true,
        };
        self.s.tiles[c as usize] = arg.tile;
        self.push(c, arg.buffer, ALL, IN_ALL);
        self.push(c, arg.buffer, local, IN_LOCAL);
    }

    /// Puts entry `c` first in list `(buffer, tag)`: its `ALL` list, a granule's, or (`WIDE`)
    /// the wide list kept in the `ALL` head, which must exist already.
    fn push(&mut self, c: u32, buffer: u64, tag: u64, list: usize) {
        let (key, wide) = if tag == WIDE {
            (ALL, true)
        } else {
            (tag, false)
        };
        let h = match self.find(buffer, key) {
            Some(h) => h,
            None => self.insert_head(buffer, key),
        };
        let head = &mut self.s.heads[h];
        let slot = if wide {
            &mut head.wide
        } else {
            &mut head.first
        };
        let first = core::mem::replace(slot, c);
        self.s.entries[c as usize].links[list] = [NIL, first];
        if first != NIL {
            self.s.entries[first as usize].links[list][0] = c;
        }
    }

    fn unlink(&mut self, c: u32) {
        let entry = self.s.entries[c as usize];
        self.s.entries[c as usize].linked = false;
        // The local list first: a wide list lives in the `ALL` head, which the second pop may
        // free.
        self.pop(c, entry.buffer, entry.local, IN_LOCAL);
        self.pop(c, entry.buffer, ALL, IN_ALL);
    }

    fn pop(&mut self, c: u32, buffer: u64, tag: u64, list: usize) {
        let [prev, next] = self.s.entries[c as usize].links[list];
        if next != NIL {
            self.s.entries[next as usize].links[list][0] = prev;
        }
        if prev != NIL {
            self.s.entries[prev as usize].links[list][1] = next;
            return;
        }
        // `c` was first in its list.
        let (key, wide) = if tag == WIDE {
            (ALL, true)
        } else {
            (tag, false)
        };
        if let Some(h) = self.find(buffer, key) {
            if wide {
                self.s.heads[h].wide = next;
            } else {
                self.s.heads[h].first = next;
                if next == NIL {
                    // An empty `ALL` list means an empty wide list too.
                    self.remove_head(h);
                }
            }
        }
    }

    fn home(&self, buffer: u64, tag: u64) -> usize {
        let mask = self.s.heads.len() - 1;
        let k = buffer ^ tag.rotate_left(29).wrapping_mul(0xff51_afd7_ed55_8ccd);
        (k.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 32) as usize & mask
    }

    fn find(&self, buffer: u64, tag: u64) -> Option<usize> {
        let mask = self.s.heads.len().checked_sub(1)?;
        let mut i = self.home(buffer, tag);
        loop {
            let h = &self.s.heads[i];
            if h.first == NIL {
                return None;
            }
            if h.buffer == buffer && h.tag == tag {
                return Some(i);
            }
            i = (i + 1) & mask;
        }
    }

    /// A head for `(buffer, tag)` (not indexed yet). The index is at most half full by sizing.
    fn insert_head(&mut self, buffer: u64, tag: u64) -> usize {
        let mask = self.s.heads.len() - 1;
        let mut i = self.home(buffer, tag);
        while self.s.heads[i].first != NIL {
            i = (i + 1) & mask;
        }
        self.s.heads[i].buffer = buffer;
        self.s.heads[i].tag = tag;
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
            let h = self.home(self.s.heads[j].buffer, self.s.heads[j].tag);
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
