//! Task graphs: a sub-DAG recorded once, then replayed with new buffers as often as a program
//! needs it (a decode layer per layer and token), each replay skipping what the recording
//! settled.
//!
//! A recording ([`super::Orchestrator::record`]) checks each task as a submit would and keeps
//! it with its tensor arguments, each on a *boundary* buffer (bound anew by each replay) or an
//! *internal* one (allocated per instance from the ring's output heap, never seen outside it).
//! The order among tasks that the internal buffers impose is resolved once, at record, by the
//! tensor map's own rules, and kept as edges. A replay ([`super::Orchestrator::replay`]) checks
//! its bindings once, allocates the internal buffers, and submits the tasks in order into one
//! ring: named edges for the internal order, and only the boundary arguments through the
//! tensor map, so an instance and the fresh tasks (or other instances) before and after it
//! are ordered by the data they share, exactly as if its tasks had been submitted one by one.
//!
//! Storage is the caller's ([`GraphStorage`]): the core never allocates.
#![forbid(unsafe_code)]

mod fall_back;
mod instance;
mod record;
mod replay;

#[cfg(all(test, not(loom)))]
mod tests;

use crate::error::GraphError;
use crate::ids::{KernelId, TaskId, WorkerClass};
use crate::predicate::Predicate;
use crate::tensor::arg::{Buffer, PackedWords, TensorArg};
use crate::tensor::tile::Tile;

pub use record::GraphRecorder;
pub(crate) use record::Recording;

/// Most boundary buffers a graph has.
pub const MAX_GRAPH_BOUNDARIES: usize = 32;
/// Most internal buffers a graph has (a decode layer's attention alone allocates a hundred).
pub const MAX_GRAPH_INTERNALS: usize = 256;
/// Most scalars a replay binds ([`Bindings::scalars`]), and most patches a graph has.
pub const MAX_GRAPH_SCALARS: usize = 32;
/// Most scalar patches a graph has ([`GraphRecorder::patch`]).
pub const MAX_GRAPH_PATCHES: usize = 128;

/// A scalar argument of a recorded task that each replay sets from its bindings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Patch {
    /// The task's position.
    task: u32,
    /// Its scalar argument.
    arg: u8,
    /// The replay's scalar ([`Bindings::scalars`]) it takes.
    slot: u8,
}

/// A buffer a recorded argument (or predicate) lies in.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum BufferRef {
    /// Bound by each replay: binding `i`.
    Boundary(u8),
    /// Allocated for each instance: internal buffer `j`.
    Internal(u8),
}

/// Entries of an instance's table of buffer bases: by [`BufferRef::index`] (each boundary
/// moved by its shift), then each boundary where it is bound, unmoved ([`UNSHIFTED`]).
const BASES: usize = UNSHIFTED + MAX_GRAPH_BOUNDARIES;
/// Where the unmoved bases of the boundaries start in an instance's table ([`BASES`]).
const UNSHIFTED: usize = MAX_GRAPH_BOUNDARIES + MAX_GRAPH_INTERNALS;

impl BufferRef {
    /// Its place among a graph's buffers, the boundaries' then the internal ones'.
    fn index(self) -> usize {
        match self {
            BufferRef::Boundary(i) => i as usize,
            BufferRef::Internal(j) => MAX_GRAPH_BOUNDARIES + j as usize,
        }
    }
}

/// `len` items from `start` of one of the storage's arrays.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
struct Span {
    start: u32,
    len: u32,
}

impl Span {
    #[inline(always)]
    fn of<T>(self, items: &[T]) -> &[T] {
        &items[self.start as usize..(self.start + self.len) as usize]
    }
}

/// One task of a recording, as a replay submits it (storage for [`GraphStorage`]).
#[derive(Clone, Copy, Debug)]
pub struct GraphRecordedTask {
    kernel: KernelId,
    class: WorkerClass,
    blocks: u16,
    sync_start: bool,
    aiv_kernels: Option<[KernelId; 2]>,
    /// The predicate; its address an offset into the buffer named, if it lies in one.
    predicate: Option<(Predicate, Option<BufferRef>)>,
    /// Scalar arguments, in the storage's words.
    args: Span,
    /// Tensor arguments, in the storage's arguments.
    tensors: Span,
    /// Earlier tasks of the graph this one waits for, by position, in the storage's words.
    preds: Span,
    /// By boundary (bit `i`): the task touches it, writes it.
    touches: u32,
    writes: u32,
    /// Boundaries it touches that no task before it in the graph (one it waits for,
    /// directly or not) touches: it waits for what wrote them before the instance.
    enters: u32,
    /// Boundaries it writes that no task before it in the graph writes: it waits for
    /// everything that touched them before the instance.
    enters_writing: u32,
    /// Boundaries a later task of the graph touches after it; that writes after it.
    below_touch: u32,
    below_write: u32,
    /// Some of its scalars are patched (see [`Graph::patches`]).
    patched: bool,
    /// One block, no sync start, lane kernels or predicate (a plain spec).
    plain: bool,
    /// Bit `k`: its tensor argument `k` is the first on a boundary it stands for in the
    /// tensor map ([`GraphRecordedTask::exit`]; set when the graph is complete).
    exit_args: u32,
    /// Its meta word holding no producer ([`crate::region::slot::Meta::pack`]): a plain
    /// task's, its producers ORed in as they are pinned.
    meta: u64,
}

impl GraphRecordedTask {
    /// Boundaries for which the task stands for the instance in the tensor map: those it
    /// writes with no later writer of them after it in the graph, and those it touches
    /// with no later task touching them after it. A later task that writes a boundary
    /// finds every task of the instance that touched it (each is, or comes before, one of
    /// these); one that reads it finds every task that wrote it.
    fn exit(&self) -> u32 {
        (self.writes & !self.below_write) | (self.touches & !self.below_touch)
    }
}

impl GraphRecordedTask {
    /// An unused entry, to fill storage with.
    pub const EMPTY: Self = GraphRecordedTask {
        kernel: KernelId(0),
        class: WorkerClass::Dummy,
        blocks: 1,
        sync_start: false,
        aiv_kernels: None,
        predicate: None,
        args: Span { start: 0, len: 0 },
        tensors: Span { start: 0, len: 0 },
        preds: Span { start: 0, len: 0 },
        touches: 0,
        writes: 0,
        enters: 0,
        enters_writing: 0,
        below_touch: 0,
        below_write: 0,
        patched: false,
        plain: true,
        exit_args: 0,
        meta: 0,
    };
}

/// No recorded argument.
const NO_ARG: u32 = u32::MAX;

/// One tensor argument of a recording (storage for [`GraphStorage`]).
#[derive(Clone, Copy, Debug)]
pub struct GraphRecordedArg {
    /// The argument as recorded, at the recording's addresses.
    arg: TensorArg,
    /// Its cell's words that a replay copies as they are.
    packed: PackedWords,
    buffer: BufferRef,
    /// In an instance's table of bases ([`BASES`]): its tile's, and its buffer's (a view's
    /// moves with a shift, a whole boundary stays where it is bound).
    at: [u16; 2],
    /// The task it belongs to.
    task: u32,
    /// While recording: the argument recorded before it on the same buffer ([`NO_ARG`]:
    /// none), so that a lookup walks that buffer's arguments only.
    prev: u32,
    /// While recording: later tasks' arguments are still ordered after it (a write of the
    /// same bytes stands in for it once it came).
    live: bool,
}

impl GraphRecordedArg {
    /// An unused entry, to fill storage with.
    pub const EMPTY: Self = GraphRecordedArg {
        arg: TensorArg::input(Buffer::new(0, 0), Tile::contiguous(0, 1, 1)),
        packed: PackedWords::ZERO,
        buffer: BufferRef::Boundary(0),
        at: [0; 2],
        task: 0,
        prev: NO_ARG,
        live: false,
    };
}

/// Where a recording keeps its tasks, their tensor arguments, and its words (scalar
/// arguments and edges): the caller's memory, as the core never allocates. A graph of `n`
/// tasks with `a` tensor arguments, `s` scalars and `e` edges needs `n` tasks, `a` arguments
/// and `s + e` words.
///
/// ```
/// use pto_runtime_core::{GraphRecordedArg, GraphRecordedTask, GraphStorage};
///
/// let mut tasks = [GraphRecordedTask::EMPTY; 64];
/// let mut args = [GraphRecordedArg::EMPTY; 256];
/// let mut words = [0u64; 512];
/// let storage = GraphStorage { tasks: &mut tasks, args: &mut args, words: &mut words };
/// // `orchestrator.record(storage, &[x, y])` records into it; `finish` gives the graph.
/// assert_eq!(storage.tasks.len(), 64);
/// ```
pub struct GraphStorage<'s> {
    /// One per task.
    pub tasks: &'s mut [GraphRecordedTask],
    /// One per tensor argument.
    pub args: &'s mut [GraphRecordedArg],
    /// One per scalar argument and per edge.
    pub words: &'s mut [u64],
}

/// A task of a recording, for [`GraphRecorder::add_after`] (and, by position, for
/// [`Instance::task`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Node(pub(crate) u32);

impl Node {
    /// The task at position `index` of a recording (one not yet recorded is refused where
    /// it is named).
    pub const fn at(index: u32) -> Self {
        Node(index)
    }
    /// Its position in the recording.
    pub const fn index(self) -> u32 {
        self.0
    }
}

/// An internal buffer: its length and alignment.
#[derive(Clone, Copy, Debug)]
struct Internal {
    /// Where the recording placed it (addresses no device memory has).
    at: Buffer,
    align: u64,
    /// Where it lies in its instance's block ([`Graph::block`]), set when the recording
    /// finishes.
    offset: u64,
}

/// The memory an instance allocates for all its internal buffers at once: each at its
/// offset, aligned (the block is aligned to the largest alignment).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Block {
    len: u64,
    align: u64,
}

impl Block {
    /// Lays `internals` out one after the other, each at its alignment, setting their
    /// offsets: the block that holds them.
    fn lay_out(internals: &mut [Internal]) -> Self {
        let mut block = Block { len: 0, align: 1 };
        for i in internals {
            // At most 256 buffers of at most 2^36 bytes each: no sum overflows.
            i.offset = block.len.next_multiple_of(i.align);
            block.len = i.offset + i.at.len;
            block.align = block.align.max(i.align);
        }
        block
    }
}

/// A recorded graph, ready to replay ([`super::Orchestrator::replay`]).
pub struct Graph<'s> {
    tasks: &'s [GraphRecordedTask],
    args: &'s [GraphRecordedArg],
    words: &'s [u64],
    boundaries: heapless::Vec<Buffer, MAX_GRAPH_BOUNDARIES>,
    /// By boundary: the bytes its tasks touch (tiles, views, predicates), from its start:
    /// from, to (past the last; both 0 if none). A shift must keep them inside a binding.
    spans: heapless::Vec<(u64, u64), MAX_GRAPH_BOUNDARIES>,
    internals: heapless::Vec<Internal, MAX_GRAPH_INTERNALS>,
    /// What each instance allocates for its internal buffers.
    block: Block,
    /// Scalar arguments set per replay, by task.
    patches: heapless::Vec<Patch, MAX_GRAPH_PATCHES>,
    /// The scalars a replay binds: one past the highest slot a patch takes.
    scalars: usize,
    /// The recording run: its epoch and where its rings live.
    stamp: (u16, usize),
}

impl Graph<'_> {
    /// Its tasks.
    pub fn tasks(&self) -> usize {
        self.tasks.len()
    }
    /// Its boundary buffers, as recorded: what a replay binds, in order.
    pub fn boundaries(&self) -> &[Buffer] {
        &self.boundaries
    }
    /// The kernel and worker class of recorded task `node`, if the graph has it.
    pub fn kernel_of(&self, node: Node) -> Option<(KernelId, WorkerClass)> {
        let t = self.tasks.get(node.0 as usize)?;
        Some((t.kernel, t.class))
    }
    /// The scalars a replay binds ([`Bindings::scalars`]).
    pub fn scalars(&self) -> usize {
        self.scalars
    }
    /// Edges among its tasks, resolved at record (through internal buffers or named).
    pub fn edges(&self) -> usize {
        self.tasks.iter().map(|t| t.preds.len as usize).sum()
    }
}

/// What one replay binds: a buffer per boundary (each as long as the recording's), the ring
/// its tasks go into, and tasks its first tasks wait for.
#[derive(Clone, Copy, Debug)]
pub struct Bindings<'a> {
    /// One per boundary, in the recording's order.
    pub buffers: &'a [Buffer],
    /// The ring the instance's tasks go into.
    pub ring: u8,
    /// Tasks that every task of the graph waits for, besides what its tensors find (given to
    /// the tasks with no edge from an earlier one of the graph).
    pub after: &'a [TaskId],
    /// The values of the graph's patched scalars ([`GraphRecorder::patch`]), by slot: as
    /// many as [`Graph::scalars`].
    pub scalars: &'a [u64],
    /// When the buffers do not fit the recording (a length, or two that share bytes):
    /// submit the graph's tasks one by one on them instead of refusing, the instance saying
    /// why ([`Instance::fell_back`]).
    pub or_submit: bool,
    /// By boundary, how many bytes this instance's tiles (and views, and predicates) in it
    /// lie past where the recording's lay: another part of the same buffer (the next
    /// token's row of a KV cache, say). An argument that names the whole boundary still
    /// names the whole binding. None given: none moves; else one per boundary, each keeping
    /// the bytes the tasks touch inside the binding ([`GraphError::ShiftedOutside`]).
    pub shifts: &'a [i64],
}

impl<'a> Bindings<'a> {
    /// `buffers` bound in ring 0, waiting for nothing else.
    pub const fn new(buffers: &'a [Buffer]) -> Self {
        Bindings {
            buffers,
            ring: 0,
            after: &[],
            scalars: &[],
            or_submit: false,
            shifts: &[],
        }
    }
    /// The same bindings in `ring`.
    pub const fn ring(mut self, ring: u8) -> Self {
        self.ring = ring;
        self
    }
    /// The same bindings, the instance waiting for `after` too.
    pub const fn after(mut self, after: &'a [TaskId]) -> Self {
        self.after = after;
        self
    }
    /// The same bindings, falling back to submitting the tasks one by one when the buffers
    /// do not fit the recording ([`Bindings::or_submit`]).
    pub const fn or_submit(mut self) -> Self {
        self.or_submit = true;
        self
    }
    /// The same bindings, the graph's patched scalars set to `scalars` (by slot).
    pub const fn scalars(mut self, scalars: &'a [u64]) -> Self {
        self.scalars = scalars;
        self
    }
    /// The same bindings, each boundary's tiles moved by its shift ([`Bindings::shifts`]).
    pub const fn shifts(mut self, shifts: &'a [i64]) -> Self {
        self.shifts = shifts;
        self
    }
    /// Shift `i` (0 if none were given).
    fn shift(&self, i: usize) -> i64 {
        self.shifts.get(i).copied().unwrap_or(0)
    }
}

/// The tasks of one replay: consecutive in their ring, in the recording's order.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Instance {
    first: TaskId,
    tasks: u32,
    fell_back: Option<GraphError>,
}

impl Instance {
    /// Its tasks.
    pub const fn len(&self) -> u32 {
        self.tasks
    }
    /// Why its tasks were submitted one by one instead of replayed, if they were (bindings
    /// that did not fit, with [`Bindings::or_submit`]): worth a warning, as it costs what
    /// the graph was recorded to save.
    pub const fn fell_back(&self) -> Option<GraphError> {
        self.fell_back
    }
    /// Whether it has none (a graph recorded empty).
    pub const fn is_empty(&self) -> bool {
        self.tasks == 0
    }
    /// The task that `node` of the recording became, if the graph has it.
    pub fn task(&self, node: Node) -> Option<TaskId> {
        (node.0 < self.tasks).then(|| self.nth(node.0))
    }
    /// Its last task (to wait for, or to name as a dependency), if it has one.
    pub fn last(&self) -> Option<TaskId> {
        self.tasks.checked_sub(1).map(|i| self.nth(i))
    }
    fn nth(&self, i: u32) -> TaskId {
        let f = self.first;
        TaskId::new(f.epoch(), f.ring(), crate::ids::Seq(f.seq().0 + i as u64))
    }
}
