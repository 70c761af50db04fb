//! Why a thread could not claim a handle.
#![forbid(unsafe_code)]

use core::fmt;

use crate::knob::Knob;

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
                "{} is Ring, but the platform has no completion queue of {needed} records \
                 for scheduler {index}: give it one, or set {} to Poll",
                Knob::Completion,
                Knob::Completion
            ),
        }
    }
}

impl core::error::Error for ClaimError {}
