//! One rank's run of a program on an NPU: the job formed over TCP (with the job secret from
//! the environment), the HCCL windows made through CANN, a session on the rank's device,
//! the run (its own window watched for deferred conditions), then the closing barrier.

use std::sync::Arc;

use pto_device_sys::cann::Cann;

use super::{ProgramRank, ProgramRankError, RankWindows};
use crate::comm::hccl::{HcclComm, HcclConfig};
use crate::npu::{NpuOptions, NpuSession, RunOutcome};
use crate::program::RunSpec;
use crate::transport::bootstrap::Bootstrap;
use crate::transport::secret;

/// Forms `rank`'s job, makes its HCCL windows on device `opts.device`, runs the program
/// `build` makes for them and meets the other ranks before letting the windows go.
pub fn run_on_npu(
    rank: &ProgramRank,
    opts: NpuOptions,
    build: impl FnOnce(&RankWindows) -> Result<RunSpec, String>,
) -> Result<RunOutcome, ProgramRankError> {
    let at = rank.rendezvous.ok_or(ProgramRankError::NoRendezvous)?;
    let secret = secret::resolve(None, false)?;
    let mut b = Bootstrap::tcp_with_secret(
        rank.rank,
        rank.ranks,
        &rank.run_id,
        at,
        None,
        rank.timeout,
        secret,
    )?;
    let cann = Arc::new(if opts.cann_dirs.is_empty() {
        Cann::load()?
    } else {
        Cann::load_from(&opts.cann_dirs)?
    });
    let cfg = HcclConfig {
        device: opts.device,
        window_bytes: rank.window_bytes,
    };
    let comm = HcclComm::init(&cann, &cfg, &mut b)?;
    let (local, bytes) = comm.local_window();
    let windows = RankWindows::of(comm.context(), local, bytes)?;
    let mut spec = build(&windows).map_err(ProgramRankError::Spec)?;
    spec.watched.push((local, bytes));
    let mut session = NpuSession::open(opts)?;
    let out = session.run(&spec)?;
    // Nobody lets its window go while a peer's kernels may still write into it.
    b.barrier()?;
    drop(session);
    drop(comm);
    Ok(out)
}
