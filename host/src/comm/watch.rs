//! The launcher's view of a job it spawned: it maps the job's object as soon as rank 0 has
//! made it (the ranks remove the name only after that), so that it can poison the job in the
//! name of a rank that died, see which rank stopped responding, and remove the name if the
//! job never formed.

use std::ffi::CString;
use std::sync::atomic::Ordering;

use pto_runtime_core::PoisonReason;

use super::error::CommError;
use super::header::{
    HEADER, MAGIC, W_BARRIER, W_HEARTBEAT, W_PID, W_UNLINKED, W_WATCHED, remove_once,
};
use super::liveness::Liveness;
use super::name::object_name;
use super::raw_shm::{Mapping, futex_wake};

/// A launcher's mapping of the job it spawned.
pub struct JobWatch {
    map: Mapping,
    name: CString,
    live: Liveness,
}

impl std::fmt::Debug for JobWatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JobWatch")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl JobWatch {
    /// Maps the object of job `run_id` of `ranks` ranks if it exists and was made by the
    /// process `creator` (the launcher's rank 0, so that a leftover or another job of that
    /// name is never taken for this one), and tells the ranks it is watched. `Ok(None)` while
    /// it is not there yet.
    pub fn open(run_id: &str, ranks: u32, creator: u32) -> Result<Option<Self>, CommError> {
        let (label, name) = object_name(run_id)?;
        let map = Mapping::open(&name).map_err(|source| CommError::Os {
            call: "shm_open",
            name: label,
            source,
        })?;
        let Some(map) = map else { return Ok(None) };
        let need = HEADER as usize / 8;
        if map.words().len() < need
            || map.words()[0].load(Ordering::Acquire) != MAGIC
            || map.words()[W_PID].load(Ordering::Relaxed) != creator as u64
        {
            return Ok(None);
        }
        map.words()[W_WATCHED].store(1, Ordering::Release);
        Ok(Some(JobWatch {
            map,
            name,
            live: Liveness::new(ranks),
        }))
    }

    /// Gives the job up in the name of `rank`: every rank waiting in the barrier, or looking
    /// at it later, fails naming `rank` (the first poison wins).
    pub fn poison(&self, rank: u32, reason: PoisonReason) {
        self.map.barrier(W_BARRIER).poison(rank, reason);
        futex_wake(&self.map.words()[W_BARRIER + 1]);
    }

    /// The rank that gave the job up, and why, if one did.
    pub fn poisoned(&self) -> Option<(u32, PoisonReason)> {
        self.map.barrier(W_BARRIER).poisoned()
    }

    /// Looks at every rank's heartbeat: the first rank found dead or unresponsive poisons
    /// the job and is returned (see [`crate::comm::HUNG_AFTER`]).
    pub fn check(&mut self) -> Option<(u32, PoisonReason)> {
        let culprit = self.live.check(self.map.words(), None)?;
        self.poison(culprit.0, culprit.1);
        self.poisoned()
    }

    /// Whether `rank` has joined the job (its heartbeat started).
    pub fn joined(&self, rank: u32) -> bool {
        self.map
            .words()
            .get(W_HEARTBEAT + rank as usize)
            .is_some_and(|w| w.load(Ordering::Acquire) != 0)
    }

    /// Whether the job's name was removed (or is being removed): a rank that has not opened
    /// the object yet never will.
    pub fn name_removed(&self) -> bool {
        self.map.words()[W_UNLINKED].load(Ordering::Acquire) != 0
    }

    /// Removes the job's name if no rank did (a job that never formed); idempotent.
    pub fn remove(&self) -> Result<(), CommError> {
        remove_once(&self.map, &self.name).map_err(|source| CommError::Os {
            call: "shm_unlink",
            name: self.name.to_string_lossy().into_owned(),
            source,
        })
    }
}
