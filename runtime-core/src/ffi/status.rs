//! The status every C entry point returns: 0 for success, a negative code otherwise, one
//! code per [`SubmitError`] variant, and a static sentence for each ([`status_str`]).
#![forbid(unsafe_code)]

use core::ffi::CStr;

use crate::error::{GraphError, SubmitError};

/// What an entry point returns: 0 for success, a negative code otherwise.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PtoStatus {
    /// Success.
    PtoOk = 0,
    /// A required pointer was null, or an array pointer was null with a non-zero count.
    PtoErrNull = -1,
    /// The configuration is invalid, or the region too small or misaligned.
    PtoErrConfig = -2,
    /// The orchestrator or that scheduler is taken already, or no such scheduler.
    PtoErrClaimed = -3,
    /// The task from C is malformed: an unknown worker class or tensor access. Nothing of
    /// it was kept.
    PtoErrSubmit = -4,
    /// The run failed (also [`SubmitError::RunFailed`]): the report says how.
    PtoErrRun = -5,
    /// The handle is not open (closed already, or never opened).
    PtoErrClosed = -6,
    /// [`SubmitError::WindowFull`]: the ring's window stayed full past `submit_timeout_us`.
    PtoErrWindowFull = -10,
    /// [`SubmitError::StaleDependency`]: a dependency issued by another run.
    PtoErrStaleDependency = -11,
    /// [`SubmitError::ForeignDependency`]: a dependency on a ring this runtime lacks.
    PtoErrForeignDependency = -12,
    /// [`SubmitError::NotYetSubmitted`]: a dependency on a task never submitted.
    PtoErrNotYetSubmitted = -13,
    /// [`SubmitError::TooManyDeps`]: more dependencies (named and found) than `max_deps`.
    PtoErrTooManyDeps = -14,
    /// [`SubmitError::TooManyTensors`]: more tensor arguments than `max_tensors`.
    PtoErrTooManyTensors = -15,
    /// [`SubmitError::BadTensor`]: a tensor's tile is invalid or outside its buffer.
    PtoErrBadTensor = -16,
    /// [`SubmitError::TooManyArgs`]: more scalar arguments than `max_args`.
    PtoErrTooManyArgs = -17,
    /// [`SubmitError::UnknownKernel`]: the platform has no such kernel.
    PtoErrUnknownKernel = -18,
    /// [`SubmitError::NoCoreForClass`]: no core of the machine runs this class.
    PtoErrNoCoreForClass = -19,
    /// [`SubmitError::BadRing`]: the ring does not exist.
    PtoErrBadRing = -20,
    /// [`SubmitError::SequenceExhausted`]: the ring issued every id it can.
    PtoErrSequenceExhausted = -21,
    /// [`SubmitError::HeapTooSmall`]: the buffer does not fit the ring's heap (or no heap).
    PtoErrHeapTooSmall = -22,
    /// [`SubmitError::HeapFull`]: the ring's heap stayed full past `submit_timeout_us`.
    PtoErrHeapFull = -23,
    /// [`SubmitError::BadAlignment`]: an alignment that is not a power of two.
    PtoErrBadAlignment = -24,
    /// [`SubmitError::ScopeTooDeep`]: scopes nested too deep.
    PtoErrScopeTooDeep = -25,
    /// [`SubmitError::NoOpenScope`]: a scope end with no scope open.
    PtoErrNoOpenScope = -26,
    /// [`SubmitError::ScopeDeadlock`]: only a task an open scope holds could make room.
    PtoErrScopeDeadlock = -27,
    /// [`SubmitError::RunFailing`]: the run is failing; nothing is accepted.
    PtoErrRunFailing = -28,
    /// [`SubmitError::BadBlocks`]: more SPMD blocks than the task's class has cores.
    PtoErrBadBlocks = -29,
    /// [`SubmitError::TileBusy`]: a task the tile waits for did not finish in time.
    PtoErrTileBusy = -30,
    /// [`SubmitError::TileCancelled`]: the task whose output the tile holds was cancelled.
    PtoErrTileCancelled = -31,
    /// [`SubmitError::SyncStartTooWide`]: more sync-start blocks than one scheduler's cores.
    PtoErrSyncStartTooWide = -32,
    /// [`SubmitError::LaneKernelsNotMix`]: kernels per lane for a task that is not MIX.
    PtoErrLaneKernelsNotMix = -33,
    /// [`SubmitError::BadPredicate`]: a predicate of a bad width, misaligned, or unreadable.
    PtoErrBadPredicate = -34,
    /// [`GraphError::StorageFull`]: the graph's storage is full, too small for the counts
    /// it was given, or not aligned to 64 bytes.
    PtoErrGraphStorage = -40,
    /// [`GraphError::TooManyBuffers`]: more boundary or internal buffers than a graph keeps.
    PtoErrGraphTooManyBuffers = -41,
    /// [`GraphError::OverlappingBoundaries`]: two boundaries share bytes, or one is empty.
    PtoErrGraphOverlappingBoundaries = -42,
    /// [`GraphError::Reserved`]: a boundary at addresses recordings keep for themselves.
    PtoErrGraphReserved = -43,
    /// [`GraphError::UnknownBuffer`]: a tensor argument on a buffer the graph does not have.
    PtoErrGraphUnknownBuffer = -44,
    /// [`GraphError::NotInGraph`]: a recorded task names dependencies by id, or a ring.
    PtoErrGraphNotInGraph = -45,
    /// [`GraphError::BadNode`]: a recorded task waits for a node that is not an earlier one.
    PtoErrGraphBadNode = -46,
    /// [`GraphError::OtherRun`]: the graph belongs to another run's orchestrator.
    PtoErrGraphOtherRun = -47,
    /// [`GraphError::WrongCount`]: a replay bound another number of buffers than recorded
    /// (or of shifts: [`GraphError::WrongShifts`]).
    PtoErrGraphWrongCount = -48,
    /// [`GraphError::WrongSize`]: a bound buffer's length differs from the recording's (or
    /// a shift moves its tasks' bytes outside it: [`GraphError::ShiftedOutside`]).
    PtoErrGraphWrongSize = -49,
    /// [`GraphError::Aliased`]: two bound buffers share bytes.
    PtoErrGraphAliased = -50,
    /// [`GraphError::TooManyFound`]: the instance would wait for too many earlier tasks.
    PtoErrGraphTooManyFound = -51,
    /// The graph handle is not in the state the call needs (recording, or recorded).
    PtoErrGraphState = -52,
    /// [`GraphError::BadPatch`]: a patch names a scalar the task lacks, or a slot past 32.
    PtoErrGraphBadPatch = -53,
    /// [`GraphError::WrongScalars`]: a replay bound another number of scalars than its
    /// patches take.
    PtoErrGraphWrongScalars = -54,
}

impl From<GraphError> for PtoStatus {
    /// A refusal that carries a [`SubmitError`] (a recorded task refused, an internal
    /// buffer refused, a replayed task refused) is that error's status.
    fn from(e: GraphError) -> Self {
        use PtoStatus::*;
        match e {
            GraphError::Refused { error, .. }
            | GraphError::InternalBuffer { error }
            | GraphError::Submit { error, .. } => error.into(),
            GraphError::StorageFull { .. } => PtoErrGraphStorage,
            GraphError::TooManyBuffers { .. } => PtoErrGraphTooManyBuffers,
            GraphError::OverlappingBoundaries { .. } => PtoErrGraphOverlappingBoundaries,
            GraphError::Reserved { .. } => PtoErrGraphReserved,
            GraphError::UnknownBuffer { .. } => PtoErrGraphUnknownBuffer,
            GraphError::NotInGraph { .. } => PtoErrGraphNotInGraph,
            GraphError::BadNode { .. } => PtoErrGraphBadNode,
            GraphError::OtherRun => PtoErrGraphOtherRun,
            GraphError::WrongCount { .. } | GraphError::WrongShifts { .. } => PtoErrGraphWrongCount,
            GraphError::WrongSize { .. } | GraphError::ShiftedOutside { .. } => {
                PtoErrGraphWrongSize
            }
            GraphError::Aliased { .. } => PtoErrGraphAliased,
            GraphError::TooManyFound { .. } => PtoErrGraphTooManyFound,
            GraphError::BadPatch { .. } => PtoErrGraphBadPatch,
            GraphError::WrongScalars { .. } => PtoErrGraphWrongScalars,
        }
    }
}

impl From<SubmitError> for PtoStatus {
    fn from(e: SubmitError) -> Self {
        use PtoStatus::*;
        match e {
            SubmitError::WindowFull { .. } => PtoErrWindowFull,
            SubmitError::StaleDependency { .. } => PtoErrStaleDependency,
            SubmitError::ForeignDependency { .. } => PtoErrForeignDependency,
            SubmitError::NotYetSubmitted { .. } => PtoErrNotYetSubmitted,
            SubmitError::TooManyDeps { .. } => PtoErrTooManyDeps,
            SubmitError::TooManyTensors { .. } => PtoErrTooManyTensors,
            SubmitError::BadTensor { .. } => PtoErrBadTensor,
            SubmitError::TooManyArgs { .. } => PtoErrTooManyArgs,
            SubmitError::UnknownKernel { .. } => PtoErrUnknownKernel,
            SubmitError::NoCoreForClass { .. } => PtoErrNoCoreForClass,
            SubmitError::BadRing { .. } => PtoErrBadRing,
            SubmitError::SequenceExhausted { .. } => PtoErrSequenceExhausted,
            SubmitError::HeapTooSmall { .. } => PtoErrHeapTooSmall,
            SubmitError::HeapFull { .. } => PtoErrHeapFull,
            SubmitError::BadAlignment { .. } => PtoErrBadAlignment,
            SubmitError::ScopeTooDeep { .. } => PtoErrScopeTooDeep,
            SubmitError::NoOpenScope => PtoErrNoOpenScope,
            SubmitError::ScopeDeadlock { .. } => PtoErrScopeDeadlock,
            SubmitError::RunFailed(_) => PtoErrRun,
            SubmitError::RunFailing => PtoErrRunFailing,
            SubmitError::BadBlocks { .. } => PtoErrBadBlocks,
            SubmitError::TileBusy { .. } => PtoErrTileBusy,
            SubmitError::TileCancelled { .. } => PtoErrTileCancelled,
            SubmitError::SyncStartTooWide { .. } => PtoErrSyncStartTooWide,
            SubmitError::LaneKernelsNotMix { .. } => PtoErrLaneKernelsNotMix,
            SubmitError::BadPredicate { .. } => PtoErrBadPredicate,
        }
    }
}

impl PtoStatus {
    /// Every status, for lookups by number.
    pub const ALL: [PtoStatus; 47] = {
        use PtoStatus::*;
        [
            PtoOk,
            PtoErrNull,
            PtoErrConfig,
            PtoErrClaimed,
            PtoErrSubmit,
            PtoErrRun,
            PtoErrClosed,
            PtoErrWindowFull,
            PtoErrStaleDependency,
            PtoErrForeignDependency,
            PtoErrNotYetSubmitted,
            PtoErrTooManyDeps,
            PtoErrTooManyTensors,
            PtoErrBadTensor,
            PtoErrTooManyArgs,
            PtoErrUnknownKernel,
            PtoErrNoCoreForClass,
            PtoErrBadRing,
            PtoErrSequenceExhausted,
            PtoErrHeapTooSmall,
            PtoErrHeapFull,
            PtoErrBadAlignment,
            PtoErrScopeTooDeep,
            PtoErrNoOpenScope,
            PtoErrScopeDeadlock,
            PtoErrRunFailing,
            PtoErrBadBlocks,
            PtoErrTileBusy,
            PtoErrTileCancelled,
            PtoErrSyncStartTooWide,
            PtoErrLaneKernelsNotMix,
            PtoErrBadPredicate,
            PtoErrGraphStorage,
            PtoErrGraphTooManyBuffers,
            PtoErrGraphOverlappingBoundaries,
            PtoErrGraphReserved,
            PtoErrGraphUnknownBuffer,
            PtoErrGraphNotInGraph,
            PtoErrGraphBadNode,
            PtoErrGraphOtherRun,
            PtoErrGraphWrongCount,
            PtoErrGraphWrongSize,
            PtoErrGraphAliased,
            PtoErrGraphTooManyFound,
            PtoErrGraphState,
            PtoErrGraphBadPatch,
            PtoErrGraphWrongScalars,
        ]
    };

    /// The status numbered `code`, if there is one.
    pub fn from_code(code: i32) -> Option<Self> {
        Self::ALL.into_iter().find(|s| *s as i32 == code)
    }

    /// `Ok(())` for [`PtoStatus::PtoOk`], the status itself otherwise.
    pub fn ok(self) -> Result<(), Self> {
        if self == PtoStatus::PtoOk {
            Ok(())
        } else {
            Err(self)
        }
    }

    /// The status of `r`.
    pub fn of<T>(r: Result<T, SubmitError>) -> Self {
        r.map_or_else(Self::from, |_| PtoStatus::PtoOk)
    }
}

/// A sentence for status `code` (static, NUL-terminated; an unknown code says so).
///
/// ```
/// use pto_runtime_core::ffi::{PtoStatus, status_str};
/// assert_eq!(status_str(0).to_str(), Ok("success"));
/// assert!(status_str(PtoStatus::PtoErrHeapFull as i32).to_bytes().starts_with(b"the ring's heap"));
/// assert!(status_str(-999).to_bytes().starts_with(b"unknown"));
/// ```
pub fn status_str(code: i32) -> &'static CStr {
    use PtoStatus::*;
    let Some(s) = PtoStatus::from_code(code) else {
        return c"unknown status code";
    };
    match s {
        PtoOk => c"success",
        PtoErrNull => c"a required pointer was null (or an array was null with a count)",
        PtoErrConfig => c"the configuration is invalid, or the region too small or misaligned",
        PtoErrClaimed => c"the orchestrator or that scheduler is taken already, or no such scheduler",
        PtoErrSubmit => {
            c"the task is malformed: an unknown worker class or tensor access"
        }
        PtoErrRun => c"the run failed: its report says how",
        PtoErrClosed => c"the handle is not open",
        PtoErrWindowFull => {
            c"the ring's task window stayed full and nothing was reclaimed: raise `task_window` or `submit_timeout_us`"
        }
        PtoErrStaleDependency => c"a dependency was issued by another run",
        PtoErrForeignDependency => c"a dependency names a ring this runtime does not have",
        PtoErrNotYetSubmitted => c"a dependency names a task that was never submitted",
        PtoErrTooManyDeps => {
            c"more dependencies (named and found through tensors) than a task may have: raise `max_deps`"
        }
        PtoErrTooManyTensors => c"more tensor arguments than a task may have: raise `max_tensors`",
        PtoErrBadTensor => c"a tensor argument's tile is invalid or not inside its buffer",
        PtoErrTooManyArgs => c"more scalar arguments than a task may have: raise `max_args`",
        PtoErrUnknownKernel => c"the platform has no kernel with this id",
        PtoErrNoCoreForClass => c"no core of this machine can run the task's worker class",
        PtoErrBadRing => c"the ring does not exist",
        PtoErrSequenceExhausted => c"the ring has issued every task id it can: start a new run",
        PtoErrHeapTooSmall => c"the buffer does not fit the ring's output heap (or there is none): raise `heap_bytes`",
        PtoErrHeapFull => {
            c"the ring's heap stayed full and nothing was reclaimed: raise `heap_bytes` or `submit_timeout_us`"
        }
        PtoErrBadAlignment => c"the alignment is not a power of two",
        PtoErrScopeTooDeep => c"scopes nest too deep: end a scope first",
        PtoErrNoOpenScope => c"scope end without an open scope",
        PtoErrScopeDeadlock => {
            c"only a task an open scope holds could make room: end the scope sooner, or raise `task_window` or `heap_bytes`"
        }
        PtoErrRunFailing => c"the run is failing; no task is accepted",
        PtoErrBadBlocks => {
            c"the task asks for more SPMD blocks than its class has cores (clusters for MIX), or for none"
        }
        PtoErrTileBusy => {
            c"a task the tile waits for did not finish in time: raise `submit_timeout_us`"
        }
        PtoErrTileCancelled => c"the task whose output the tile holds was cancelled",
        PtoErrLaneKernelsNotMix => c"kernels per lane for a task that is not MIX",
        PtoErrBadPredicate => {
            c"the task's predicate is not 1, 2, 4 or 8 bytes, not aligned, or outside readable memory"
        }
        PtoErrGraphStorage => {
            c"the graph's storage is full, smaller than pto_graph_storage_size says, or not 64-byte aligned"
        }
        PtoErrGraphTooManyBuffers => c"a graph keeps at most 32 boundary and 256 internal buffers",
        PtoErrGraphOverlappingBoundaries => {
            c"two boundary buffers share bytes (or one is empty): declare each allocation once"
        }
        PtoErrGraphReserved => {
            c"a boundary lies at addresses from 0xffff000000000000, which recordings keep"
        }
        PtoErrGraphUnknownBuffer => {
            c"a tensor argument's buffer is neither a boundary of the graph nor one of its internal buffers"
        }
        PtoErrGraphNotInGraph => {
            c"a recorded task names dependencies by id or a ring: order it by its tensors or after earlier nodes"
        }
        PtoErrGraphBadNode => c"a recorded task waits for a node that is not an earlier task of the graph",
        PtoErrGraphOtherRun => c"the graph was recorded by another run's orchestrator",
        PtoErrGraphWrongCount => c"the replay binds another number of buffers than the graph has boundaries",
        PtoErrGraphWrongSize => c"a bound buffer's length differs from the recorded boundary's",
        PtoErrGraphAliased => {
            c"two bound buffers share bytes: the recording ordered their tasks as if they did not"
        }
        PtoErrGraphTooManyFound => {
            c"the instance would wait for more earlier tasks than a replay takes: wait for them first"
        }
        PtoErrGraphState => {
            c"the graph handle is not recording (or not recorded) as this call needs"
        }
        PtoErrGraphBadPatch => {
            c"a patch names a scalar argument its task does not have, or a slot past the 32 a replay binds"
        }
        PtoErrGraphWrongScalars => {
            c"the replay binds another number of scalars than the graph's patches take"
        }
        PtoErrSyncStartTooWide => {
            c"a sync-start task has more blocks than one scheduler owns cores of its class: fewer blocks, or fewer `schedulers`"
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    #[cfg_attr(
        miri,
        ignore = "text checks only, and 11 s under miri: nothing for it to find"
    )]
    fn every_setting_a_sentence_names_is_a_knob_in_backticks() {
        for st in PtoStatus::ALL {
            let text = status_str(st as i32).to_str().unwrap();
            for (i, quoted) in text.split('`').enumerate().filter(|(i, _)| i % 2 == 1) {
                assert!(
                    crate::Knob::ALL.iter().any(|k| k.name() == quoted),
                    "{st:?}: `{quoted}` (part {i}) is not a knob: {text}"
                );
            }
            for k in crate::Knob::ALL {
                let bare = text.replace(&std::format!("`{}`", k.name()), "");
                assert!(
                    !bare.contains(k.name()),
                    "{st:?} names {} without backticks: {text}",
                    k.name()
                );
            }
        }
    }

    #[test]
    fn every_status_has_its_own_code_and_sentence() {
        for (i, a) in PtoStatus::ALL.iter().enumerate() {
            assert_eq!(PtoStatus::from_code(*a as i32), Some(*a));
            assert!(!status_str(*a as i32).to_bytes().starts_with(b"unknown"));
            for b in &PtoStatus::ALL[i + 1..] {
                assert_ne!(*a as i32, *b as i32);
                assert_ne!(status_str(*a as i32), status_str(*b as i32));
            }
        }
    }

    #[test]
    fn submit_errors_map_to_their_own_codes() {
        let e = SubmitError::HeapFull {
            ring: 0,
            bytes: 8,
            waited_us: 1,
        };
        assert_eq!(PtoStatus::from(e), PtoStatus::PtoErrHeapFull);
        assert_eq!(
            PtoStatus::of::<()>(Err(SubmitError::NoOpenScope)),
            PtoStatus::PtoErrNoOpenScope
        );
        assert_eq!(PtoStatus::of(Ok(3)), PtoStatus::PtoOk);
    }
}
