//! The SO's one static: everything its threads share, within a run and between runs.

use core::sync::atomic::AtomicU64;

use pto_device_sys::chip::{ProducerStream, StallLog};
use pto_device_sys::handoff::Handoff;

use crate::problem::Problem;
use crate::raw::run_cell::RunCell;
use crate::settings::Stored;

/// What the SO's threads share.
pub(crate) struct So {
    /// What `init` set.
    pub settings: Stored,
    /// Tickets, setup, departures and the last out of the current run.
    pub handoff: Handoff,
    /// Runs of the loaded SO (the only thing that outlives a run).
    pub runs: AtomicU64,
    /// The current run's first problem.
    pub problem: Problem,
    /// What the live tasks of a failed run waited for (the schedulers tell, the last out
    /// adds what the task slots say).
    pub stalls: StallLog,
    /// The run's opened cores and the run itself, handed out against the hand-off's tokens.
    pub run: RunCell,
    /// Where the orchestrating thread tells the host each task's producers, when the run
    /// streams them.
    pub producers: ProducerStream,
}

/// The SO's state.
pub(crate) static SO: So = So {
    settings: Stored::new(),
    handoff: Handoff::new(),
    runs: AtomicU64::new(0),
    problem: Problem::new(),
    stalls: StallLog::new(),
    run: RunCell::new(),
    producers: ProducerStream::new(),
};
