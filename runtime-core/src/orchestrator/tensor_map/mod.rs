//! The tensor map: which live tasks read or write which tiles, so a new task's dependencies
//! follow from its tensor arguments.
//!
//! Only the orchestrator uses it, so it is plain data, carved from the region and handed to the
//! orchestrator with its handle. Every task slot owns `max_tensors` entry cells (cell `k` of
//! slot `g` holds argument `k` of the slot's tenant).
//!
//! An entry is filed by the smallest aligned power-of-two block of addresses that holds its
//! tile's bytes ([`place`]): in the list of the bucket that block (its *cell*) hashes to
//! ([`buckets`]), and in the list of every entry of that size (its *class*) in its buffer. A
//! buffer's head ([`heads`]) keeps a mask of its classes in use and the list of one of them
//! (its main class). A lookup visits, for each class in use, the few cells its own bytes
//! touch, or the class's list when they are many: it walks the entries near its tile, not
//! the buffer's.
//!
//! Entries of retired tasks leave as the ring watermark passes them ([`TensorMap::forget`]),
//! or at the latest when their slot gets its next tenant; so every entry a lookup meets
//! belongs to a task that had not retired at the last watermark read.
#![forbid(unsafe_code)]

mod buckets;
mod entry;
mod heads;
mod lists;
mod place;
mod whole;

use crate::ids::TaskId;
use crate::index::{MaskedPool, TableIndex};
use crate::tables::SlotIndex;
pub(crate) use crate::tensor::arg::TensorArg;
use crate::tensor::arg::TensorCell;
use crate::tensor::tile::{Footprint, Tile, overlaps, touches};
use buckets::{BucketIndex, Buckets};
use heads::{BufferHash, Heads, Key, Probe};
use lists::Probes;
use place::{Place, cells, class_bit, lowest_class, place};

pub(crate) use buckets::buckets_len;
use entry::CellIndex;
pub(crate) use entry::{Covered, MapEntry, TensorStore};

const NIL: CellIndex = CellIndex::NIL;
pub(crate) use heads::{Head, heads_len};

/// Cells of one class a lookup probes at most; past that it walks the class's list.
const LOOKUP_CELLS: u64 = 8;
/// Link pairs of an entry: in its cell's bucket's list and in its class's list.
const IN_CELL: usize = 0;
const IN_CLASS: usize = 1;

/// The tensor map over its storage.
pub(crate) struct TensorMap<'r> {
    entries: MaskedPool<'r, CellIndex, MapEntry>,
    heads: Heads<'r>,
    buckets: Buckets<'r>,
    /// Each slot's tensor arguments as its kernel receives them, indexed like the map's
    /// cells: the map writes them as it adds the arguments, and reads an entry's tile there
    /// when its byte range is not enough.
    cells: &'r [TensorCell],
    per_slot: usize,
}

impl<'r> TensorMap<'r> {
    /// A map with no entries, `per_slot` cells per task slot, writing each added argument
    /// into its cell of `cells` too (the kernel's copy, indexed alike).
    pub(crate) fn new(s: TensorStore<'r>, per_slot: usize, cells: &'r [TensorCell]) -> Self {
        s.entries.fill(MapEntry::new());
        TensorMap {
            entries: MaskedPool::new(s.entries),
            heads: Heads::new(s.heads),
            buckets: Buckets::new(s.buckets),
            cells,
            per_slot,
        }
    }

    /// The kernel's row of slot `g`: the cells its tenant's tensor arguments go into, in
    /// order.
    #[inline(always)]
    pub(crate) fn kernel_row(&self, g: SlotIndex) -> &'r [TensorCell] {
        let first = CellIndex::of(g, 0, self.per_slot).get();
        &self.cells[first..first + self.per_slot]
    }

    /// Adds the tensor arguments of `task`, the new tenant of slot `g` (whose earlier
    /// tenant's entries are gone): takes each argument's footprint from `footprint`, which
    /// also says whether to accept the argument (else the task fails with `()`), calls `dep`
    /// with every other task in the map that an argument must wait for (and the argument's
    /// index), and records the arguments, each also into its cell of the kernel's row. The
    /// entries whose tiles the task writes exactly leave: whoever would have waited for them
    /// now waits for the task, which waits for them. If an argument is refused or `dep`
    /// fails, the map is as it was. Inlined into submit: since the tiles are checked here,
    /// submit keeps no loop or array of its own around the call (with them, inlining cost
    /// K = 8 more than it saved).
    #[inline(always)]
    pub(crate) fn add_task(
        &mut self,
        (g, task): (SlotIndex, TaskId),
        args: &[TensorArg],
        footprint: impl Fn(&TensorArg) -> (Footprint, bool),
        mut dep: impl FnMut(TaskId, usize) -> Result<(), ()>,
    ) -> Result<(), ()> {
        let mut covered = Covered::default();
        // Cell `k` of the slot is `first + k`: computed once per task.
        let first = CellIndex::of(g, 0, self.per_slot).get();
        // The kernel's copies, written as each argument goes in.
        let kernel = &self.cells[first..first + args.len()];
        // A counter of its own: counted by `enumerate` or zipped with `first..`, the loop
        // takes 2 to 8 more instructions an argument (callgrind).
        let mut c = first;
        #[allow(clippy::explicit_counter_loop)]
        for (arg, copy) in args.iter().zip(kernel) {
            let k = c - first;
            let cell = CellIndex::at(c);
            let (fp, ok) = footprint(arg);
            let added = if ok {
                self.add((g, task), cell, arg, &fp, &mut covered, &mut |t| dep(t, k))
            } else {
                Err(())
            };
            if added.is_err() {
                self.drop_slot(g, k);
                return Err(());
            }
            copy.store_arg(arg);
            c += 1;
        }
        for &c in &covered.0 {
            if self.entries[c].linked() {
                self.unlink(c);
            }
        }
        Ok(())
    }

    /// Adds an argument of `task`, the tenant of slot `g`, into its cell `c`: calls `dep`
    /// with every other task in the map that `arg` (whose tile has footprint `fp`) must wait
    /// for, then records `arg`. Entries whose tile `arg` writes exactly go to `covered`. If
    /// `dep` fails, `arg` is not recorded.
    #[inline]
    fn add<E>(
        &mut self,
        (g, task): (SlotIndex, TaskId),
        c: CellIndex,
        arg: &TensorArg,
        fp: &Footprint,
        covered: &mut Covered,
        dep: &mut impl FnMut(TaskId) -> Result<(), E>,
    ) -> Result<(), E> {
        let at = place(fp.lo, fp.hi);
        let buffer = self.heads.probe(&Key::buffer(arg.buffer.base));
        if let Probe::Found(b) = buffer
            && self.heads.at(b).mask == class_bit(at.class)
        {
            // The common case: the buffer holds tiles of this class only, in the list of its
            // head (its main class: a head's main class is always in use), and any overlap
            // is in the tile's own cell.
            debug_assert_eq!(self.heads.at(b).main, at.class);
            let own = self
                .buckets
                .of(BufferHash::of(arg.buffer.base), at.class, at.cell);
            let in_cell = self.buckets.first(own);
            if in_cell != NIL {
                let q = self.query((g, task), arg, *fp, at);
                self.walk_from(in_cell, List::Bucket(at), &q, covered, dep)?;
            }
            self.link_main(c, fp, own, b, task, arg);
            return Ok(());
        }
        self.add_general((g, task), c, arg, *fp, buffer, covered, dep)
    }

    /// [`TensorMap::add`] of an argument whose buffer is new or holds tiles of other
    /// classes, into cell `c`, given the probe of its buffer's head: out of line, so that
    /// the common case keeps its registers.
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn add_general<E>(
        &mut self,
        (g, task): (SlotIndex, TaskId),
        c: CellIndex,
        arg: &TensorArg,
        fp: Footprint,
        buffer: Probe,
        covered: &mut Covered,
        dep: &mut impl FnMut(TaskId) -> Result<(), E>,
    ) -> Result<(), E> {
        let q = self.query((g, task), arg, fp, place(fp.lo, fp.hi));
        let own = self.lookup(&q, buffer, covered, dep)?;
        self.link(c, &q, Probes { buffer, own });
        Ok(())
    }

    /// What a lookup for argument `arg` of `task` (slot `g`), with footprint `fp` filed at
    /// `at`, compares entries with.
    #[inline]
    fn query<'a>(
        &self,
        (g, task): (SlotIndex, TaskId),
        arg: &'a TensorArg,
        fp: Footprint,
        at: Place,
    ) -> Query<'a> {
        let first = CellIndex::of(g, 0, self.per_slot).raw();
        Query {
            task,
            arg,
            fp,
            at,
            writes: arg.access.writes(),
            own: first..first + self.per_slot as u32,
        }
    }

    /// Drops the first `count` entries of slot `g`: its previous tenant's, or those the
    /// current one added before a failure.
    #[inline]
    pub(crate) fn drop_slot(&mut self, g: SlotIndex, count: usize) {
        for c in CellIndex::of_slot(g, count, self.per_slot) {
            if self.entries[c].linked() {
                self.unlink(c);
            }
        }
    }

    /// Drops the entries `task` (slot `g`'s tenant, or a former one, with `count` arguments)
    /// still has in the map: it retired.
    pub(crate) fn forget(&mut self, g: SlotIndex, task: TaskId, count: usize) {
        for c in CellIndex::of_slot(g, count, self.per_slot) {
            if self.entries[c].linked() && self.entries[c].task == task.raw() {
                self.unlink(c);
            }
        }
    }

    /// Calls `dep` with every task in the map that `arg` must wait for, without adding it:
    /// what a task with this argument would depend on now (the orchestrator's own reads and
    /// writes of a tile wait for these, see `Orchestrator::settle`).
    pub(crate) fn conflicts<E>(
        &self,
        arg: &TensorArg,
        range: (u64, u64),
        covered: &mut Covered,
        mut dep: impl FnMut(TaskId) -> Result<(), E>,
    ) -> Result<(), E> {
        let q = Query {
            task: TaskId::from_raw(u64::MAX), // nobody
            arg,
            fp: Footprint {
                lo: range.0,
                hi: range.1,
                dense: arg.tile.is_dense(),
            },
            at: place(range.0, range.1),
            writes: arg.access.writes(),
            own: 0..0,
        };
        let buffer = self.heads.probe(&Key::buffer(arg.buffer.base));
        self.lookup(&q, buffer, covered, &mut dep).map(|_| ())
    }

    /// Entries linked now, all buffers (for tests: the map keeps no count, which would cost
    /// every submit an add and a store).
    #[cfg(all(test, not(loom)))]
    pub(crate) fn linked(&self) -> usize {
        self.entries.iter().filter(|(_, e)| e.linked()).count()
    }

    /// Heads in use in the buffer index (for tests).
    #[cfg(all(test, not(loom)))]
    pub(crate) fn heads_used(&self) -> usize {
        self.heads.used()
    }

    /// Buckets with a list in the cell index (for tests).
    #[cfg(all(test, not(loom)))]
    pub(crate) fn buckets_used(&self) -> usize {
        self.buckets.used()
    }

    /// Finds what `q` waits for, given the probe of its buffer's head; returns its own
    /// cell's bucket if it visited it, for [`TensorMap::link`] to reuse.
    fn lookup<E>(
        &self,
        q: &Query<'_>,
        buffer: Probe,
        covered: &mut Covered,
        dep: &mut impl FnMut(TaskId) -> Result<(), E>,
    ) -> Result<Option<BucketIndex>, E> {
        let (arg, range, at) = (q.arg, (q.fp.lo, q.fp.hi), q.at);
        let mut own = None;
        let Probe::Found(b) = buffer else {
            return Ok(own); // nothing of this buffer is in the map
        };
        let head = *self.heads.at(b);
        let hash = BufferHash::of(arg.buffer.base);
        let mut mask = head.mask;
        while mask != 0 {
            let class = lowest_class(mask);
            mask &= mask - 1;
            let (first, last) = cells(range.0, range.1, class);
            if last - first < LOOKUP_CELLS {
                for cell in first..=last {
                    let b = self.buckets.of(hash, class, cell);
                    let list = List::Bucket(Place { class, cell });
                    self.walk(self.buckets.first(b), list, q, covered, dep)?;
                    if class == at.class {
                        own = Some(b); // a tile's own class: one cell, its own
                    }
                }
            } else {
                let e = if head.main == class {
                    head.first
                } else {
                    self.heads
                        .find(&Key::class(arg.buffer.base, class))
                        .map_or(NIL, |h| self.heads.at(h).first)
                };
                self.walk(e, List::Class, q, covered, dep)?;
            }
        }
        Ok(own)
    }

    /// Calls `dep` with the task of every entry of a list, from `e` on, that conflicts with
    /// `q`: read after write, write after write, write after read, on overlapping tiles of
    /// one buffer. The cheap tests go first.
    #[inline(always)]
    fn walk<E>(
        &self,
        e: CellIndex,
        list: List,
        q: &Query<'_>,
        covered: &mut Covered,
        dep: &mut impl FnMut(TaskId) -> Result<(), E>,
    ) -> Result<(), E> {
        // Most lists a lookup visits are empty: no call for them.
        if e == NIL {
            return Ok(());
        }
        self.walk_from(e, list, q, covered, dep)
    }

    /// [`TensorMap::walk`] of a list that is not empty.
    #[inline(never)]
    fn walk_from<E>(
        &self,
        mut e: CellIndex,
        list: List,
        q: &Query<'_>,
        covered: &mut Covered,
        dep: &mut impl FnMut(TaskId) -> Result<(), E>,
    ) -> Result<(), E> {
        let Footprint { lo, hi, .. } = q.fp;
        while e != NIL {
            let entry = &self.entries[e];
            if entry.lo < hi && lo < entry.hi {
                // Two reads never conflict: a read passes the readers of its tile (often
                // most of its list) on this one test.
                let conflicting = q.writes || entry.writes;
                // A bucket's list also holds the cells of other keys that hash there.
                let listed = || match list {
                    List::Bucket(at) => {
                        place(entry.lo, entry.hi) == at && entry.buffer == q.arg.buffer.base
                    }
                    List::Class => true,
                };
                if conflicting && !q.own.contains(&e.raw()) && listed() && self.overlap(e, entry, q)
                {
                    if q.writes && self.same_bytes(e, entry, q) {
                        // Past the list's capacity an entry just stays: correct, a little
                        // slower.
                        let _ = covered.0.push(e);
                    }
                    dep(TaskId::from_raw(entry.task))?;
                }
            }
            e = entry.links[list.link()][1];
        }
        Ok(())
    }

    /// Whether entry `e`'s tile and `q`'s share a byte, their byte ranges meeting.
    fn overlap(&self, e: CellIndex, entry: &MapEntry, q: &Query<'_>) -> bool {
        match (entry.dense, q.fp.dense) {
            (true, true) => true,
            (true, false) => touches(&q.arg.tile, entry.lo, entry.hi),
            (false, true) => touches(&self.tile(e), q.fp.lo, q.fp.hi),
            (false, false) => overlaps(&self.tile(e), &q.arg.tile),
        }
    }

    /// Entry `e`'s tile: its task's argument, in the kernel's cell (written when the task
    /// was added, and not again before the entry leaves).
    fn tile(&self, e: CellIndex) -> Tile {
        self.cells[e.get()].load().tile
    }

    /// Whether entry `e` covers exactly the bytes `q` does.
    fn same_bytes(&self, e: CellIndex, entry: &MapEntry, q: &Query<'_>) -> bool {
        match (entry.dense, q.fp.dense) {
            (true, true) => (entry.lo, entry.hi) == (q.fp.lo, q.fp.hi),
            (false, false) => self.tile(e) == q.arg.tile,
            // A dense tile and one with holes never cover the same bytes.
            _ => false,
        }
    }
}

/// An argument being added: what its lookup compares entries with, and where it is filed.
struct Query<'a> {
    task: TaskId,
    arg: &'a TensorArg,
    /// The argument's byte range, and whether its tile fills it.
    fp: Footprint,
    at: Place,
    writes: bool,
    /// The task's own cells: its earlier arguments are not dependencies.
    own: core::ops::Range<u32>,
}

/// A list a lookup walks.
#[derive(Clone, Copy)]
enum List {
    /// A bucket's: the entries of the cell `Place` of the query's buffer, and of whatever
    /// other cells hash there.
    Bucket(Place),
    /// A class's: every entry of one class of the query's buffer.
    Class,
}

impl List {
    /// Which link pair of an entry follows the list.
    fn link(self) -> usize {
        match self {
            List::Bucket(_) => IN_CELL,
            List::Class => IN_CLASS,
        }
    }
}

#[cfg(all(test, not(loom)))]
mod reference;
#[cfg(all(test, not(loom)))]
mod tests;
