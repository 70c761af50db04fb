//! One rank of an allreduce job: of `pto-launch`'s own spawn, or of another launcher
//! (mpirun, a PMI launcher, Slurm, torchrun). Finds its job (run id, rendezvous, secret),
//! forms it over TCP when asked, runs its part and meets its peers at the end.

use std::fmt;
use std::time::Duration;

use crate::comm::sanitize_run_id;
use crate::progress::Progress;
use crate::signals;
use crate::transport::secret;

use super::{
    JobOptions, LAUNCHER_PID, Launcher, RankEnv, RankError, RankJob, form_job, job_id_from_env,
    master_rendezvous, parse_rendezvous,
};

/// What one rank checked.
#[derive(Clone, Debug, serde::Serialize)]
pub struct RankReport {
    /// This rank.
    pub rank: u32,
    /// Ranks of the job.
    pub ranks: u32,
    /// Elements summed and checked.
    pub elements: u64,
    /// From joining the communicator to every rank having its sum, ms.
    pub checked_ms: f64,
}

impl fmt::Display for RankReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "rank {}/{}: sum of {} elements checked in {} ms",
            self.rank,
            self.ranks,
            self.elements,
            crate::human::sig3(self.checked_ms)
        )
    }
}

/// Runs this process as rank `env.rank` of the job `opts` describes, reading what the
/// options leave open (run id, job secret, rendezvous) from the environment: joins the job,
/// runs `work` (for `pto-launch allreduce`, `allreduce::run_rank`) as this rank, which says
/// how long its checked part took, then meets the peers at the end. `progress` is handed to
/// `work`.
pub fn run_as_rank<E>(
    opts: &JobOptions,
    env: &RankEnv,
    progress: &Progress,
    work: impl FnOnce(&RankJob, &Progress) -> Result<Duration, E>,
) -> Result<RankReport, RankError>
where
    E: std::error::Error + Send + Sync + 'static,
{
    let var = |k: &str| std::env::var(k).ok();
    let (rank, timeout) = (env.rank, opts.timeout());
    let (rank_var, size_var) = env.launcher.variables();
    if let Some(n) = opts.ranks
        && n != env.ranks
    {
        return Err(RankError::RanksDisagree {
            given: n,
            started: env.ranks,
            size_var,
        });
    }
    // A terminating signal before every rank mapped the job's object removes its name.
    signals::remove_on_signal().map_err(RankError::Signals)?;
    let launcher = var(LAUNCHER_PID);
    let watched = env.launcher == Launcher::PtoLaunch && launcher.is_some();
    if let Some(value) = launcher.filter(|_| watched) {
        let pid = value
            .parse()
            .map_err(|_| RankError::BadLauncherPid { value })?;
        signals::die_with_parent(pid)
            .map_err(|source| RankError::DieWithParent { rank, source })?;
    }
    let rendezvous = match (&opts.rendezvous, &env.master) {
        (Some(r), _) => Some(parse_rendezvous(r).map_err(RankError::Rendezvous)?),
        (None, Some((host, port))) => {
            Some(master_rendezvous(host, *port).map_err(RankError::Rendezvous)?)
        }
        (None, None) => None,
    };
    if let Some(at) = rendezvous
        && at.port() == 0
    {
        return Err(RankError::PortZero { rank, rank_var, at });
    }
    let run_id = match (&opts.run_id, job_id_from_env(var), rendezvous) {
        (Some(id), _, _) => sanitize_run_id(id).map_err(RankError::RunId)?,
        (None, Some(id), _) => id,
        // The address's dots and colons become underscores: a valid run id.
        (None, None, Some(at)) => {
            sanitize_run_id(&format!("rdzv-{at}")).map_err(RankError::RunId)?
        }
        (None, None, None) => return Err(RankError::NoRunId),
    };
    // Over TCP: form the job, check that it fits on one host, and take rank 0's name for the
    // shared objects.
    let formed = match rendezvous {
        Some(at) => {
            let secret = secret::resolve(opts.secret_file.as_deref(), opts.require_secret)
                .map_err(|source| RankError::Secret { rank, source })?;
            let f = form_job(rank, env.ranks, &run_id, at, timeout, secret)
                .map_err(|source| RankError::Form { rank, source })?;
            let hosts = f.distinct_hosts();
            if hosts.len() > 1 {
                let hosts = hosts.into_iter().map(str::to_string).collect();
                return Err(RankError::Hosts { rank, hosts });
            }
            Some(f)
        }
        None => None,
    };
    // Rank 0's unique name, unless pto-launch spawned the ranks: it made the run id unique
    // already, and watches the object under that name.
    let run_id = match &formed {
        Some(f) if !watched => f.shm_name.clone(),
        _ => run_id,
    };
    let job = RankJob {
        rank,
        ranks: env.ranks,
        run_id,
        elements: opts.elements,
        timeout,
        watched,
    };
    let took: Duration = work(&job, progress).map_err(|source| RankError::Work {
        rank,
        source: source.into(),
    })?;
    if let Some(mut f) = formed {
        f.bootstrap
            .barrier()
            .map_err(|source| RankError::ClosingBarrier { rank, source })?;
    }
    progress.finish();
    Ok(RankReport {
        rank,
        ranks: env.ranks,
        elements: opts.elements,
        checked_ms: took.as_secs_f64() * 1e3,
    })
}
