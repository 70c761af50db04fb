//! Task graphs as C records and replays them: a [`PtoGraph`] handle (storage the caller owns)
//! that records into a byte array the caller provides ([`storage_size`] says how large),
//! then replays with [`PtoBuffer`] bindings; an instance comes back as a [`PtoInstance`].
//! Types and the handle's states only; `graph_raw.rs` turns the pointers into them.
#![forbid(unsafe_code)]

use crate::orchestrator::{Graph, GraphRecordedArg, GraphRecordedTask, Recording};
use crate::tensor::arg::Buffer;

/// A buffer: its first byte's device address and its length in bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PtoBuffer {
    /// The first byte's device address.
    pub base: u64,
    /// Bytes.
    pub len: u64,
}

impl PtoBuffer {
    /// The core's view of it.
    pub const fn to_buffer(self) -> Buffer {
        Buffer::new(self.base, self.len)
    }
    /// The C view of `b`.
    pub const fn of(b: Buffer) -> Self {
        PtoBuffer {
            base: b.base,
            len: b.len,
        }
    }
}

/// An instance of a replayed graph: its tasks are consecutive in their ring.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PtoInstance {
    /// The id of its first task (that of recorded node `i` is `first + i`).
    pub first: u64,
    /// Its tasks.
    pub tasks: u32,
    /// 0 if it was replayed; else its bindings did not fit the recording and its tasks were
    /// submitted one by one (as `PTO_REPLAY_OR_SUBMIT` asked): the status that says why
    /// (`PTO_ERR_GRAPH_WRONG_SIZE`, `PTO_ERR_GRAPH_ALIASED`), worth a warning.
    pub fell_back: i32,
}

/// What `pto_graph_replay_with` binds: `pto_graph_replay`'s arguments, and shifts.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PtoReplay {
    /// One buffer per boundary, in the recording's order (`nbuffers` of them).
    pub buffers: *const PtoBuffer,
    /// Buffers bound.
    pub nbuffers: usize,
    /// Null, or one per boundary: how many bytes the instance's tiles, views and predicates
    /// in it lie past where the recording's lay (another part of the same buffer). An
    /// argument naming a whole boundary still names the whole binding.
    pub shifts: *const i64,
    /// The values of the graph's patched scalars, by slot (`nscalars` of them).
    pub scalars: *const u64,
    /// Scalars bound.
    pub nscalars: usize,
    /// Task ids the graph's first tasks wait for too (`nafter` of them).
    pub after: *const u64,
    /// Ids in `after`.
    pub nafter: usize,
    /// Bits of `PtoReplayFlags`.
    pub flags: u32,
    /// The ring the instance's tasks go into.
    pub ring: u8,
}

/// How `pto_graph_replay` replays (bits of its `flags`).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PtoReplayFlags {
    /// Bindings that do not fit the recording (a length, buffers that share bytes) submit
    /// the graph's tasks one by one instead of being refused (`PtoInstance::fell_back`).
    PtoReplayOrSubmit = 1,
}

/// Storage for a graph handle, owned by the C caller (opaque): `pto_graph_record` opens it,
/// `pto_graph_close` ends it. It must not be moved or copied while open.
#[repr(C, align(64))]
#[derive(Debug)]
pub struct PtoGraph {
    /// Opaque (a literal, so that the C header spells it).
    pub opaque: [u64; 1408],
}

/// What a handle holds: a recording under way, or the graph it recorded. `'static`: the
/// caller's storage outlives the handle (its contract).
#[allow(
    clippy::large_enum_variant,
    reason = "it lives in the caller's PtoGraph, whichever it holds: no allocator to box with"
)]
pub(crate) enum CGraph {
    Recording(Recording<'static>),
    Recorded(Graph<'static>),
}

const _: () = {
    assert!(size_of::<Option<CGraph>>() <= size_of::<PtoGraph>());
    assert!(align_of::<Option<CGraph>>() <= align_of::<PtoGraph>());
};

/// The alignment a graph's storage must have.
pub const GRAPH_STORAGE_ALIGN: usize = 64;

/// Where a storage of `tasks` tasks, `args` tensor arguments and `words` words puts each
/// array (byte offsets from its 64-byte-aligned start), and its size in bytes; `None` when
/// the size does not fit a `usize`.
pub(crate) fn storage_layout(tasks: usize, args: usize, words: usize) -> Option<[usize; 4]> {
    let after = |at: usize, n: usize, size: usize, align: usize| -> Option<usize> {
        at.next_multiple_of(align).checked_add(n.checked_mul(size)?)
    };
    let t = 0;
    let a = after(t, tasks, size_of::<GraphRecordedTask>(), 1)?
        .next_multiple_of(align_of::<GraphRecordedArg>());
    let w = after(a, args, size_of::<GraphRecordedArg>(), 1)?.next_multiple_of(8);
    let end = after(w, words, 8, 8)?;
    Some([t, a, w, end])
}

/// Bytes of the storage a graph of `tasks` tasks, `args` tensor arguments and `words` words
/// (scalar arguments and edges) needs, or `None` if that does not fit a `usize`.
///
/// ```
/// use pto_runtime_core::ffi::graph::storage_size;
/// let small = storage_size(4, 8, 16).unwrap();
/// assert!(storage_size(8, 8, 16).unwrap() > small);
/// assert_eq!(storage_size(usize::MAX, 1, 1), None);
/// ```
pub fn storage_size(tasks: usize, args: usize, words: usize) -> Option<usize> {
    const _: () = assert!(align_of::<GraphRecordedTask>() <= GRAPH_STORAGE_ALIGN);
    const _: () = assert!(align_of::<GraphRecordedArg>() <= GRAPH_STORAGE_ALIGN);
    storage_layout(tasks, args, words).map(|l| l[3])
}
