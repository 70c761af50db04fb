//! `pto-launch allreduce`: its flags, and which part of the library runs them (the launcher
//! or one rank).

use std::path::PathBuf;
use std::time::Duration;

use clap::value_parser;

use pto_host::allreduce::run_rank;
use pto_host::launch::{JobOptions, rank_from_env, run_as_rank, spawn_job};
use pto_host::progress::Progress;

use crate::error::CliError;
use crate::print;

/// Most elements per rank: a one-rank window of 2^31 u64 (16 GiB) is the communicator's limit.
pub const MAX_ELEMENTS: u64 = 1 << 31;

#[derive(clap::Args, Debug)]
pub struct AllreduceArgs {
    /// Ranks to spawn (1 to 64; default 2). Under another launcher, its world size; a
    /// different --ranks is an error.
    #[arg(long, value_parser = value_parser!(u32).range(1..=64))]
    pub ranks: Option<u32>,
    /// Elements (u64) per rank (1 to 2^31; each rank's window holds ranks x elements x 8
    /// bytes, and the job's shared object ranks times that).
    #[arg(long, default_value_t = 4096, value_parser = value_parser!(u64).range(1..=MAX_ELEMENTS))]
    pub elements: u64,
    /// The communication backend: the shared-memory simulator (`hccl` says how to run on
    /// NPUs instead).
    #[arg(long, value_enum, default_value = "sim")]
    pub backend: Backend,
    /// Names the job's shared objects (default: from the environment, else made up).
    #[arg(long)]
    pub run_id: Option<String>,
    /// Bound of every wait, in seconds (1 to 86400); a dead or stalled peer is noticed sooner.
    #[arg(long, default_value_t = 30, value_parser = value_parser!(u64).range(1..=86_400))]
    pub timeout_s: u64,
    /// After a rank fails, how long the others get to stop on their own before the launcher
    /// stops them, in milliseconds (0 to 600000).
    #[arg(long, default_value_t = 2000, value_parser = value_parser!(u64).range(0..=600_000))]
    pub grace_ms: u64,
    /// Form the job over TCP first: rank 0 listens at this address, the others connect
    /// (default: torchrun's MASTER_ADDR and MASTER_PORT when set). Port 0 lets the launcher
    /// pick a free port for the ranks it spawns.
    #[arg(long, value_name = "tcp://HOST:PORT")]
    pub rendezvous: Option<String>,
    /// The job secret for the TCP bootstrap, as 32 hex digits in this file (mode 600 or
    /// stricter: a file others may read is refused). Default: PTO_JOB_SECRET from the
    /// environment; the launcher makes one up for the ranks it spawns.
    #[arg(long, value_name = "FILE")]
    pub secret_file: Option<PathBuf>,
    /// Refuse to form the job without a job secret (also PTO_REQUIRE_SECRET=1).
    #[arg(long)]
    pub require_secret: bool,
    /// Print one JSON object instead of text (the launcher's gathers every rank's).
    #[arg(long)]
    pub json: bool,
    /// Fault injection: kill this rank (SIGKILL) after --kill-after-ms.
    #[arg(long, hide = true, value_parser = value_parser!(u32).range(0..64))]
    pub kill_rank: Option<u32>,
    /// Fault injection: when to kill --kill-rank.
    #[arg(long, hide = true, default_value_t = 0, value_parser = value_parser!(u64).range(0..=86_400_000))]
    pub kill_after_ms: u64,
    /// Fault injection: stop this rank (SIGSTOP) --stop-after-ms after the job's object
    /// appeared.
    #[arg(long, hide = true, value_parser = value_parser!(u32).range(0..64))]
    pub stop_rank: Option<u32>,
    /// Fault injection: when to stop --stop-rank.
    #[arg(long, hide = true, default_value_t = 0, value_parser = value_parser!(u64).range(0..=86_400_000))]
    pub stop_after_ms: u64,
}

/// `--backend` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Backend {
    /// POSIX shared memory, one process per rank.
    Sim,
    /// NPU windows through CANN (ACL virtual memory, HCCL rendezvous), loaded at run time.
    Hccl,
}

impl AllreduceArgs {
    fn options(&self) -> JobOptions {
        JobOptions {
            ranks: self.ranks,
            elements: self.elements,
            run_id: self.run_id.clone(),
            timeout_s: self.timeout_s,
            grace: Duration::from_millis(self.grace_ms),
            rendezvous: self.rendezvous.clone(),
            secret_file: self.secret_file.clone(),
            require_secret: self.require_secret,
            kill: self
                .kill_rank
                .map(|r| (r, Duration::from_millis(self.kill_after_ms))),
            stop: self
                .stop_rank
                .map(|r| (r, Duration::from_millis(self.stop_after_ms))),
            json: self.json,
        }
    }
}

/// The hccl backend of `allreduce`: the allreduce's kernels are the simulator's (Rust), so
/// on an NPU the way is `pto-launch run --backend npu --ranks N` with AICore kernels; this
/// says so, and whether CANN was found.
fn hccl_backend() -> CliError {
    const WAY: &str = "the allreduce's kernels are the simulator's; on NPUs run your own \
                       program with AICore kernels: pto-launch run --backend npu --ranks N \
                       (see docs/running-on-an-npu.md)";
    #[cfg(feature = "cann")]
    {
        match pto_device_sys::cann::Cann::load() {
            Err(e) => CliError::Hccl(format!("{e}; and {WAY}")),
            Ok(cann) => CliError::Hccl(format!(
                "CANN found ({}), but {WAY}",
                cann.libraries()[0].display()
            )),
        }
    }
    #[cfg(not(feature = "cann"))]
    CliError::Hccl(format!(
        "this pto-launch was built without the `cann` feature; and {WAY}"
    ))
}

/// Runs as the rank the environment names, or else as the launcher of `--ranks` ranks.
pub fn allreduce(a: &AllreduceArgs) -> Result<(), CliError> {
    if a.backend == Backend::Hccl {
        return Err(hccl_backend());
    }
    let mut opts = a.options();
    match rank_from_env(|k| std::env::var(k).ok())? {
        Some(env) => {
            // One bar per job, rank 0's: the ranks share the terminal, if any (pto-launch's
            // spawned ranks write to the launcher's).
            let progress = if env.rank == 0 {
                Progress::on_terminal(opts.elements, "elements")
            } else {
                Progress::hidden()
            };
            let report = run_as_rank(&opts, &env, &progress, run_rank)?;
            opts.ranks = Some(report.ranks);
            print("allreduce", &opts, &report, a.json)
        }
        None => {
            let report = spawn_job(&opts)?;
            opts.ranks = Some(report.ranks);
            print("allreduce", &opts, &report, a.json)?;
            if let Some(sig) = report.interrupted_by {
                return Err(CliError::Interrupted(sig));
            }
            match report.failed() {
                failed if failed.is_empty() => Ok(()),
                failed => Err(CliError::NotPassed(failed)),
            }
        }
    }
}
