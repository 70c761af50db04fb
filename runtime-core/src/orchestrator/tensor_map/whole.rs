//! Whole-buffer accesses: what a graph's instance looks up and files for each boundary
//! buffer, once, instead of one entry per tensor argument. An access to all of a buffer is a
//! dense tile of its byte range, so the map never reads its tile from the kernel's row.
#![forbid(unsafe_code)]

use super::buckets::BucketIndex;
use super::entry::{CellIndex, Covered};
use super::heads::{BufferHash, HeadIndex, Probe};
use super::lists::Probes;
use super::place::place;
use super::{Key, Query, TensorArg, TensorMap};
use crate::ids::TaskId;
use crate::tables::SlotIndex;
use crate::tensor::arg::Buffer;
use crate::tensor::tile::{Access, Footprint, Tile};

/// An access to all of `buffer`: its tile stands for the byte range (only its density is
/// read, as the range is given with it).
fn whole(buffer: Buffer, writes: bool) -> (TensorArg, Footprint) {
    let arg = TensorArg {
        buffer,
        tile: Tile::contiguous(buffer.base, 1, 1),
        access: if writes { Access::InOut } else { Access::In },
        dtype: None,
    };
    let fp = Footprint {
        lo: buffer.base,
        hi: buffer.end(),
        dense: true,
    };
    (arg, fp)
}

impl TensorMap<'_> {
    /// Calls `dep` with every task in the map that an access to all of `buffer` (a write, if
    /// `writes`) must wait for.
    pub(crate) fn whole_conflicts<E>(
        &self,
        buffer: Buffer,
        writes: bool,
        dep: impl FnMut(TaskId) -> Result<(), E>,
    ) -> Result<(), E> {
        let (arg, fp) = whole(buffer, writes);
        self.conflicts(&arg, (fp.lo, fp.hi), &mut Covered::default(), dep)
    }

    /// Files, in cell `k` of slot `g` (whose tenant is `task`), an access of `task` to all
    /// of `buffer` (a write, if `writes`): later lookups of the buffer find `task`. `site`
    /// keeps where the last access to `buffer` filed went: while that still holds (the
    /// buffer's head in place, its main class the access's), the access goes there without
    /// a probe; else it is filed anew, and `site` kept for the next.
    pub(crate) fn add_whole(
        &mut self,
        (g, task): (SlotIndex, TaskId),
        k: usize,
        (buffer, writes): (Buffer, bool),
        site: &mut Option<WholeSite>,
    ) {
        let c = CellIndex::of(g, k, self.per_slot);
        let key = Key::buffer(buffer.base);
        if let Some(s) = *site {
            let head = self.heads.at(s.head);
            if head.is(&key) && head.main == s.class {
                let fp = whole(buffer, writes).1;
                self.link_main_parts(c, &fp, (s.own, s.head), task, (buffer.base, writes));
                return;
            }
        }
        *site = self.add_whole_anew((g, task), c, (buffer, writes), key);
    }

    /// [`TensorMap::add_whole`] through the buffer's head found by a probe, in cell `c`;
    /// where the next access to `buffer` may go, if its entry heads its buffer's list.
    #[inline(never)]
    fn add_whole_anew(
        &mut self,
        (g, task): (SlotIndex, TaskId),
        c: CellIndex,
        (buffer, writes): (Buffer, bool),
        key: Key,
    ) -> Option<WholeSite> {
        let (arg, fp) = whole(buffer, writes);
        let first = CellIndex::of(g, 0, self.per_slot).raw();
        let at = place(fp.lo, fp.hi);
        let own = self
            .buckets
            .of(BufferHash::of(buffer.base), at.class, at.cell);
        let q = Query {
            task,
            arg: &arg,
            fp,
            at,
            writes,
            own: first..first + self.per_slot as u32,
        };
        let probe = self.heads.probe(&key);
        let probes = Probes {
            buffer: probe,
            own: Some(own),
        };
        self.link(c, &q, probes);
        // Linking claims a free slot or uses the one found, and moves no head.
        let (Probe::Found(head) | Probe::Vacant(head)) = probe;
        (self.heads.at(head).main == at.class).then_some(WholeSite {
            head,
            own,
            class: at.class,
        })
    }
}

/// Where the whole-buffer entries of one buffer go while it holds ([`TensorMap::add_whole`]):
/// its head, its cell's bucket and its entries' class.
#[derive(Clone, Copy, Debug)]
pub(crate) struct WholeSite {
    head: HeadIndex,
    own: BucketIndex,
    class: u8,
}
