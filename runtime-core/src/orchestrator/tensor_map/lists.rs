//! Filing entries in the map's intrusive lists (their cell's bucket and their class) and
//! taking them out, keeping each buffer's head and class heads right.
#![forbid(unsafe_code)]

use super::buckets::BucketIndex;
use super::entry::CellIndex;
use super::heads::{BufferHash, HeadIndex, Key, Probe};
use super::place::{class_bit, lowest_class, place};
use super::{IN_CELL, IN_CLASS, MapEntry, Query, TensorArg, TensorMap};

const NIL: CellIndex = CellIndex::NIL;
use crate::ids::TaskId;
use crate::index::MaskedPool;
use crate::tensor::tile::Footprint;

impl TensorMap<'_> {
    /// Writes argument `arg` of `task`, whose tile has footprint `fp`, into cell `c`, in no
    /// list yet, with its cell's `bucket`.
    #[inline(always)]
    pub(super) fn write(
        &mut self,
        c: CellIndex,
        fp: Footprint,
        bucket: BucketIndex,
        task: TaskId,
        arg: &TensorArg,
    ) {
        let Footprint { lo, hi, dense } = fp;
        self.entries[c] = MapEntry {
            lo,
            hi,
            links: [[NIL; 2]; 2],
            buffer: arg.buffer.base,
            task: task.raw(),
            bucket: bucket.word(),
            writes: arg.access.writes(),
            dense,
        };
    }

    /// Records `q` in cell `c` and files it in its lists, reusing the lookup's `probes`: no
    /// head moved since, and nothing was inserted.
    #[inline(always)]
    pub(super) fn link(&mut self, c: CellIndex, q: &Query<'_>, probes: Probes) {
        let (arg, at) = (q.arg, q.at);
        let own = probes.own.unwrap_or_else(|| {
            let hash = BufferHash::of(arg.buffer.base);
            self.buckets.of(hash, at.class, at.cell)
        });
        self.write(c, q.fp, own, q.task, arg);
        push(&mut self.entries, c, IN_CELL, self.buckets.first_mut(own));
        // Nothing was inserted since the lookup: its probe of the buffer's head holds.
        let b = match probes.buffer {
            Probe::Found(b) => b,
            Probe::Vacant(i) => self.heads.claim(i, &Key::buffer(arg.buffer.base)),
        };
        let bit = class_bit(at.class);
        let head = self.heads.at_mut(b);
        let new_class = head.mask & bit == 0;
        head.mask |= bit;
        if head.main == at.class || (head.main == 0 && new_class) {
            head.main = at.class;
            push(&mut self.entries, c, IN_CLASS, &mut head.first);
        } else {
            let h = self
                .heads
                .find_or_insert(&Key::class(arg.buffer.base, at.class));
            push(
                &mut self.entries,
                c,
                IN_CLASS,
                &mut self.heads.at_mut(h).first,
            );
        }
    }

    /// Records argument `arg` of `task` (footprint `fp`) in cell `c` and files it first in
    /// the list of its cell's bucket `own` and in that of buffer head `b`, whose main class
    /// is the entry's: the common case, with every link written once.
    #[inline(always)]
    pub(super) fn link_main(
        &mut self,
        c: CellIndex,
        fp: &Footprint,
        own: BucketIndex,
        b: HeadIndex,
        task: TaskId,
        arg: &TensorArg,
    ) {
        self.link_main_parts(
            c,
            fp,
            (own, b),
            task,
            (arg.buffer.base, arg.access.writes()),
        );
    }

    /// [`TensorMap::link_main`] of an access to the bytes `fp` of the buffer at `buffer`
    /// (a write, if `writes`).
    #[inline(always)]
    pub(super) fn link_main_parts(
        &mut self,
        c: CellIndex,
        fp: &Footprint,
        (own, b): (BucketIndex, HeadIndex),
        task: TaskId,
        (buffer, writes): (u64, bool),
    ) {
        let in_cell = core::mem::replace(self.buckets.first_mut(own), c);
        let in_class = core::mem::replace(&mut self.heads.at_mut(b).first, c);
        let Footprint { lo, hi, dense } = *fp;
        self.entries[c] = MapEntry {
            lo,
            hi,
            links: [[NIL, in_cell], [NIL, in_class]],
            buffer,
            task: task.raw(),
            bucket: own.word(),
            writes,
            dense,
        };
        if in_cell != NIL {
            self.entries[in_cell].links[IN_CELL][0] = c;
        }
        // The main class is in use: its list is not empty.
        debug_assert!(in_class != NIL);
        self.entries[in_class].links[IN_CLASS][0] = c;
    }

    pub(super) fn unlink(&mut self, c: CellIndex) {
        let entry = self.entries[c];
        let MapEntry { buffer, bucket, .. } = entry;
        self.entries[c].hi = 0;
        if self.pop(c, IN_CELL) {
            // First in its bucket: the bucket's list starts at the next.
            *self.buckets.first_mut(BucketIndex::from_word(bucket)) = entry.links[IN_CELL][1];
        }
        if !self.pop(c, IN_CLASS) {
            return;
        }
        // First in its class: the list is the buffer head's (main class) or a class head's.
        let class = place(entry.lo, entry.hi).class;
        let next = entry.links[IN_CLASS][1];
        let key = Key::buffer(buffer);
        let Some(b) = self.heads.find(&key) else {
            return;
        };
        if self.heads.at(b).main == class {
            let head = self.heads.at_mut(b);
            head.first = next;
            if next == NIL {
                head.main = 0;
                head.mask &= !class_bit(class);
                self.promote(b, buffer);
            }
        } else if let Some(h) = self.heads.find(&Key::class(buffer, class))
            && self.set_first(h, next)
            && let Some(b) = self.heads.find(&key)
        {
            // The removal may have moved the buffer's head: found again.
            self.drop_class(b, class);
        }
    }

    /// Takes entry `c` out of `list`; returns whether it was first (its head must change).
    fn pop(&mut self, c: CellIndex, list: usize) -> bool {
        let [prev, next] = self.entries[c].links[list];
        if next != NIL {
            self.entries[next].links[list][0] = prev;
        }
        if prev != NIL {
            self.entries[prev].links[list][1] = next;
            return false;
        }
        true
    }

    /// Makes `next` the first entry of head `h`'s list, removing the head if the list is
    /// now empty (and saying so).
    fn set_first(&mut self, h: HeadIndex, next: CellIndex) -> bool {
        self.heads.at_mut(h).first = next;
        if next != NIL {
            return false;
        }
        self.heads.remove(h);
        true
    }

    /// Buffer head `b`, whose main class just emptied, takes another class's list in its
    /// place (so a buffer has no more heads than entries), or goes if it has none.
    fn promote(&mut self, b: HeadIndex, buffer: u64) {
        let mask = self.heads.at(b).mask;
        if mask == 0 {
            self.heads.remove(b);
            return;
        }
        let class = lowest_class(mask);
        let Some(h) = self.heads.find(&Key::class(buffer, class)) else {
            return;
        };
        let first = self.heads.at(h).first;
        self.heads.remove(h);
        // The removal may have moved the buffer's head: found again.
        if let Some(b) = self.heads.find(&Key::buffer(buffer)) {
            let head = self.heads.at_mut(b);
            head.main = class;
            head.first = first;
        }
    }

    /// Buffer head `b` has no entry of `class` left.
    fn drop_class(&mut self, b: HeadIndex, class: u8) {
        let head = self.heads.at_mut(b);
        head.mask &= !class_bit(class);
        if head.mask == 0 {
            self.heads.remove(b);
        }
    }
}

/// What a lookup's probes found, for the insertion after it.
#[derive(Clone, Copy)]
pub(super) struct Probes {
    pub(super) buffer: Probe,
    /// The bucket of the argument's own cell, if the lookup visited it.
    pub(super) own: Option<BucketIndex>,
}

/// Puts entry `c` first in `list` (whose first entry is `first`).
#[inline]
fn push(
    entries: &mut MaskedPool<'_, CellIndex, MapEntry>,
    c: CellIndex,
    list: usize,
    first: &mut CellIndex,
) {
    let next = core::mem::replace(first, c);
    entries[c].links[list] = [NIL, next];
    if next != NIL {
        entries[next].links[list][0] = c;
    }
}
