//! Starting ranks: this process's rank when another launcher started it.

mod env;

pub use env::{EnvError, Launcher, RankEnv, rank_from_env};
