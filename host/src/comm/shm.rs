//! The shared-memory communicator: one POSIX object per communicator, named by the run id,
//! `[4 KiB header][window of rank 0][window of rank 1]...`.
//!
//! Rank 0 makes the object with no name (`O_TMPFILE`), reserves its space (`fallocate`: the
//! kernel zero-fills it, so every window is zero before any peer can see it, and a full
//! `/dev/shm` is an error naming the bytes, not a SIGBUS later), writes its header (who made
//! it included) and only then names it, exclusively (a name already taken is an error, never
//! a silent reuse); the others wait for the name, bounded. Every rank
//! then joins (a bit of its own) and meets the others at the barrier: once every rank (and a
//! watching launcher) has mapped the object, its name is removed, so no later failure of any
//! process can leak it. Until then a failure removes it, and a rank that installed
//! [`crate::signals::remove_on_signal`] removes it on SIGINT, SIGTERM or SIGHUP too.
//!
//! A thread of each rank bumps its heartbeat word while the process runs (and its waits bump
//! it too); a peer whose heartbeat stalls is named, as dead (its process is gone) or
//! unresponsive (alive but stopped or frozen), by any rank waiting for it or the launcher.

use std::ffi::CString;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pto_runtime_core::{BarrierWords, CommContext, PoisonReason};
use pto_sim::{DeviceMemory, MemoryError, SharedWords};

use super::error::CommError;
use super::header::{HEADER, W_ATTACHED, W_BARRIER, W_HEARTBEAT, remove_once};
use super::heartbeat::Heartbeat;
#[cfg(doc)]
use super::liveness::HUNG_AFTER;
use super::liveness::{LEFT, Liveness};
use super::name::object_name;
use super::raw_shm::{Mapping, futex_wait, futex_wake, unlink};
use crate::signals;

mod create;
mod join;

/// Polls of the barrier word before a waiting rank blocks, where every rank has a CPU.
const SPINS_BEFORE_BLOCKING: u32 = 100;

/// How long a waiting rank of `ranks` spins before it blocks: [`SPINS_BEFORE_BLOCKING`]
/// where the ranks fit this machine's CPUs, none where they outnumber them (a spinning
/// waiter would hold the CPU a rank that has not arrived yet needs: at 8 ranks on 2 CPUs
/// blocking at once halves the barrier's time).
fn barrier_spins(ranks: u32) -> u32 {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if ranks as usize <= cpus {
        SPINS_BEFORE_BLOCKING
    } else {
        0
    }
}
/// How often a waiting rank looks at its peers' heartbeats.
const CHECK_EVERY: Duration = Duration::from_millis(10);

/// What a rank needs to join a communicator.
#[derive(Clone, Debug)]
pub struct ShmConfig {
    /// This rank.
    pub rank: u32,
    /// Ranks in the communicator.
    pub ranks: u32,
    /// Names the job: two jobs on one machine use two run ids.
    pub run_id: String,
    /// Bytes of each rank's window (rounded up to 64).
    pub window_bytes: u64,
    /// How long any wait may take (creation, joining, a barrier) before it is an error.
    pub timeout: Duration,
}

/// One rank's handle on a shared-memory communicator.
pub struct ShmComm {
    map: Arc<Mapping>,
    name: CString,
    rank: u32,
    ranks: u32,
    window: u64,
    timeout: Duration,
    /// Polls before a barrier waiter blocks ([`barrier_spins`]).
    spins: u32,
    left: bool,
    peers: Mutex<Liveness>,
    /// The thread that bumps this rank's heartbeat while the process runs.
    beat: Option<Heartbeat>,
}

impl std::fmt::Debug for ShmComm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShmComm")
            .field("name", &self.name)
            .field("rank", &self.rank)
            .field("ranks", &self.ranks)
            .field("window", &self.window)
            .finish_non_exhaustive()
    }
}

impl ShmComm {
    /// Removes the object's name, once for the whole job (whoever comes first); the memory
    /// stays mapped in every process that has it.
    fn remove_name(&self) -> Result<(), CommError> {
        signals::unguard();
        remove_once(&self.map, &self.name).map_err(|source| CommError::Os {
            call: "shm_unlink",
            name: self.name.to_string_lossy().into_owned(),
            source,
        })
    }

    /// Bumps this rank's heartbeat: it is alive and making progress. Call it from any loop
    /// that waits (the barrier does); a peer whose heartbeat stalls for [`HUNG_AFTER`] is
    /// named as unresponsive.
    pub fn heartbeat(&self) {
        self.map.words()[W_HEARTBEAT + self.rank as usize].fetch_add(1, Ordering::Release);
    }

    /// Looks at the peers' heartbeats: the first peer found dead (its heartbeat stalled and its
    /// process is gone) or unresponsive (stalled for [`HUNG_AFTER`] while alive) poisons the
    /// job in its name, and is returned. A poisoned job returns the rank it names.
    pub fn check_peers(&self) -> Option<(u32, PoisonReason)> {
        if let Some(p) = self.poisoned() {
            return Some(p);
        }
        let culprit = match self.peers.try_lock() {
            Ok(mut live) => live.check_every(CHECK_EVERY, self.map.words(), Some(self.rank)),
            Err(_) => None, // another thread of this rank is looking right now
        }?;
        self.barrier_words().poison(culprit.0, culprit.1);
        futex_wake(&self.map.words()[W_BARRIER + 1]);
        self.poisoned()
    }

    /// Removes the shared object of the job `run_id`, if it is still there (a launcher
    /// cleaning up after ranks that died before leaving).
    pub fn remove_job(run_id: &str) -> Result<(), CommError> {
        let (label, name) = object_name(run_id)?;
        unlink(&name).map_err(|source| CommError::Os {
            call: "shm_unlink",
            name: label,
            source,
        })
    }

    /// This rank.
    pub fn rank(&self) -> u32 {
        self.rank
    }

    /// Ranks in the communicator.
    pub fn ranks(&self) -> u32 {
        self.ranks
    }

    /// Bytes of each window.
    pub fn window_size(&self) -> u64 {
        self.window
    }

    /// This process's address of this rank's window.
    pub fn local_window_base(&self) -> u64 {
        self.window_base(self.rank)
    }

    /// The device context: this process's address of every rank's window.
    pub fn context(&self) -> Result<CommContext, pto_runtime_core::CommError> {
        let windows: Vec<u64> = (0..self.ranks).map(|r| self.window_base(r)).collect();
        CommContext::new(self.rank, &windows, self.window)
    }

    /// Rank `rank`'s window as 64-bit atomic words (every window is mapped in every rank);
    /// `None` past the last rank.
    pub fn window(&self, rank: u32) -> Option<&[AtomicU64]> {
        if rank >= self.ranks {
            return None;
        }
        let first = ((HEADER + self.window * rank as u64) / 8) as usize;
        Some(&self.map.words()[first..first + (self.window / 8) as usize])
    }

    /// Waits until every rank reached this barrier, at most the configured timeout; a rank
    /// that times out poisons the barrier and every other rank fails naming it, or naming the
    /// first rank that never joined if one did not ([`PoisonReason::NeverJoined`]).
    pub fn barrier(&self) -> Result<(), CommError> {
        let deadline = Instant::now() + self.timeout;
        let generation = &self.map.words()[W_BARRIER + 1];
        let mut spins = 0u32;
        self.heartbeat();
        let result = self.barrier_words().wait(self.rank, self.ranks, |_| {
            spins = spins.saturating_add(1);
            if spins <= self.spins {
                std::hint::spin_loop();
            } else {
                // Many ranks may share few CPUs: block on the generation word until the
                // round's last rank bumps it (or a slice of the timeout passes), and between
                // slices say this rank is alive and look at the others.
                self.heartbeat();
                if self.check_peers().is_some() {
                    return true; // the barrier sees the poison on its next poll
                }
                let seen = generation.load(Ordering::Acquire) as u32;
                let left = deadline.saturating_duration_since(Instant::now());
                futex_wait(generation, seen, left.min(CHECK_EVERY));
            }
            if Instant::now() < deadline {
                return true;
            }
            // Timed out. A rank that never joined is the one the job waited for: nobody
            // could tell that it died (its process was never known), so name it, not
            // whichever rank timed out first.
            if let Some(rank) = self.never_joined() {
                self.barrier_words().poison(rank, PoisonReason::NeverJoined);
                futex_wake(generation);
                return true; // the barrier sees the poison on its next poll
            }
            false
        });
        // The rank that released the round wakes the sleepers. It never polled (nor did a
        // rank that found the round released at once, which wakes in vain: one system call);
        // a rank that polled was released by another, or gave up and poisoned the barrier,
        // which wakes them too.
        if spins == 0 {
            futex_wake(generation);
        }
        result?;
        Ok(())
    }

    /// The first rank that has not joined the communicator (its heartbeat never started), if
    /// one has not.
    fn never_joined(&self) -> Option<u32> {
        let w = self.map.words();
        (0..self.ranks).find(|&r| w[W_HEARTBEAT + r as usize].load(Ordering::Acquire) == 0)
    }

    /// The rank that gave the job up, and why, if one did (a launcher poisons the barrier in
    /// the name of a rank that died).
    pub fn poisoned(&self) -> Option<(u32, PoisonReason)> {
        self.barrier_words().poisoned()
    }

    /// Gives the barrier up for every rank (a peer died, this rank is failing).
    pub fn poison(&self, reason: PoisonReason) {
        self.barrier_words().poison(self.rank, reason);
        // Ranks asleep in the barrier learn it now, not at their next wake-up.
        futex_wake(&self.map.words()[W_BARRIER + 1]);
    }

    /// Leaves the communicator (its heartbeat then says so: peers do not wait for it); the
    /// last rank out removes the name if it is still there.
    /// Idempotent; dropping the handle does it too.
    pub fn destroy(&mut self) -> Result<(), CommError> {
        if std::mem::replace(&mut self.left, true) {
            return Ok(());
        }
        if let Some(beat) = self.beat.take() {
            beat.stop();
        }
        let w = self.map.words();
        w[W_HEARTBEAT + self.rank as usize].store(LEFT, Ordering::Release);
        if w[W_ATTACHED].fetch_sub(1, Ordering::AcqRel) == 1 {
            // Normally removed once every rank joined; this covers a job that never formed.
            self.remove_name()?;
        }
        Ok(())
    }

    /// A view of the sub-domain `ranks` (communicator ranks, this one among them), each window
    /// narrowed to `size` bytes at `offset`. Local: no other rank takes part.
    pub fn sub_domain(
        &self,
        ranks: &[u32],
        offset: u64,
        size: u64,
    ) -> Result<CommContext, pto_runtime_core::CommError> {
        self.context()?.sub_domain(ranks, offset, size)
    }

    /// Every rank's window as a memory range for the simulator (`pto_sim::run_with`), at the
    /// address this process sees it: kernels and engines then reach peers' windows, and
    /// deferred conditions can watch counters in this rank's.
    pub fn window_ranges(self: &Arc<Self>) -> Result<Vec<Arc<DeviceMemory>>, MemoryError> {
        (0..self.ranks)
            .map(|rank| {
                let words = Arc::new(WindowWords {
                    comm: self.clone(),
                    rank,
                });
                DeviceMemory::shared(self.window_base(rank), words).map(Arc::new)
            })
            .collect()
    }

    fn window_base(&self, rank: u32) -> u64 {
        self.map.address() + HEADER + self.window * rank as u64
    }

    fn barrier_words(&self) -> &BarrierWords {
        self.map.barrier(W_BARRIER)
    }
}

/// One rank's window, kept mapped by the communicator it belongs to.
struct WindowWords {
    comm: Arc<ShmComm>,
    rank: u32,
}

impl SharedWords for WindowWords {
    fn words(&self) -> &[AtomicU64] {
        // `rank` is below the rank count by construction (`window_ranges`).
        self.comm.window(self.rank).unwrap_or(&[])
    }
}

impl Drop for ShmComm {
    fn drop(&mut self) {
        if let Err(e) = self.destroy() {
            log::warn!("leaving the communicator: {e}");
        }
    }
}
