//! A program ([`crate::program::RunSpec`]) run by several ranks, one process each, whose
//! kernels reach each other's communication windows: POSIX shared memory on the simulator
//! (`sim.rs`), HCCL windows on NPUs (`npu.rs`, feature `cann`). The orchestration learns
//! where the windows are from its arguments ([`RankWindows`]); each rank's run watches its
//! own window for deferred conditions, and no rank lets its window go before every rank's
//! run ended (a closing barrier).
//!
//! `pto-launch run --ranks N` spawns the ranks ([`crate::launch::spawn_command_job`]);
//! each finds its place in the job from its environment ([`ProgramRank::from_env`]).

mod sim;

#[cfg(feature = "cann")]
mod npu;

use std::net::SocketAddr;
use std::time::Duration;

use crate::comm::CommError;
use crate::launch::{EnvError, job_id_from_env, rank_from_env};
use crate::sim_backend::SimBackendError;

#[cfg(feature = "cann")]
pub use npu::run_on_npu;
pub use sim::run_on_sim;

/// This rank's place in a job: who it is, the job's name, and how its windows are made.
#[derive(Clone, Debug)]
pub struct ProgramRank {
    /// This rank.
    pub rank: u32,
    /// Ranks in the job.
    pub ranks: u32,
    /// Names the job's shared objects (the simulator's windows) and its bootstrap.
    pub run_id: String,
    /// Bytes of every rank's window.
    pub window_bytes: u64,
    /// Bound of forming the job, of the closing barrier, and of every wait between ranks.
    pub timeout: Duration,
    /// Whether `pto-launch` spawned the ranks and watches the job's shared object.
    pub watched: bool,
    /// Where rank 0 listens to form the job over TCP (the NPU's windows need it).
    pub rendezvous: Option<SocketAddr>,
}

impl ProgramRank {
    /// The rank the environment names (`PTO_RANK`/`PTO_RANKS` from `pto-launch`, or
    /// mpirun's, Slurm's, torchrun's), or `None` when this process is no rank.
    pub fn from_env(
        window_bytes: u64,
        timeout: Duration,
        rendezvous: Option<SocketAddr>,
    ) -> Result<Option<Self>, ProgramRankError> {
        let var = |k: &str| std::env::var(k).ok();
        let Some(env) = rank_from_env(var)? else {
            return Ok(None);
        };
        let run_id = job_id_from_env(var).ok_or(ProgramRankError::NoRunId)?;
        Ok(Some(ProgramRank {
            rank: env.rank,
            ranks: env.ranks,
            run_id,
            window_bytes,
            timeout,
            watched: var(crate::launch::LAUNCHER_PID).is_some(),
            rendezvous,
        }))
    }
}

/// Where every rank's window is, as this rank addresses it: what an orchestration's
/// arguments may name (`window:R` on `pto-launch run`'s command line).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RankWindows {
    /// This rank.
    pub rank: u32,
    /// Bytes of each window.
    pub bytes: u64,
    /// Each rank's window, by rank, at the address this rank's kernels use.
    pub addresses: Vec<u64>,
}

impl RankWindows {
    /// Every rank's window of `bytes` as `ctx` (this rank's communication context, whose own
    /// window starts at `local`) addresses it.
    pub fn of(
        ctx: &pto_runtime_core::CommContext,
        local: u64,
        bytes: u64,
    ) -> Result<Self, ProgramRankError> {
        let addresses = (0..ctx.rank_num)
            .map(|r| ctx.peer_address(r, local, bytes))
            .collect::<Result<Vec<_>, _>>()
            .map_err(ProgramRankError::Windows)?;
        Ok(RankWindows {
            rank: ctx.rank_id,
            bytes,
            addresses,
        })
    }

    /// This rank's own window.
    pub fn local(&self) -> u64 {
        self.addresses[self.rank as usize]
    }

    /// Rank `r`'s window, if the job has rank `r`.
    pub fn window(&self, r: u32) -> Option<u64> {
        self.addresses.get(r as usize).copied()
    }
}

/// Why a rank's run of a program failed.
#[derive(Debug, thiserror::Error)]
pub enum ProgramRankError {
    /// The environment names a rank, but not usably.
    #[error(transparent)]
    Env(#[from] EnvError),
    /// The environment names a rank but no job (`PTO_RUN_ID` or a launcher's job id).
    #[error("this rank's job has no name: set PTO_RUN_ID (pto-launch sets it for its ranks)")]
    NoRunId,
    /// The NPU's windows need the job formed over TCP, and no rendezvous was given.
    #[error("an NPU job forms over TCP: give --rendezvous tcp://HOST:PORT (pto-launch does)")]
    NoRendezvous,
    /// The program could not be made for this rank's windows.
    #[error("{0}")]
    Spec(String),
    /// The shared-memory windows could not be made or joined, or the closing barrier failed.
    #[error(transparent)]
    Comm(#[from] CommError),
    /// The windows could not be described to the runtime.
    #[error("the windows: {0:?}")]
    Windows(pto_runtime_core::CommError),
    /// The windows could not be mapped into the simulator's memory.
    #[error("the windows as simulator memory: {0}")]
    Memory(#[from] pto_sim::MemoryError),
    /// The run on the simulator failed.
    #[error(transparent)]
    Sim(#[from] SimBackendError),
    /// The job could not be formed over TCP, or its closing barrier failed.
    #[error(transparent)]
    Bootstrap(#[from] crate::transport::bootstrap::BootstrapError),
    /// The job secret could not be read.
    #[error(transparent)]
    Secret(#[from] crate::transport::secret::SecretError),
    /// CANN could not be loaded.
    #[cfg(feature = "cann")]
    #[error(transparent)]
    Cann(#[from] pto_device_sys::cann::CannError),
    /// The HCCL windows could not be made.
    #[cfg(feature = "cann")]
    #[error(transparent)]
    Hccl(#[from] crate::comm::hccl::HcclError),
    /// The session or the run on the NPU failed.
    #[cfg(feature = "cann")]
    #[error(transparent)]
    Npu(#[from] crate::npu::NpuError),
}
