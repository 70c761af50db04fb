//! Whole-buffer accesses: what a graph's instance looks up and files for each boundary
//! buffer, once, instead of one entry per tensor argument. An access to all of a buffer is a
//! dense tile of its byte range, so the map never reads its tile from the kernel's row.
#![forbid(unsafe_code)]

use super::entry::{CellIndex, Covered};
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
    /// of `buffer` (a write, if `writes`): later lookups of the buffer find `task`.
    pub(crate) fn add_whole(
        &mut self,
        (g, task): (SlotIndex, TaskId),
        k: usize,
        buffer: Buffer,
        writes: bool,
    ) {
        let (arg, fp) = whole(buffer, writes);
        let first = CellIndex::of(g, 0, self.per_slot).raw();
        let q = Query {
            task,
            arg: &arg,
            fp,
            at: place(fp.lo, fp.hi),
            writes,
            own: first..first + self.per_slot as u32,
        };
        let probes = Probes {
            buffer: self.heads.probe(&Key::buffer(buffer.base)),
            own: None,
        };
        self.link(CellIndex::of(g, k, self.per_slot), &q, probes);
    }
}
