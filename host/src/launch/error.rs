//! Why a job could not be launched, or a rank could not run its part.

use std::net::SocketAddr;

use crate::comm::CommError;
use crate::transport::bootstrap::BootstrapError;
use crate::transport::secret::SecretError;

use super::{EnvError, LAUNCHER_PID, RendezvousError};

/// Why the launcher could not start, watch or clean up a job. Every variant says what to
/// change.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// A fault-injection flag names a rank the job does not have.
    #[error("{flag} {rank}: the job has ranks 0 to {}", ranks - 1)]
    NoSuchRank {
        /// The flag (`--kill-rank`, `--stop-rank`).
        flag: &'static str,
        /// The rank it named.
        rank: u32,
        /// Ranks of the job.
        ranks: u32,
    },
    /// The run id cannot name the job's shared objects.
    #[error(transparent)]
    RunId(CommError),
    /// The job secret could not be read or made.
    #[error(transparent)]
    Secret(#[from] SecretError),
    /// The rendezvous address is unusable.
    #[error(transparent)]
    Rendezvous(#[from] RendezvousError),
    /// `--rendezvous tcp://HOST:0`, and no port is free there.
    #[error("cannot find a free port at {at}: {source}; give a port, e.g. tcp://{}:29500", at.ip())]
    NoFreePort {
        /// The address.
        at: SocketAddr,
        /// What the OS said.
        source: std::io::Error,
    },
    /// The launcher cannot find its own binary to spawn the ranks from.
    #[error("cannot find this binary to start the ranks from: {0}")]
    NoBinary(std::io::Error),
    /// The launcher's signal handlers could not be installed.
    #[error("cannot install signal handlers: {0}")]
    Signals(std::io::Error),
    /// A rank process could not be started (the ranks started before it were stopped).
    #[error("cannot start rank {rank}: {source}")]
    Start {
        /// The rank.
        rank: u32,
        /// What the OS said.
        source: std::io::Error,
    },
    /// The job's shared object could not be removed at the end.
    #[error("cannot remove the job's shared object: {0}; remove it from /dev/shm by hand")]
    Cleanup(CommError),
}

/// Why a rank could not run its part of the job. A rank's own failures name it.
#[derive(Debug, thiserror::Error)]
pub enum RankError {
    /// The environment names a rank, but not usably.
    #[error(transparent)]
    Env(#[from] EnvError),
    /// `--ranks` disagrees with the launcher that started the ranks.
    #[error(
        "--ranks {given}, but the launcher started {started} ranks ({size_var}={started}): drop \
         --ranks or ask the launcher for {given} processes"
    )]
    RanksDisagree {
        /// What `--ranks` said.
        given: u32,
        /// The launcher's world size.
        started: u32,
        /// The variable it came in.
        size_var: &'static str,
    },
    /// The rank's signal handlers could not be installed.
    #[error("cannot install signal handlers: {0}")]
    Signals(std::io::Error),
    /// `PTO_LAUNCHER_PID` is not a process id.
    #[error("{LAUNCHER_PID}={value:?} is not a process id")]
    BadLauncherPid {
        /// Its value.
        value: String,
    },
    /// The rank cannot arrange to die with its launcher.
    #[error("rank {rank}: cannot arrange to stop with the launcher: {source}")]
    DieWithParent {
        /// The rank.
        rank: u32,
        /// What the OS said.
        source: std::io::Error,
    },
    /// The rendezvous address is unusable.
    #[error(transparent)]
    Rendezvous(RendezvousError),
    /// Port 0 under another launcher: the ranks cannot agree on a port.
    #[error(
        "rank {rank} ({rank_var}): rendezvous tcp://{at} has port 0, which cannot work when \
         another launcher started the ranks: every rank must dial the one port rank 0 listens \
         on, and only pto-launch, spawning the ranks itself, can pick a free one for them. Give \
         a port, e.g. --rendezvous tcp://{}:29500", at.ip()
    )]
    PortZero {
        /// The rank.
        rank: u32,
        /// The variable that named it.
        rank_var: &'static str,
        /// The address given.
        at: SocketAddr,
    },
    /// The run id cannot name the job's shared objects.
    #[error(transparent)]
    RunId(CommError),
    /// Nothing names the job for its ranks to find each other.
    #[error(
        "a rank needs a name its peers share to find them: pass --run-id (or set PTO_RUN_ID) \
         the same on every rank, or --rendezvous"
    )]
    NoRunId,
    /// The job secret could not be had.
    #[error("rank {rank}: {source}")]
    Secret {
        /// The rank.
        rank: u32,
        /// Why.
        source: SecretError,
    },
    /// The job did not form over TCP.
    #[error("rank {rank}: {source}")]
    Form {
        /// The rank.
        rank: u32,
        /// Why.
        source: RendezvousError,
    },
    /// The ranks run on several hosts, which the simulator's windows cannot span.
    #[error(
        "rank {rank}: the ranks span {} hosts ({}); the simulator's shared-memory windows need \
         every rank on one host", hosts.len(), hosts.join(", ")
    )]
    Hosts {
        /// The rank.
        rank: u32,
        /// The distinct hosts.
        hosts: Vec<String>,
    },
    /// The rank's work (the allreduce, for `pto-launch allreduce`) failed.
    #[error("rank {rank}: {source}")]
    Work {
        /// The rank.
        rank: u32,
        /// Why: the work's own error.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The control-plane barrier at the end failed.
    #[error("rank {rank}: the closing barrier: {source}")]
    ClosingBarrier {
        /// The rank.
        rank: u32,
        /// Why.
        source: BootstrapError,
    },
}
