//! Typed errors: what went wrong, and what to change.
#![forbid(unsafe_code)]

use core::fmt;

use crate::condition::Watch;
use crate::ids::{CoreId, KernelId, TaskId, WorkerClass};
use crate::tensor::TileError;

/// What stopped a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum FatalKind {
    /// A dispatched task did not report FIN within `task_timeout_us` (`detail`: µs waited).
    TaskTimeout = 1,
    /// A core reported something no dispatched token explains: a token never dispatched to
    /// it, one older than its last report, or any report while it was idle (`detail`: the
    /// token seen, `detail2`: the newest token dispatched, or the core's last report).
    CoreProtocol = 2,
    /// A kernel reported an error (`detail`: the platform's error code).
    KernelFailed = 3,
    /// A ready queue refused a task (`detail`: the class). Impossible by sizing; reported
    /// rather than dropped.
    ReadyQueueOverflow = 4,
    /// The host or the orchestration aborted the run (`detail`: the caller's code).
    Aborted = 5,
    /// A deferred task's condition did not hold within `deferred_timeout_us` after its FIN
    /// (`watch`: the word, `detail`: the value expected, `detail2`: the last value read). The
    /// task's consumers never ran.
    DeferredTimeout = 6,
    /// A task registered more deferred conditions than `max_conditions` (`detail`: how many,
    /// `detail2`: the limit).
    TooManyConditions = 7,
    /// A deferred condition names a word the platform cannot read (`watch`), or its record
    /// is of no known kind (`detail`: the kind).
    BadCondition = 8,
    /// A core reported a token finished (or moved past it) without writing its result word
    /// (`detail`: the token, `detail2`: the token the result word names).
    MissingResult = 9,
    /// A finished lane's unmet conditions found no room in its scheduler's deferred set
    /// within `deferred_timeout_us`, or a task in the full set passed its deadline while the
    /// lane waited (a full set can keep cores from running the tasks its waiters need). The
    /// error names the waiting lane (`detail`: `deferred_capacity`, `detail2`: µs waited).
    DeferredFull = 10,
    /// A task's slot holds a worker class no submit writes (`detail`: the class byte): the
    /// region was overwritten. The task never runs.
    CorruptSlot = 11,
    /// A DMA/RDMA transfer the task waited on reported an error entry on its engine's
    /// completion queue (`watch`: the engine's queue, `detail`: the post id, `detail2`: the
    /// status, see [`crate::transfer_status`]). Unlike the other kinds this one does not stop
    /// the run at once: the task and, transitively, its consumers finish cancelled without
    /// running, every other task runs, and the run ends with this error.
    TransferFailed = 12,
}

impl FatalKind {
    pub(crate) fn from_code(code: u32) -> Self {
        match code {
            1 => Self::TaskTimeout,
            2 => Self::CoreProtocol,
            3 => Self::KernelFailed,
            4 => Self::ReadyQueueOverflow,
            6 => Self::DeferredTimeout,
            7 => Self::TooManyConditions,
            8 => Self::BadCondition,
            9 => Self::MissingResult,
            10 => Self::DeferredFull,
            11 => Self::CorruptSlot,
            12 => Self::TransferFailed,
            _ => Self::Aborted,
        }
    }
}

/// The first fatal error of a run: its kind, the task and core involved, and two details
/// whose meaning the kind gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FatalError {
    /// What happened.
    pub kind: FatalKind,
    /// The task it happened to, if any.
    pub task: Option<TaskId>,
    /// The core it happened on, if any.
    pub core: Option<CoreId>,
    /// First detail word (see [`FatalKind`]).
    pub detail: u64,
    /// Second detail word (see [`FatalKind`]).
    pub detail2: u64,
    /// The deferred-condition word involved, if any.
    pub watch: Option<Watch>,
}

impl FatalError {
    /// An error of `kind` with no task, core or detail.
    pub const fn new(kind: FatalKind) -> Self {
        FatalError {
            kind,
            task: None,
            core: None,
            detail: 0,
            detail2: 0,
            watch: None,
        }
    }
    /// The same error naming `task`.
    pub const fn with_task(mut self, task: TaskId) -> Self {
        self.task = Some(task);
        self
    }
    /// The same error naming `core`.
    pub const fn with_core(mut self, core: CoreId) -> Self {
        self.core = Some(core);
        self
    }
    /// The same error naming the deferred-condition word `watch`.
    pub const fn with_watch(mut self, watch: Watch) -> Self {
        self.watch = Some(watch);
        self
    }
    /// The same error with its detail words.
    pub const fn with_detail(mut self, detail: u64, detail2: u64) -> Self {
        self.detail = detail;
        self.detail2 = detail2;
        self
    }
}

struct WatchName(Option<Watch>);

impl fmt::Display for WatchName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(w) => write!(f, "{w}"),
            None => write!(f, "unknown word"),
        }
    }
}

struct Where<'a>(&'a FatalError);

impl fmt::Display for Where<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(t) = self.0.task {
            write!(f, " ({t}")?;
            if let Some(c) = self.0.core {
                write!(f, " on {c}")?;
            }
            write!(f, ")")
        } else if let Some(c) = self.0.core {
            write!(f, " ({c})")
        } else {
            Ok(())
        }
    }
}

impl fmt::Display for FatalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = Where(self);
        match self.kind {
            FatalKind::TaskTimeout => write!(
                f,
                "a task ran for {} µs without reporting FIN{at}: raise task_timeout_us or fix the kernel",
                self.detail
            ),
            FatalKind::CoreProtocol => write!(
                f,
                "a core reported token {} but the newest token dispatched to it is {}{at}: the \
                 core's status word is corrupt or another runtime drives it",
                self.detail, self.detail2
            ),
            FatalKind::CorruptSlot => write!(
                f,
                "a task's slot holds worker class {}, which no submit writes{at}: the runtime \
                 region was overwritten (a kernel or the host writing out of bounds?)",
                self.detail
            ),
            FatalKind::MissingResult => write!(
                f,
                "a core reported token {} finished without its result word (which names token \
                 {}){at}: the core's executor does not follow the protocol",
                self.detail, self.detail2
            ),
            FatalKind::DeferredFull => write!(
                f,
                "a finished task's deferred conditions waited {} µs for room in its \
                 scheduler's full deferred set (deferred_capacity = {}){at}, and the set did \
                 not drain in time: raise deferred_capacity, or let fewer tasks wait at once",
                self.detail2, self.detail
            ),
            FatalKind::TransferFailed => write!(
                f,
                "transfer {} on the {} ended with status {} ({}){at}: the task and every task \
                 depending on it were cancelled without running; the other tasks completed",
                self.detail,
                WatchName(self.watch),
                self.detail2,
                crate::transfer_status::name(self.detail2 as u32)
            ),
            FatalKind::KernelFailed => {
                write!(f, "a kernel reported error code {}{at}", self.detail)
            }
            FatalKind::ReadyQueueOverflow => write!(
                f,
                "the ready queue of class {} refused a task{at}: the queue is smaller than the \
                 task windows (a runtime bug; please report it)",
                self.detail
            ),
            FatalKind::Aborted => write!(f, "the run was aborted with code {}{at}", self.detail),
            FatalKind::DeferredTimeout => write!(
                f,
                "a deferred task waited past deferred_timeout_us for the {} to reach {} (last \
                 value read: {}){at}: the transfer or notification never landed, so its \
                 consumers did not run",
                WatchName(self.watch),
                self.detail,
                self.detail2
            ),
            FatalKind::TooManyConditions => write!(
                f,
                "a task registered {} deferred conditions but max_conditions is {}{at}: raise \
                 max_conditions (at most 64) or split the task",
                self.detail, self.detail2
            ),
            FatalKind::BadCondition if self.watch.is_none() && self.detail != 0 => write!(
                f,
                "a deferred condition record has kind {}, which no platform writes{at}: the \
                 core's executor and the runtime disagree on the condition format",
                self.detail
            ),
            FatalKind::BadCondition => write!(
                f,
                "a deferred condition watches the {}, which the platform cannot read{at}: \
                 register aligned counters in device memory or a comm window, and engines \
                 that exist",
                WatchName(self.watch)
            ),
        }
    }
}

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
                 in {waited_us} µs; raise task_window or submit_timeout_us"
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
                "{given} dependencies (given, and found through tensor arguments) exceed \
                 max_deps = {max}: raise max_deps or join through a DUMMY task"
            ),
            Self::TooManyTensors { given, max } => write!(
                f,
                "{given} tensor arguments exceed max_tensors = {max}: raise max_tensors"
            ),
            Self::BadTensor { index, error } => {
                write!(f, "tensor argument {index}: {error}")
            }
            Self::TooManyArgs { given, max } => {
                write!(
                    f,
                    "{given} arguments exceed max_args = {max}: raise max_args"
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
                 give the platform a larger heap (the simulator's SimOptions::heap_bytes)"
            ),
            Self::HeapFull {
                ring,
                bytes,
                waited_us,
            } => write!(
                f,
                "the heap of ring {ring} had no room for {bytes} bytes for {waited_us} µs and \
                 nothing was reclaimed; raise the heap or submit_timeout_us"
            ),
            Self::BadAlignment { align } => {
                write!(f, "alignment {align} is not a power of two")
            }
            Self::ScopeTooDeep { max } => {
                write!(f, "scopes nest at most {max} deep: end a scope first")
            }
            Self::NoOpenScope => write!(f, "scope_end without an open scope"),
            Self::ScopeDeadlock { ring, window, open } => write!(
                f,
                "the task window of ring {ring} ({window} slots) is full of tasks held by the \
                 {open} open scope(s), so waiting cannot free a slot: end a scope sooner, or \
                 raise task_window"
            ),
            Self::RunFailed(e) => write!(f, "the run has failed: {e}"),
            Self::RunFailing => write!(f, "the run is failing; no task is accepted"),
        }
    }
}

/// A thread asked for a handle that is taken or does not exist.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClaimError {
    /// The runtime's one orchestrator handle was taken already.
    OrchestratorTaken,
    /// Scheduler `index` was taken already.
    SchedulerTaken {
        /// The index asked for.
        index: u8,
    },
    /// There is no scheduler `index` (the config has `schedulers`).
    NoSuchScheduler {
        /// The index asked for.
        index: u8,
        /// Schedulers in the config.
        schedulers: u8,
    },
    /// The config asks for [`crate::CompletionMode::Ring`], but the platform has no
    /// completion queue for scheduler `index` holding `needed` records.
    NoCompletionQueue {
        /// The scheduler.
        index: u8,
        /// Records its queue must hold.
        needed: usize,
    },
}

impl fmt::Display for ClaimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::OrchestratorTaken => write!(
                f,
                "the orchestrator of this runtime is taken: one thread submits"
            ),
            Self::SchedulerTaken { index } => write!(
                f,
                "scheduler {index} is taken: each index runs on one thread"
            ),
            Self::NoSuchScheduler { index, schedulers } => write!(
                f,
                "scheduler {index} does not exist: the config has {schedulers} scheduler(s)"
            ),
            Self::NoCompletionQueue { index, needed } => write!(
                f,
                "the config asks for completion = Ring, but the platform has no completion \
                 queue of {needed} records for scheduler {index}: give it one, or use Poll"
            ),
        }
    }
}

impl core::error::Error for FatalError {}
impl core::error::Error for SubmitError {}
impl core::error::Error for ClaimError {}
