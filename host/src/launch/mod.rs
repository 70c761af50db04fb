//! Starting ranks: spawning them as processes, or finding this process's rank when another
//! launcher started it, and forming the job over TCP when a rendezvous is given.

mod env;
mod rendezvous;
mod spawn;

pub use env::{EnvError, Launcher, RankEnv, job_id_from_env, rank_from_env};
pub use rendezvous::{
    FormedJob, RendezvousError, form_job, host_id, master_rendezvous, parse_rendezvous,
};
pub use spawn::{JobEnd, LAUNCHER_PID, RankEnd, RankExit, SpawnPlan, rank_command, spawn_ranks};
