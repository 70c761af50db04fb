//! The shared-memory communicator: one POSIX object per communicator, named by the run id,
//! `[4 KiB header][window of rank 0][window of rank 1]...`.
//!
//! Rank 0 creates the object exclusively (a name already taken is an error, never a silent
//! reuse), reserves its space (`fallocate`: the kernel zero-fills it, so every window is zero
//! before any peer can see it, and a full `/dev/shm` is an error naming the bytes, not a
//! SIGBUS later) and publishes the header last; the others wait for it, bounded. Every rank
//! then joins (a bit of its own) and meets the others at the barrier: once every rank (and a
//! watching launcher) has mapped the object, its name is removed, so no later failure of any
//! process can leak it. Until then a failure removes it, and a rank that installed
//! [`crate::signals::remove_on_signal`] removes it on SIGINT, SIGTERM or SIGHUP too.
//!
//! A thread of each rank bumps its heartbeat word while the process runs (and its waits bump
//! it too); a peer whose heartbeat stalls is named, as dead (its process is gone) or
//! unresponsive (alive but stopped or frozen), by any rank waiting for it or the launcher.

use std::ffi::CString;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pto_runtime_core::{BarrierError, BarrierWords, CommContext, MAX_RANKS, PoisonReason};
use pto_sim::{DeviceMemory, MemoryError, SharedWords};

use super::error::CommError;
#[cfg(doc)]
use super::liveness::HUNG_AFTER;
use super::liveness::{LEFT, Liveness};
use super::name::object_name;
use super::raw_shm::{Mapping, futex_wait, futex_wake, shm_free_bytes, unlink};
use crate::signals;

/// Removes `name`, the name of `map`, unless someone already did or is doing it (the
/// header's [`W_UNLINKED`] word decides, so a name is removed once and never a later job's).
pub(super) fn remove_once(map: &Mapping, name: &std::ffi::CStr) -> std::io::Result<()> {
    if map.words()[W_UNLINKED]
        .compare_exchange(0, 1, Ordering::AcqRel, Ordering::Acquire)
        .is_ok()
    {
        unlink(name)?;
    }
    Ok(())
}

pub(super) const HEADER: u64 = 4096;
pub(super) const MAGIC: u64 = 0x5054_4f5f_434f_4d4d; // "PTO_COMM"
/// Header words.
const W_MAGIC: usize = 0;
const W_RANKS: usize = 1;
const W_WINDOW: usize = 2;
const W_ATTACHED: usize = 3;
const W_JOINED: usize = 4;
/// Non-zero once the launcher watching the job has mapped the object.
pub(super) const W_WATCHED: usize = 5;
/// Non-zero once someone took on removing the object's name (removal happens once).
pub(super) const W_UNLINKED: usize = 6;
pub(super) const W_BARRIER: usize = 8;
/// One heartbeat word per rank: 0 before it joins, then bumped while it waits, [`LEFT`] once
/// it left.
pub(super) const W_HEARTBEAT: usize = 64;
/// One word per rank: its process id (on this host), written when it joins.
pub(super) const W_PID: usize = 128;
/// Polls of the barrier word before a waiting rank blocks.
const SPINS_BEFORE_BLOCKING: u32 = 100;
/// Largest window per rank.
const MAX_WINDOW: u64 = 16 << 30;
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
    left: bool,
    peers: Mutex<Liveness>,
    /// The thread that bumps this rank's heartbeat while the process runs.
    beat: Option<Heartbeat>,
}

/// A thread that bumps one rank's heartbeat word every [`BEAT_EVERY`] until stopped: the
/// rank is alive as long as its process runs (a stopped or frozen process stops it too).
struct Heartbeat {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<()>,
}

/// How often a rank's heartbeat thread bumps its word.
const BEAT_EVERY: Duration = Duration::from_millis(5);

impl Heartbeat {
    fn start(map: Arc<Mapping>, rank: u32) -> std::io::Result<Self> {
        let stop = Arc::new(AtomicBool::new(false));
        let thread = std::thread::Builder::new()
            .name(format!("heartbeat-{rank}"))
            .spawn({
                let stop = stop.clone();
                move || {
                    while !stop.load(Ordering::Acquire) {
                        map.words()[W_HEARTBEAT + rank as usize].fetch_add(1, Ordering::Release);
                        std::thread::park_timeout(BEAT_EVERY);
                    }
                }
            })?;
        Ok(Heartbeat { stop, thread })
    }

    fn stop(self) {
        self.stop.store(true, Ordering::Release);
        self.thread.thread().unpark();
        let _ = self.thread.join();
    }
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
    /// Creates (rank 0) or joins (the others) the communicator of `cfg.run_id`, and returns
    /// once every rank has joined; the object's name is removed then. Every wait is bounded
    /// by `cfg.timeout`.
    pub fn init(cfg: &ShmConfig) -> Result<Self, CommError> {
        Self::init_inner(cfg, false)
    }

    /// As [`ShmComm::init`], for a rank whose launcher watches the job
    /// ([`super::JobWatch`]): the name is removed only once the launcher mapped the object
    /// too (bounded by `cfg.timeout`), so that it can poison the job when a rank dies.
    pub fn init_watched(cfg: &ShmConfig) -> Result<Self, CommError> {
        Self::init_inner(cfg, true)
    }

    fn init_inner(cfg: &ShmConfig, watched: bool) -> Result<Self, CommError> {
        if cfg.ranks == 0 || cfg.ranks as usize > MAX_RANKS {
            return Err(CommError::RankCount { ranks: cfg.ranks });
        }
        if cfg.rank >= cfg.ranks {
            return Err(CommError::NoSuchRank {
                rank: cfg.rank,
                ranks: cfg.ranks,
            });
        }
        let too_large = CommError::WindowSize {
            bytes: cfg.window_bytes,
            ranks: cfg.ranks,
        };
        if cfg.window_bytes == 0 || cfg.window_bytes > MAX_WINDOW {
            return Err(too_large);
        }
        let window = cfg.window_bytes.next_multiple_of(64);
        let Some(len) = window
            .checked_mul(cfg.ranks as u64)
            .and_then(|w| w.checked_add(HEADER))
            .and_then(|l| usize::try_from(l).ok())
        else {
            return Err(too_large);
        };
        let (label, name) = object_name(&cfg.run_id)?;
        let os = |call: &'static str| {
            let label = label.clone();
            move |source| CommError::Os {
                call,
                name: label,
                source,
            }
        };
        let start = Instant::now();
        let pid = std::process::id() as u64;
        let map = if cfg.rank == 0 {
            // A terminating signal comes before the object exists or once its name is
            // guarded, never between (a peer that opens it later guards it too).
            let held = signals::hold();
            if let Some(free) = shm_free_bytes()
                && free < len as u64
            {
                return Err(CommError::NoSpace {
                    name: label,
                    needed: len as u64,
                    free,
                });
            }
            let map = Mapping::create(&name, len)
                .map_err(|e| match e.raw_os_error() {
                    Some(libc::ENOSPC) => CommError::NoSpace {
                        name: label.clone(),
                        needed: len as u64,
                        free: shm_free_bytes().unwrap_or(0),
                    },
                    _ => os("shm_open(O_CREAT|O_EXCL) and fallocate")(e),
                })?
                .ok_or(CommError::NameTaken {
                    name: label.clone(),
                })?;
            signals::guard(&name);
            let w = map.words();
            w[W_RANKS].store(cfg.ranks as u64, Ordering::Relaxed);
            w[W_WINDOW].store(window, Ordering::Relaxed);
            w[W_PID].store(pid, Ordering::Relaxed);
            // Published last: a rank that sees the magic sees a complete header.
            w[W_MAGIC].store(MAGIC, Ordering::Release);
            drop(held);
            map
        } else {
            loop {
                if let Some(map) = Mapping::open(&name).map_err(os("shm_open"))?
                    && map.len() as u64 >= HEADER
                    && map.words()[W_MAGIC].load(Ordering::Acquire) == MAGIC
                {
                    break map;
                }
                if start.elapsed() > cfg.timeout {
                    return Err(CommError::NotCreated {
                        name: label,
                        waited: start.elapsed(),
                    });
                }
                std::thread::sleep(Duration::from_millis(1));
            }
        };
        if cfg.rank != 0 {
            signals::guard(&name);
        }
        let w = map.words();
        let (ranks, bytes) = (
            w[W_RANKS].load(Ordering::Relaxed),
            w[W_WINDOW].load(Ordering::Relaxed),
        );
        if ranks != cfg.ranks as u64 || bytes != window || map.len() != len {
            // Not ours to remove: another job of this name may be forming.
            signals::unguard();
            return Err(CommError::Mismatch {
                name: label,
                ranks,
                bytes,
            });
        }
        w[W_ATTACHED].fetch_add(1, Ordering::AcqRel);
        let comm = ShmComm {
            map: Arc::new(map),
            name,
            rank: cfg.rank,
            ranks: cfg.ranks,
            window,
            timeout: cfg.timeout,
            left: false,
            peers: Mutex::new(Liveness::new(cfg.ranks)),
            beat: None,
        };
        let bit = 1u64 << cfg.rank;
        if comm.map.words()[W_JOINED].fetch_or(bit, Ordering::AcqRel) & bit != 0 {
            comm.barrier_words().poison(cfg.rank, PoisonReason::Aborted);
            signals::unguard();
            return Err(CommError::DuplicateRank {
                rank: cfg.rank,
                name: label,
            });
        }
        let mut comm = comm;
        let w = comm.map.words();
        w[W_PID + cfg.rank as usize].store(pid, Ordering::Relaxed);
        w[W_HEARTBEAT + cfg.rank as usize].store(1, Ordering::Release);
        comm.beat = Some(
            Heartbeat::start(comm.map.clone(), cfg.rank).map_err(|source| CommError::Os {
                call: "spawning the heartbeat thread",
                name: label.clone(),
                source,
            })?,
        );
        // The job cannot form without this rank: any failure from here removes the name.
        if let Err(e) = comm.form(watched) {
            let _ = comm.remove_name();
            return Err(e);
        }
        Ok(comm)
    }

    /// Meets every rank, waits for the watching launcher if there is one, then removes the
    /// name: everyone who needs the object has it mapped.
    fn form(&self, watched: bool) -> Result<(), CommError> {
        self.barrier()?;
        if watched {
            let deadline = Instant::now() + self.timeout;
            while self.map.words()[W_WATCHED].load(Ordering::Acquire) == 0 {
                if let Some((rank, reason)) = self.poisoned() {
                    return Err(BarrierError::Poisoned { rank, reason }.into());
                }
                if Instant::now() >= deadline {
                    return Err(CommError::Unwatched {
                        name: self.name.to_string_lossy().into_owned(),
                        waited: self.timeout,
                    });
                }
                self.heartbeat();
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        self.remove_name()
    }

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
    /// that times out poisons the barrier and every other rank fails naming it.
    pub fn barrier(&self) -> Result<(), CommError> {
        let deadline = Instant::now() + self.timeout;
        let generation = &self.map.words()[W_BARRIER + 1];
        let mut spins = 0u32;
        self.heartbeat();
        let result = self.barrier_words().wait(self.rank, self.ranks, |_| {
            spins += 1;
            if spins < SPINS_BEFORE_BLOCKING {
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
            Instant::now() < deadline
        });
        // Whoever released the round (or poisoned it) wakes the sleepers; a wake with none
        // asleep costs one system call.
        futex_wake(generation);
        result?;
        Ok(())
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
