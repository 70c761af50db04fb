//! Starting ranks: spawning them as processes ([`spawn_job`]), or running as the rank another
//! launcher started ([`run_as_rank`], which finds its rank in the environment), and forming
//! the job over TCP when a rendezvous is given.

mod env;
mod error;
mod job;
mod options;
mod rank;
mod rendezvous;
mod spawn;
mod work;

pub use env::{EnvError, Launcher, RankEnv, job_id_from_env, rank_from_env};
pub use error::{LaunchError, RankError};
pub use job::{
    CommandJob, Culprit, DEFAULT_RANKS, JobReport, Named, RankOutcome, spawn_command_job, spawn_job,
};
pub use options::JobOptions;
pub use rank::{RankReport, run_as_rank};
pub use rendezvous::{
    FormedJob, RendezvousError, form_job, host_id, master_rendezvous, parse_rendezvous,
};
pub use spawn::{JobEnd, LAUNCHER_PID, RankEnd, RankExit, SpawnPlan, rank_command, spawn_ranks};
pub use work::RankJob;
