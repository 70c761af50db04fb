//! Starting ranks: spawning them as processes, or finding this process's rank when another
//! launcher started it.

mod env;
mod spawn;

pub use env::{EnvError, Launcher, RankEnv, job_id_from_env, rank_from_env};
pub use spawn::{RankEnd, RankExit, SpawnPlan, spawn_ranks};
