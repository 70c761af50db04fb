//! The launcher's view of a job it spawned: it maps the job's object as soon as rank 0 has
//! made it (the ranks remove the name only after that), so that it can poison the job in the
//! name of a rank that died, and see which rank stopped responding; once every rank ended, it
//! removes the name if no rank did ([`JobWatch::remove_leftover`]).

use std::ffi::CString;
use std::sync::atomic::Ordering;

use pto_runtime_core::PoisonReason;

use super::error::CommError;
use super::header::{HEADER, MAGIC, W_BARRIER, W_HEARTBEAT, W_PID, W_UNLINKED, W_WATCHED};
use super::liveness::Liveness;
use super::name::object_name;
use super::raw_shm::{Mapping, futex_wake, unlink};

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
        let Some((map, name)) = find(run_id, creator)? else {
            return Ok(None);
        };
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

    /// Removes the name of the job `run_id` if it is still there and the object under it is
    /// the one process `creator` (the job's rank 0) made: for a launcher once every rank of
    /// its job ended, whoever died when (a rank 0 killed at any instant leaves no name or a
    /// complete object that says who made it). `Ok(true)` if it removed it.
    pub fn remove_leftover(run_id: &str, creator: u32) -> Result<bool, CommError> {
        let Some((_, name)) = find(run_id, creator)? else {
            return Ok(false);
        };
        unlink(&name).map_err(|source| CommError::Os {
            call: "shm_unlink",
            name: name.to_string_lossy().into_owned(),
            source,
        })?;
        Ok(true)
    }
}

/// Maps the object of job `run_id` if it exists and was made by process `creator`.
fn find(run_id: &str, creator: u32) -> Result<Option<(Mapping, CString)>, CommError> {
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
    Ok(Some((map, name)))
}
