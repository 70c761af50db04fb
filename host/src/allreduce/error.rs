//! Why one rank's allreduce failed.

use pto_runtime_core::{BarrierError, PoisonReason, SubmitError};
use pto_sim::{MemoryError, SimError};

use crate::comm::CommError;

use crate::comm::poison_reason;

/// Why a rank's part of the allreduce failed. Every variant says what to change, or which
/// rank to look at.
#[derive(Debug, thiserror::Error)]
pub enum AllreduceError {
    /// `--elements 0`.
    #[error("--elements 0: give at least one element")]
    NoElements,
    /// The window (`ranks` x `elements` x 8 bytes) or the simulator's memory overflows.
    #[error(
        "{ranks} ranks of {elements} elements: the window size overflows; lower --elements or \
         --ranks"
    )]
    TooLarge {
        /// Ranks of the job.
        ranks: u64,
        /// Elements per rank.
        elements: u64,
    },
    /// The job was given up in another rank's name (it died, timed out, stopped responding
    /// or failed): look at that rank.
    #[error("stopped because rank {rank} {}", poison_reason(*reason))]
    Poisoned {
        /// The rank the job was given up for.
        rank: u32,
        /// Why.
        reason: PoisonReason,
    },
    /// The communicator could not be set up or used.
    #[error(transparent)]
    Comm(CommError),
    /// The job's windows cannot be described or addressed (a bug: every window holds a
    /// slot per rank).
    #[error("the job's windows: {0}")]
    Window(#[from] pto_runtime_core::CommError),
    /// The simulator's memory refused the input or output vector.
    #[error("the simulator's memory: {0}; lower --elements")]
    Memory(#[from] MemoryError),
    /// The runtime refused a task.
    #[error("submit failed: {0}")]
    Submit(#[from] SubmitError),
    /// The simulated run failed (a wrong sum names the element).
    #[error(transparent)]
    Run(#[from] SimError),
}

impl From<CommError> for AllreduceError {
    /// A poisoned barrier names the culprit; anything else is the communicator's error.
    fn from(e: CommError) -> Self {
        match e {
            CommError::Barrier(BarrierError::Poisoned { rank, reason }) => {
                AllreduceError::Poisoned { rank, reason }
            }
            e => AllreduceError::Comm(e),
        }
    }
}
