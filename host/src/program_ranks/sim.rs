//! One rank's run of a program on the simulator: the job's windows in POSIX shared memory
//! (`ShmComm`), mapped into the simulated machine's memory, then the run, then the closing
//! barrier. A failure gives the job up in this rank's name, so its peers stop at once.

use std::sync::Arc;

use pto_runtime_core::PoisonReason;

use super::{ProgramRank, ProgramRankError, RankWindows};
use crate::comm::{ShmComm, ShmConfig, sweep_stale};
use crate::program::RunSpec;
use crate::sim_backend::{SimBackendOptions, SimOutcome, run};

/// Joins `rank`'s job, runs the program `build` makes for its windows on a simulated
/// machine shaped by `opts`, and meets the other ranks before letting the windows go.
pub fn run_on_sim(
    rank: &ProgramRank,
    mut opts: SimBackendOptions,
    build: impl FnOnce(&RankWindows) -> Result<RunSpec, String>,
) -> Result<SimOutcome, ProgramRankError> {
    let cfg = ShmConfig {
        rank: rank.rank,
        ranks: rank.ranks,
        run_id: rank.run_id.clone(),
        window_bytes: rank.window_bytes,
        timeout: rank.timeout,
    };
    let comm = Arc::new(if rank.watched {
        ShmComm::init_watched(&cfg)?
    } else {
        // Under another launcher, rank 0 clears what earlier jobs killed whole left.
        if rank.rank == 0 {
            sweep_stale();
        }
        ShmComm::init(&cfg)?
    });
    let result = run_joined(&comm, &mut opts, build);
    if result.is_err() {
        comm.poison(PoisonReason::Aborted);
    }
    result
}

fn run_joined(
    comm: &Arc<ShmComm>,
    opts: &mut SimBackendOptions,
    build: impl FnOnce(&RankWindows) -> Result<RunSpec, String>,
) -> Result<SimOutcome, ProgramRankError> {
    let ctx = comm.context().map_err(ProgramRankError::Windows)?;
    let bytes = comm.window_size();
    let local = ctx.local_window();
    let windows = RankWindows::of(&ctx, local, bytes)?;
    let spec = build(&windows).map_err(ProgramRankError::Spec)?;
    opts.windows = comm.window_ranges()?;
    let out = run(&spec, opts)?;
    // Nobody lets its window go while a peer's kernels may still write into it.
    comm.barrier()?;
    Ok(out)
}
