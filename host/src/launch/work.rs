//! What the launcher hands the work of one rank: the rank's place in the job, its run id and
//! its bounds. The work itself (the allreduce, for `pto-launch allreduce`) is passed to
//! [`run_as_rank`](super::run_as_rank) by its caller, so the launcher names no workload.
#![forbid(unsafe_code)]

use std::time::Duration;

/// What one rank's work needs.
#[derive(Clone, Debug)]
pub struct RankJob {
    /// This rank.
    pub rank: u32,
    /// Ranks.
    pub ranks: u32,
    /// Names the job's shared objects.
    pub run_id: String,
    /// Elements (u64) per rank.
    pub elements: u64,
    /// Bound of every wait.
    pub timeout: Duration,
    /// Spawned by `pto-launch`, which watches the job (see
    /// [`ShmComm::init_watched`](crate::comm::ShmComm::init_watched)).
    pub watched: bool,
}
