//! What stopped a run: the first fatal error, with named fields per cause.
#![forbid(unsafe_code)]

use crate::condition::Watch;
use crate::ids::{CoreId, TaskId};

/// The code of a [`FatalCause`], stable across versions: the C ABI and the device report
/// carry it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum FatalKind {
    /// [`FatalCause::TaskTimeout`].
    TaskTimeout = 1,
    /// [`FatalCause::CoreProtocol`].
    CoreProtocol = 2,
    /// [`FatalCause::KernelFailed`].
    KernelFailed = 3,
    /// [`FatalCause::ReadyQueueOverflow`].
    ReadyQueueOverflow = 4,
    /// [`FatalCause::Aborted`].
    Aborted = 5,
    /// [`FatalCause::DeferredTimeout`].
    DeferredTimeout = 6,
    /// [`FatalCause::TooManyConditions`].
    TooManyConditions = 7,
    /// [`FatalCause::BadCondition`] and [`FatalCause::UnknownCondition`].
    BadCondition = 8,
    /// [`FatalCause::MissingResult`].
    MissingResult = 9,
    /// [`FatalCause::DeferredFull`].
    DeferredFull = 10,
    /// [`FatalCause::CorruptSlot`].
    CorruptSlot = 11,
    /// [`FatalCause::StrayCompletion`].
    StrayCompletion = 12,
    /// [`FatalCause::TransferFailed`].
    TransferFailed = 13,
    /// [`FatalCause::BadPredicate`].
    BadPredicate = 14,
    /// [`FatalCause::NoProgress`].
    NoProgress = 15,
}

impl FatalKind {
    /// The kind of `code`; codes no version writes read as [`FatalKind::Aborted`].
    pub(crate) fn from_code(code: u32) -> Self {
        Self::from_u32(code).unwrap_or(Self::Aborted)
    }

    /// The kind whose code is `code`, if there is one (0, no error, is none).
    pub const fn from_u32(code: u32) -> Option<Self> {
        Some(match code {
            1 => Self::TaskTimeout,
            2 => Self::CoreProtocol,
            3 => Self::KernelFailed,
            4 => Self::ReadyQueueOverflow,
            5 => Self::Aborted,
            6 => Self::DeferredTimeout,
            7 => Self::TooManyConditions,
            8 => Self::BadCondition,
            9 => Self::MissingResult,
            10 => Self::DeferredFull,
            11 => Self::CorruptSlot,
            12 => Self::StrayCompletion,
            13 => Self::TransferFailed,
            14 => Self::BadPredicate,
            15 => Self::NoProgress,
            _ => return None,
        })
    }

    /// The kind in a few words, as a run's status line names it ("task timeout").
    pub const fn name(self) -> &'static str {
        match self {
            Self::TaskTimeout => "task timeout",
            Self::CoreProtocol => "core protocol violation",
            Self::KernelFailed => "kernel failed",
            Self::ReadyQueueOverflow => "ready queue overflow",
            Self::Aborted => "aborted",
            Self::DeferredTimeout => "deferred-completion timeout",
            Self::TooManyConditions => "too many deferred conditions",
            Self::BadCondition => "bad deferred condition",
            Self::MissingResult => "missing result",
            Self::DeferredFull => "deferred set full",
            Self::CorruptSlot => "corrupt payload slot",
            Self::StrayCompletion => "stray completion",
            Self::TransferFailed => "transfer failed",
            Self::BadPredicate => "bad predicate",
            Self::NoProgress => "no progress",
        }
    }

    /// What the kind means, in a sentence's words, for a report that has only its number
    /// (the AICPU SO's): "a task ran past `task_timeout_us` without FIN".
    pub const fn summary(self) -> &'static str {
        match self {
            Self::TaskTimeout => "a task ran past `task_timeout_us` without FIN",
            Self::CoreProtocol => "a core broke the completion protocol",
            Self::KernelFailed => "a kernel reported an error",
            Self::ReadyQueueOverflow => "a ready queue overflowed",
            Self::Aborted => "the run was aborted",
            Self::DeferredTimeout => {
                "a deferred condition did not hold within `deferred_timeout_us`"
            }
            Self::TooManyConditions => {
                "a kernel registered more deferred conditions than `max_conditions`"
            }
            Self::BadCondition => "a deferred condition could not be read",
            Self::MissingResult => "a result word did not name its token",
            Self::DeferredFull => "the deferred set stayed full (`deferred_capacity`)",
            Self::CorruptSlot => "a task slot was corrupt",
            Self::StrayCompletion => "a completion no task explains",
            Self::TransferFailed => "a transfer failed",
            Self::BadPredicate => "a predicate that could not be read",
            Self::NoProgress => "no task finished for longer than any task may take",
        }
    }
}

/// Why a run stopped. Each cause carries what it is about, named.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FatalCause {
    /// A dispatched task did not report FIN within `task_timeout_us`.
    TaskTimeout {
        /// How long the scheduler waited, in µs.
        waited_us: u64,
    },
    /// A core reported something no dispatched token explains: a token never dispatched to
    /// it, one older than its last report, or any report while it was idle.
    CoreProtocol {
        /// The token the core's status word holds.
        seen: u32,
        /// The newest token dispatched to the core (or, for an idle core, its last report).
        newest: u32,
    },
    /// A kernel reported an error.
    KernelFailed {
        /// The platform's error code.
        code: u32,
    },
    /// A ready queue refused a task. Impossible by sizing; reported rather than dropped.
    ReadyQueueOverflow {
        /// The task's worker class (its byte).
        class: u8,
    },
    /// The host or the orchestration aborted the run.
    Aborted {
        /// The caller's code.
        code: u64,
    },
    /// A deferred task's condition did not hold within `deferred_timeout_us` after its FIN.
    /// The task's consumers never ran.
    DeferredTimeout {
        /// The word polled.
        watch: Watch,
        /// The value it had to reach.
        expected: u64,
        /// The last value read.
        last: u64,
    },
    /// A task registered more deferred conditions than `max_conditions`.
    TooManyConditions {
        /// Conditions registered.
        registered: u32,
        /// `max_conditions`.
        limit: u32,
    },
    /// A deferred condition names a word the platform cannot read (`None`: the platform
    /// reported a condition count but has no record for one of them).
    BadCondition {
        /// The word, if the record named one.
        watch: Option<Watch>,
    },
    /// A deferred condition record is of no known kind.
    UnknownCondition {
        /// The record's kind.
        kind: u32,
    },
    /// A core reported a token finished (or moved past it) without writing its result word.
    MissingResult {
        /// The token reported.
        token: u32,
        /// The token the result word names instead.
        named: u32,
    },
    /// A finished lane's unmet conditions found no room in its scheduler's deferred set
    /// within `deferred_timeout_us`, or a task in the full set passed its deadline while the
    /// lane waited (a full set can keep cores from running the tasks its waiters need). The
    /// error names the waiting lane.
    DeferredFull {
        /// `deferred_capacity`.
        capacity: u32,
        /// How long the lane waited, in µs.
        waited_us: u64,
    },
    /// A task's slot holds a worker class no submit writes: the region was overwritten.
    /// The task never runs.
    CorruptSlot {
        /// The class byte found.
        class: u8,
    },
    /// A DMA/RDMA transfer the task waited on reported an error entry on its engine's
    /// completion queue. Unlike the other causes this one does not stop the run at once:
    /// the task and, transitively, its consumers finish cancelled without running, every
    /// other task runs, and the run ends with this error.
    TransferFailed {
        /// The engine's queue ([`Watch::Queue`]).
        watch: Watch,
        /// The post that failed.
        post: u64,
        /// Its status ([`crate::transfer_status`]).
        status: u32,
    },
    /// A task's predicate could not be read at dispatch (its address was readable at submit).
    BadPredicate {
        /// The predicate's address.
        addr: u64,
        /// Its width in bytes.
        width: u8,
    },
    /// No task finished for longer than any live task may take (its kernel bounded by
    /// `task_timeout_us`, its conditions by `deferred_timeout_us`) while tasks were live:
    /// nothing can finish them. The stall report and its class say what each one waited for
    /// (a dependency deadlock: consumers of producers that finished without releasing them;
    /// ready-but-idle: ready tasks no scheduler holds).
    NoProgress {
        /// How long nothing finished, in µs.
        idle_us: u64,
        /// Tasks submitted and not finished.
        live: u64,
    },
    /// A completion queue holds a record from a source the scheduler does not drive.
    StrayCompletion {
        /// The record's source.
        source: u32,
        /// The record's id.
        id: u64,
    },
}

impl FatalCause {
    /// The cause's stable code.
    pub const fn kind(&self) -> FatalKind {
        match self {
            Self::TaskTimeout { .. } => FatalKind::TaskTimeout,
            Self::CoreProtocol { .. } => FatalKind::CoreProtocol,
            Self::KernelFailed { .. } => FatalKind::KernelFailed,
            Self::ReadyQueueOverflow { .. } => FatalKind::ReadyQueueOverflow,
            Self::Aborted { .. } => FatalKind::Aborted,
            Self::DeferredTimeout { .. } => FatalKind::DeferredTimeout,
            Self::TooManyConditions { .. } => FatalKind::TooManyConditions,
            Self::BadCondition { .. } | Self::UnknownCondition { .. } => FatalKind::BadCondition,
            Self::MissingResult { .. } => FatalKind::MissingResult,
            Self::DeferredFull { .. } => FatalKind::DeferredFull,
            Self::CorruptSlot { .. } => FatalKind::CorruptSlot,
            Self::StrayCompletion { .. } => FatalKind::StrayCompletion,
            Self::TransferFailed { .. } => FatalKind::TransferFailed,
            Self::BadPredicate { .. } => FatalKind::BadPredicate,
            Self::NoProgress { .. } => FatalKind::NoProgress,
        }
    }
}

/// The first fatal error of a run: its cause, and the task and core involved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FatalError {
    /// What happened.
    pub cause: FatalCause,
    /// The task it happened to, if any.
    pub task: Option<TaskId>,
    /// The core it happened on, if any.
    pub core: Option<CoreId>,
}

impl FatalError {
    /// An error of `cause` naming no task or core.
    pub const fn new(cause: FatalCause) -> Self {
        FatalError {
            cause,
            task: None,
            core: None,
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
    /// The cause's stable code.
    pub const fn kind(&self) -> FatalKind {
        self.cause.kind()
    }
}

impl core::error::Error for FatalError {}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::FatalKind;

    #[test]
    fn every_code_reads_back_as_its_kind_with_a_name_of_its_own() {
        let kinds: [FatalKind; 15] = core::array::from_fn(|i| {
            FatalKind::from_u32(i as u32 + 1).expect("codes 1..=15 are kinds")
        });
        for (i, k) in kinds.iter().enumerate() {
            assert_eq!(*k as u32, i as u32 + 1, "{k:?}");
            assert!(kinds[..i].iter().all(|o| o.name() != k.name()), "{k:?}");
        }
        assert_eq!(FatalKind::from_u32(0), None, "0 is no error");
        assert_eq!(FatalKind::from_u32(16), None);
        assert_eq!(FatalKind::from_code(16), FatalKind::Aborted);
    }
}
