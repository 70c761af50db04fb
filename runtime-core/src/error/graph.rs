//! Why a graph was not recorded, or an instance of it not replayed: every refusal names the
//! task, argument or binding and what to change.
#![forbid(unsafe_code)]

use core::fmt;

use super::SubmitError;

/// Why a graph was not recorded or replayed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GraphError {
    /// Task `task` of the recording was refused, as a submit of it would have been.
    Refused {
        /// Its position in the recording.
        task: u32,
        /// Why.
        error: SubmitError,
    },
    /// The recording's storage has no room for more `what` (it holds `capacity`).
    StorageFull {
        /// Tasks, tensor arguments or words (scalars and edges).
        what: &'static str,
        /// What the storage holds.
        capacity: usize,
    },
    /// More boundary or internal buffers than a graph keeps.
    TooManyBuffers {
        /// Which kind: "boundary" or "internal".
        what: &'static str,
        /// The most of that kind.
        max: usize,
    },
    /// Boundary buffers `a` and `b` share bytes (or one is empty): each boundary is an
    /// allocation of its own.
    OverlappingBoundaries {
        /// The first.
        a: u32,
        /// The second.
        b: u32,
    },
    /// Boundary buffer `index` lies at addresses a recording keeps for its internal buffers
    /// (from `0xffff_0000_0000_0000`).
    Reserved {
        /// The boundary's position.
        index: u32,
    },
    /// An internal buffer was refused (its alignment is not a power of two, or it is larger
    /// than a graph's internal buffer may be).
    InternalBuffer {
        /// Why.
        error: SubmitError,
    },
    /// Tensor argument `arg` of task `task` names a buffer at `base` that is neither one of
    /// the graph's boundaries nor one it allocated (with that length).
    UnknownBuffer {
        /// Its task's position in the recording.
        task: u32,
        /// The argument's position.
        arg: u32,
        /// The buffer's base address.
        base: u64,
    },
    /// Task `task` names dependencies by task id or a ring: inside a graph, tasks are
    /// ordered by their tensors or by the nodes given to `add_after`, and the replay names
    /// the ring.
    NotInGraph {
        /// Its position in the recording.
        task: u32,
    },
    /// Task `task` waits for node `node`, which is not an earlier task of this recording.
    BadNode {
        /// Its position in the recording.
        task: u32,
        /// The node given.
        node: u32,
    },
    /// The graph was recorded by another run's orchestrator.
    OtherRun,
    /// A replay bound `given` buffers to a graph recorded with `recorded` boundaries.
    WrongCount {
        /// Buffers bound.
        given: usize,
        /// Boundaries recorded.
        recorded: usize,
    },
    /// A replay gave `given` shifts to a graph recorded with `recorded` boundaries (one per
    /// boundary, or none).
    WrongShifts {
        /// Shifts given.
        given: usize,
        /// Boundaries recorded.
        recorded: usize,
    },
    /// Binding `index`, moved by `shift` bytes, puts the bytes the graph's tasks touch in its
    /// boundary (`span`, from its start, as recorded) outside its `len` bytes.
    ShiftedOutside {
        /// The binding's position.
        index: u32,
        /// The shift given for it.
        shift: i64,
        /// The recorded tasks' bytes in the boundary: from, to (past the last).
        span: (u64, u64),
        /// The binding's length.
        len: u64,
    },
    /// Binding `index` is `given` bytes long where the recording's was `recorded`.
    WrongSize {
        /// The binding's position.
        index: u32,
        /// Its length.
        given: u64,
        /// The recorded boundary's length.
        recorded: u64,
    },
    /// Bindings `a` and `b` share bytes: the recording ordered their tasks as if they did
    /// not.
    Aliased {
        /// The first.
        a: u32,
        /// The second.
        b: u32,
    },
    /// A patch names scalar argument `arg` of task `task`, which has `args`, or a slot past
    /// the most a graph binds ([`crate::MAX_GRAPH_SCALARS`]).
    BadPatch {
        /// The task's position in the recording.
        task: u32,
        /// The argument named.
        arg: u32,
        /// The task's scalar arguments.
        args: u32,
        /// The replay's scalar slot named.
        slot: u32,
    },
    /// A replay bound `given` scalars to a graph whose patches take `recorded`.
    WrongScalars {
        /// Scalars bound.
        given: usize,
        /// Scalars the graph's patches take.
        recorded: usize,
    },
    /// The tasks before the instance that its boundaries must wait for are more than `max`
    /// (all boundaries together); nothing was submitted.
    TooManyFound {
        /// The most a replay takes.
        max: usize,
    },
    /// Task `task` of the instance was refused when it was submitted; the `task` tasks
    /// before it were submitted and run, the rest were not.
    Submit {
        /// Its position in the recording.
        task: u32,
        /// Why.
        error: SubmitError,
    },
}

impl fmt::Display for GraphError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Refused { task, error } => {
                write!(f, "task {task} of the graph's recording: {error}")
            }
            Self::StorageFull { what, capacity } => write!(
                f,
                "the graph's storage holds {capacity} {what}: give the recording a larger one"
            ),
            Self::TooManyBuffers { what, max } => {
                write!(f, "a graph keeps at most {max} {what} buffers")
            }
            Self::OverlappingBoundaries { a, b } => write!(
                f,
                "boundary buffers {a} and {b} share bytes (or one is empty): declare each \
                 allocation once"
            ),
            Self::Reserved { index } => write!(
                f,
                "boundary buffer {index} lies at addresses from 0xffff_0000_0000_0000, which a \
                 recording keeps for its internal buffers"
            ),
            Self::InternalBuffer { error } => write!(f, "an internal buffer: {error}"),
            Self::UnknownBuffer { task, arg, base } => write!(
                f,
                "tensor argument {arg} of task {task} names a buffer at {base:#x} that is \
                 neither a boundary of the graph nor one it allocated"
            ),
            Self::NotInGraph { task } => write!(
                f,
                "task {task} names task ids or a ring: inside a graph, order tasks by their \
                 tensors or with add_after, and name the ring when replaying"
            ),
            Self::BadNode { task, node } => write!(
                f,
                "task {task} waits for node {node}, not an earlier task of this graph"
            ),
            Self::OtherRun => write!(
                f,
                "the graph was recorded by another run's orchestrator: record it again"
            ),
            Self::WrongCount { given, recorded } => write!(
                f,
                "{given} buffers bound to a graph recorded with {recorded} boundaries"
            ),
            Self::WrongShifts { given, recorded } => write!(
                f,
                "{given} shifts given to a graph recorded with {recorded} boundaries: give one \
                 per boundary, or none"
            ),
            Self::ShiftedOutside {
                index,
                shift,
                span: (lo, hi),
                len,
            } => write!(
                f,
                "binding {index} moved by {shift} bytes puts the bytes {lo}..{hi} its tasks \
                 touch outside its {len}"
            ),
            Self::WrongSize {
                index,
                given,
                recorded,
            } => write!(
                f,
                "binding {index} is {given} bytes where the recording's boundary was {recorded}"
            ),
            Self::Aliased { a, b } => write!(
                f,
                "bindings {a} and {b} share bytes, which the graph was not recorded with: \
                 bind distinct buffers or submit the tasks one by one"
            ),
            Self::BadPatch {
                task,
                arg,
                args,
                slot,
            } => write!(
                f,
                "a patch names scalar {arg} of task {task}, which has {args}, or slot {slot}, \
                 past the most a replay binds"
            ),
            Self::WrongScalars { given, recorded } => write!(
                f,
                "{given} scalars bound to a graph whose patches take {recorded}"
            ),
            Self::TooManyFound { max } => write!(
                f,
                "the instance's boundaries must wait for more than {max} earlier tasks: join \
                 them through a DUMMY task and bind the instance after it"
            ),
            Self::Submit { task, error } => write!(
                f,
                "task {task} of the graph's instance was refused ({error}); the {task} \
                 before it were submitted"
            ),
        }
    }
}

impl GraphError {
    /// Whether it is a binding that a replay asked to fall back
    /// ([`crate::Bindings::or_submit`]) gets past by submitting the tasks one by one: a
    /// length that differs from the recording's, or bindings that share bytes.
    pub const fn fits_one_by_one(&self) -> bool {
        matches!(self, Self::WrongSize { .. } | Self::Aliased { .. })
    }
}

impl core::error::Error for GraphError {}
