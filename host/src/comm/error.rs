//! Errors of setting up and using a communicator.

use std::time::Duration;

use pto_runtime_core::{BarrierError, Knob};

/// Why a communicator call failed. Every variant says what to change.
#[derive(Debug, thiserror::Error)]
pub enum CommError {
    /// A rank count of 0 or above 64.
    #[error("{ranks} ranks: a communicator has 1 to 64 ranks")]
    RankCount {
        /// The count given.
        ranks: u32,
    },
    /// A rank at or past the rank count.
    #[error("rank {rank} does not exist in a communicator of {ranks} ranks")]
    NoSuchRank {
        /// The rank given.
        rank: u32,
        /// The rank count.
        ranks: u32,
    },
    /// A window size of 0, or windows too large to map.
    #[error(
        "windows of {bytes} bytes x {ranks} ranks cannot be mapped: give {} of 1 byte to 16 GiB \
         per rank",
        Knob::WindowBytes
    )]
    WindowSize {
        /// Bytes per window asked for.
        bytes: u64,
        /// Ranks.
        ranks: u32,
    },
    /// A run id that cannot name a shared-memory object.
    #[error("run id {0:?}: use 1 to 200 letters, digits, '-' or '_'")]
    BadRunId(String),
    /// The object exists already: another job uses this run id, or a dead one left it behind.
    #[error(
        "shared-memory object {name} exists already: another job uses this run id, or a dead job left it (remove /dev/shm{name})"
    )]
    NameTaken {
        /// The object's name.
        name: String,
    },
    /// The object's name was removed between rank 0's naming it and mapping it: the job was
    /// given up meanwhile (its launcher died, or a peer was told to stop).
    #[error(
        "the job's shared-memory object {name} was removed as soon as rank 0 made it: the job \
         was given up meanwhile (did its launcher or a peer stop?)"
    )]
    Vanished {
        /// The object's name.
        name: String,
    },
    /// A peer created the object with another rank count or window size.
    #[error(
        "the communicator {name} has {ranks} ranks of {bytes}-byte windows, not what this rank asked for"
    )]
    Mismatch {
        /// The object's name.
        name: String,
        /// Its ranks.
        ranks: u64,
        /// Its window size.
        bytes: u64,
    },
    /// Another process joined as this rank already.
    #[error("rank {rank} joined {name} twice")]
    DuplicateRank {
        /// The rank.
        rank: u32,
        /// The object's name.
        name: String,
    },
    /// Rank 0 did not create the object in time.
    #[error("{name} did not appear within {waited:?}: is rank 0 running with the same run id?")]
    NotCreated {
        /// The object's name.
        name: String,
        /// How long this rank waited.
        waited: Duration,
    },
    /// `/dev/shm` has less room than the job's object needs.
    #[error(
        "the job's shared-memory object {name} needs {needed} bytes but /dev/shm has {free} \
         bytes free: lower {knob} or the ranks, or give /dev/shm more room",
        knob = Knob::WindowBytes
    )]
    NoSpace {
        /// The object's name.
        name: String,
        /// Bytes the object needs (header and every window).
        needed: u64,
        /// Bytes free in /dev/shm.
        free: u64,
    },
    /// The launcher that spawned this rank never mapped the job's object.
    #[error(
        "the launcher did not map {name} within {waited:?}: is it still running? (a rank \
         spawned by pto-launch waits for it, so that it can stop the job if a rank dies)"
    )]
    Unwatched {
        /// The object's name.
        name: String,
        /// How long this rank waited.
        waited: Duration,
    },
    /// A barrier failed: a timeout here, or a peer gave up.
    #[error("{0}")]
    Barrier(#[from] BarrierError),
    /// The operating system refused a shared-memory call.
    #[error("{call} on {name}: {source}")]
    Os {
        /// The call.
        call: &'static str,
        /// The object's name.
        name: String,
        /// The OS error.
        source: std::io::Error,
    },
}
