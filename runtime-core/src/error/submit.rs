//! Why a task was not submitted: every refusal names what to change.
#![forbid(unsafe_code)]

use core::fmt;

use super::FatalError;
use crate::ids::{KernelId, TaskId, WorkerClass};
use crate::knob::Knob;
use crate::tensor::tile::TileError;

/// Why a task was not submitted. Nothing of the task was kept: the caller may fix and retry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SubmitError {
    /// The window of `ring` stayed full for `waited_us` and nothing was reclaimed.
    WindowFull {
        /// The ring.
        ring: u8,
        /// Its slots.
        window: u32,
        /// How long submit waited.
        waited_us: u64,
    },
    /// `dep` was issued by another run of this region (its epoch differs).
    StaleDependency {
        /// The dependency given.
        dep: TaskId,
        /// This run's epoch.
        epoch: u16,
    },
    /// `dep` names a ring this runtime does not have.
    ForeignDependency {
        /// The dependency given.
        dep: TaskId,
        /// Rings this runtime has.
        rings: u8,
    },
    /// `dep` names a task that was not submitted yet (the ring's next sequence is `next`).
    NotYetSubmitted {
        /// The dependency given.
        dep: TaskId,
        /// The sequence number the ring hands out next.
        next: u64,
    },
    /// More dependencies than `max_deps`.
    TooManyDeps {
        /// Dependencies given.
        given: usize,
        /// The limit.
        max: u16,
    },
    /// More tensor arguments than `max_tensors`.
    TooManyTensors {
        /// Tensor arguments given.
        given: usize,
        /// The limit.
        max: u16,
    },
    /// A tensor argument's tile is not valid.
    BadTensor {
        /// Its position among the task's tensor arguments.
        index: usize,
        /// What is wrong with it.
        error: TileError,
    },
    /// More scalar arguments than `max_args`.
    TooManyArgs {
        /// Arguments given.
        given: usize,
        /// The limit.
        max: u16,
    },
    /// The platform has no kernel with this id.
    UnknownKernel {
        /// The kernel asked for.
        kernel: KernelId,
    },
    /// No core of the machine can run this class (for example MIX without a full cluster).
    NoCoreForClass {
        /// The class asked for.
        class: WorkerClass,
    },
    /// The task asks for more SPMD blocks than its class has cores (clusters for MIX), or
    /// for none, or a DUMMY task for more than one.
    BadBlocks {
        /// The blocks asked for.
        blocks: u16,
        /// The task's class.
        class: WorkerClass,
        /// The most it may have on this runtime.
        max: u16,
    },
    /// The task's predicate cannot be read: a bad width, a misaligned address, or an address
    /// the platform does not reach.
    BadPredicate {
        /// What is wrong with it.
        error: crate::PredicateError,
    },
    /// Kernels per lane for a task that is not MIX (only a MIX task has lanes).
    LaneKernelsNotMix {
        /// The task's class.
        class: WorkerClass,
    },
    /// A sync-start task has more blocks than one scheduler owns cores (clusters for MIX)
    /// of its class: its blocks could never start together.
    SyncStartTooWide {
        /// The blocks asked for.
        blocks: u16,
        /// The task's class.
        class: WorkerClass,
        /// The most cores of its class one scheduler owns.
        max: u16,
    },
    /// A task the orchestrator's read or write of a tile waits for
    /// ([`crate::Orchestrator::settle`]) did not finish within `submit_timeout_us`.
    TileBusy {
        /// The unfinished task.
        task: TaskId,
        /// How long the orchestrator waited.
        waited_us: u64,
    },
    /// The task whose output a tile holds was cancelled (a transfer it waited on failed, or
    /// a producer of its was cancelled): the bytes are not its output.
    TileCancelled {
        /// The cancelled task.
        task: TaskId,
    },
    /// The task asks for a ring this runtime does not have.
    BadRing {
        /// The ring asked for.
        ring: u8,
        /// Rings this runtime has.
        rings: u8,
    },
    /// The ring handed out every sequence number a task id can carry.
    SequenceExhausted {
        /// The ring.
        ring: u8,
    },
    /// An output buffer larger than the ring's heap, or a platform with no heap.
    HeapTooSmall {
        /// Bytes asked for (with alignment).
        bytes: u64,
        /// The ring's heap.
        heap: u64,
    },
    /// The ring's heap stayed full for `waited_us` and nothing was reclaimed.
    HeapFull {
        /// The ring.
        ring: u8,
        /// Bytes asked for.
        bytes: u64,
        /// How long alloc waited.
        waited_us: u64,
    },
    /// An alignment that is not a power of two.
    BadAlignment {
        /// The alignment given.
        align: u64,
    },
    /// `scope_begin` past the deepest nesting allowed.
    ScopeTooDeep {
        /// The deepest nesting.
        max: usize,
    },
    /// `scope_end` with no scope open.
    NoOpenScope,
    /// The window (or the heap) of `ring` is full and only a task held by a scope that is
    /// still open could free it: waiting could never succeed.
    ScopeDeadlock {
        /// The oldest task of the ring: an open scope holds it, and room comes only from
        /// its retiring.
        held: TaskId,
        /// The ring.
        ring: u8,
        /// Its slots.
        window: u32,
        /// Scopes open.
        open: usize,
    },
    /// The run has failed; nothing more is accepted.
    RunFailed(FatalError),
    /// The run is failing and its error is being recorded; nothing more is accepted.
    RunFailing,
}

impl fmt::Display for SubmitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::WindowFull {
                ring,
                window,
                waited_us,
            } => write!(
                f,
                "task window of ring {ring} is full ({window} slots) and nothing was reclaimed \
                 in {waited_us} µs; raise {} or {}",
                Knob::TaskWindow,
                Knob::SubmitTimeout
            ),
            Self::StaleDependency { dep, epoch } => write!(
                f,
                "dependency {dep} belongs to run epoch {}, this run is epoch {epoch}: task ids do \
                 not carry over between runs",
                dep.epoch()
            ),
            Self::ForeignDependency { dep, rings } => write!(
                f,
                "dependency {dep} names ring {} but this runtime has {rings} ring(s): the id is \
                 not one this runtime issued",
                dep.ring()
            ),
            Self::NotYetSubmitted { dep, next } => write!(
                f,
                "dependency {dep} was never submitted (ring {} has issued sequence numbers below \
                 {next}): depend only on ids that submit returned",
                dep.ring()
            ),
            Self::TooManyDeps { given, max } => write!(
                f,
                "{given} dependencies (given, and found through tensor arguments) exceed the \
                 {max} a task may have: raise {} or join through a DUMMY task",
                Knob::MaxDeps
            ),
            Self::TooManyTensors { given, max } => write!(
                f,
                "{given} tensor arguments exceed the {max} a task may have: raise {}",
                Knob::MaxTensors
            ),
            Self::BadTensor { index, error } => {
                write!(f, "tensor argument {index}: {error}")
            }
            Self::TooManyArgs { given, max } => {
                write!(
                    f,
                    "{given} scalar arguments exceed the {max} a task may have: raise {}",
                    Knob::MaxArgs
                )
            }
            Self::UnknownKernel { kernel } => write!(
                f,
                "kernel {} is not registered with the platform: register it before submitting",
                kernel.0
            ),
            Self::NoCoreForClass { class } => write!(
                f,
                "no core can run a {class:?} task on this machine: add cores of that kind (MIX \
                 needs 1 AIC + 2 AIV in one cluster)"
            ),
            Self::BadBlocks { blocks, class, max } => write!(
                f,
                "a {class:?} task of {blocks} blocks: this runtime runs 1 to {max} (one per \
                 {} of its class)",
                if matches!(class, WorkerClass::Mix) {
                    "cluster"
                } else {
                    "core"
                }
            ),
            Self::BadPredicate { error } => write!(f, "{error}"),
            Self::LaneKernelsNotMix { class } => write!(
                f,
                "a {class:?} task names kernels for AIV lanes: only a MIX task has lanes (one \
                 AIC and two AIV of a cluster)"
            ),
            Self::SyncStartTooWide { blocks, class, max } => write!(
                f,
                "a sync-start {class:?} task of {blocks} blocks: one scheduler owns at most \
                 {max} {} of that class, and the blocks start together on one scheduler's; \
                 ask for fewer blocks, or run fewer `schedulers`",
                if matches!(class, WorkerClass::Mix) {
                    "clusters"
                } else {
                    "cores"
                }
            ),
            Self::TileBusy { task, waited_us } => write!(
                f,
                "task {task} still works on the tile after {waited_us} µs: raise \
                 `submit_timeout_us`, or see why it cannot finish"
            ),
            Self::TileCancelled { task } => write!(
                f,
                "task {task}, which writes the tile, was cancelled (a transfer it waited on \
                 failed): the tile does not hold its output"
            ),
            Self::BadRing { ring, rings } => {
                write!(
                    f,
                    "ring {ring} does not exist: this runtime has {rings} ring(s)"
                )
            }
            Self::SequenceExhausted { ring } => write!(
                f,
                "ring {ring} has issued 2^44 tasks in this run: start a new run"
            ),
            Self::HeapTooSmall { bytes, heap } => write!(
                f,
                "an output buffer of {bytes} bytes does not fit the ring's heap of {heap} bytes: \
                 raise {}",
                Knob::HeapBytes
            ),
            Self::HeapFull {
                ring,
                bytes,
                waited_us,
            } => write!(
                f,
                "the heap of ring {ring} had no room for {bytes} bytes for {waited_us} µs and \
                 nothing was reclaimed; raise {} or {}",
                Knob::HeapBytes,
                Knob::SubmitTimeout
            ),
            Self::BadAlignment { align } => {
                write!(f, "alignment {align} is not a power of two")
            }
            Self::ScopeTooDeep { max } => {
                write!(f, "scopes nest at most {max} deep: end a scope first")
            }
            Self::NoOpenScope => write!(f, "scope_end without an open scope"),
            Self::ScopeDeadlock {
                held,
                ring,
                window,
                open,
            } => write!(
                f,
                "ring {ring} (a window of {window} slots and its heap) has room only once \
                 {held}, its oldest task, retires, but one of the {open} open scope(s) holds \
                 {held} until scope_end, so waiting cannot succeed: end a scope sooner, or raise \
                 {} or {}",
                Knob::TaskWindow,
                Knob::HeapBytes
            ),
            Self::RunFailed(e) => write!(f, "the run has failed: {e}"),
            Self::RunFailing => write!(f, "the run is failing; no task is accepted"),
        }
    }
}

impl core::error::Error for SubmitError {}
