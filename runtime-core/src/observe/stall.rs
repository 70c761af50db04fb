//! Why a failed run's live tasks had not finished: what each one waited for when it stopped.
//!
//! Two sources, because no one thread knows everything: each scheduler reports what its own
//! cores ran and what its deferred set held as it stops ([`crate::Platform::stalled`]), and
//! [`crate::Runtime::stalls`] walks the task slots for tasks still waiting for producers or
//! ready but not dispatched.
#![forbid(unsafe_code)]

use core::fmt;

use crate::condition::Watch;
use crate::ids::{CoreId, TaskId, WorkerClass};

/// What one live task waited for when the run stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stall {
    /// A lane of the task was running on `core` and had not reported FIN.
    Running {
        /// The task.
        task: TaskId,
        /// The core running the lane.
        core: CoreId,
        /// How long the watchdog had seen it run, in µs, if it had timed it yet.
        for_us: Option<u64>,
    },
    /// A lane was dispatched to `core`'s second payload slot, behind the lane it runs.
    Behind {
        /// The task.
        task: TaskId,
        /// The core.
        core: CoreId,
    },
    /// A lane finished on `core`, but its unmet conditions waited for room in the full
    /// deferred set (`deferred_capacity`).
    Held {
        /// The task.
        task: TaskId,
        /// The core whose lane is held.
        core: CoreId,
        /// How long it had waited, in µs.
        for_us: u64,
    },
    /// The task's kernels finished; it waited for a word to reach a value (a transfer or a
    /// notification to land).
    Deferred {
        /// The task.
        task: TaskId,
        /// The first word it still waited on.
        watch: Watch,
        /// The value that word had to reach.
        expected: u64,
        /// The last value the scheduler read.
        last: u64,
    },
    /// The task waited for `left` producers to finish (see
    /// [`crate::Runtime::producers_of`] for which).
    Producers {
        /// The task.
        task: TaskId,
        /// Producers not finished.
        left: u32,
    },
    /// Every producer had finished: the task was in its class's ready queue, or dispatched
    /// (then a scheduler also reported it [`Stall::Running`]).
    Ready {
        /// The task.
        task: TaskId,
        /// Its worker class.
        class: WorkerClass,
    },
}

impl Stall {
    /// The task the entry is about.
    pub fn task(&self) -> TaskId {
        match *self {
            Stall::Running { task, .. }
            | Stall::Behind { task, .. }
            | Stall::Held { task, .. }
            | Stall::Deferred { task, .. }
            | Stall::Producers { task, .. }
            | Stall::Ready { task, .. } => task,
        }
    }
}

impl fmt::Display for Stall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Stall::Running {
                task,
                core,
                for_us: Some(us),
            } => write!(f, "{task} running on {core} for {us} µs without FIN"),
            Stall::Running {
                task,
                core,
                for_us: None,
            } => write!(f, "{task} running on {core}"),
            Stall::Behind { task, core } => {
                write!(f, "{task} dispatched to {core}, behind the lane it runs")
            }
            Stall::Held { task, core, for_us } => write!(
                f,
                "{task} finished on {core} but waited {for_us} µs for room in the full \
                 deferred set"
            ),
            Stall::Deferred {
                task,
                watch,
                expected,
                last,
            } => write!(
                f,
                "{task} waiting for the {watch} to reach {expected} (last read: {last})"
            ),
            Stall::Producers { task, left: 1 } => write!(f, "{task} waiting for 1 producer"),
            Stall::Producers { task, left } => write!(f, "{task} waiting for {left} producers"),
            Stall::Ready { task, class } => {
                write!(f, "{task} ready ({class:?}) but not dispatched")
            }
        }
    }
}
