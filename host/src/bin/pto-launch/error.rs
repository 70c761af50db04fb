//! Why a `pto-launch` command failed, as the binary prints it (`error: ...`) and exits.

use std::process::ExitCode;

use pto_host::bench::BenchError;
use pto_host::launch::{EnvError, LaunchError, RankError};
use pto_host::profile::TraceError;

/// Every way a subcommand fails; each prints as a sentence that says what to change.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The environment names a rank, but not usably.
    #[error(transparent)]
    Env(#[from] EnvError),
    /// This process, as a rank, could not run its part.
    #[error(transparent)]
    Rank(#[from] RankError),
    /// The launcher could not start, watch or clean up the job.
    #[error(transparent)]
    Launch(#[from] LaunchError),
    /// Some ranks of a spawned job did not pass (each one's end is printed above).
    #[error("{} did not pass", pto_host::human::ranks(.0))]
    NotPassed(Vec<u32>),
    /// The launcher was told to stop.
    #[error("interrupted by signal {0}: every rank stopped, the job's shared object removed")]
    Interrupted(i32),
    /// The hccl backend cannot run the allreduce in this build or on this machine.
    #[error("{0}")]
    Hccl(String),
    /// `pto-launch run` could not run (bad input, or the launch failed: the host's CANN call
    /// and the device's report, each named).
    #[error("{0}")]
    Run(String),
    /// `pto-launch run`'s run started and failed on its backend: what it says, and its stall
    /// class when it stalled (also in `--json`'s error).
    #[error("{message}")]
    RunFailed {
        /// The failure, as printed.
        message: String,
        /// The run's stall class, if it stalled.
        stall: Option<pto_runtime_core::StallClass>,
    },
    /// The bench could not run.
    #[error(transparent)]
    Bench(#[from] BenchError),
    /// The trace could not be written.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// The results could not be encoded.
    #[error("cannot encode the results as JSON: {0}")]
    Json(#[from] serde_json::Error),
}

impl CliError {
    /// The process's exit code: 128 + the signal when interrupted (as a shell reports it),
    /// else 1.
    pub fn exit_code(&self) -> ExitCode {
        match self {
            CliError::Interrupted(sig) => ExitCode::from((128 + sig).clamp(1, 255) as u8),
            _ => ExitCode::FAILURE,
        }
    }
}
