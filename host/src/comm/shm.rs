//! The shared-memory communicator: one POSIX object per communicator, named by the run id,
//! `[4 KiB header][window of rank 0][window of rank 1]...`.
//!
//! Rank 0 creates the object exclusively (a name already taken is an error, never a silent
//! reuse), sizes it (the kernel zero-fills it, so every window is zero before any peer can see
//! it) and publishes the header last; the others wait for it, bounded. Every rank then joins
//! (a bit of its own) and meets the others at the barrier. The last rank to leave removes the
//! object; leaving is idempotent.

use std::ffi::CString;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use pto_runtime_core::{BarrierWords, CommContext, MAX_RANKS, PoisonReason};
use pto_sim::{DeviceMemory, MemoryError, SharedWords};

use super::error::CommError;
use super::raw_shm::{Mapping, futex_wait, futex_wake, unlink};

const HEADER: u64 = 4096;
const MAGIC: u64 = 0x5054_4f5f_434f_4d4d; // "PTO_COMM"
/// Header words.
const W_MAGIC: usize = 0;
const W_RANKS: usize = 1;
const W_WINDOW: usize = 2;
const W_ATTACHED: usize = 3;
const W_JOINED: usize = 4;
const W_BARRIER: usize = 8;
/// Polls of the barrier word before a waiting rank blocks.
const SPINS_BEFORE_BLOCKING: u32 = 100;
/// Largest window per rank.
const MAX_WINDOW: u64 = 16 << 30;

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
    map: Mapping,
    name: CString,
    rank: u32,
    ranks: u32,
    window: u64,
    timeout: Duration,
    left: bool,
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
    /// once every rank has joined. Every wait is bounded by `cfg.timeout`.
    pub fn init(cfg: &ShmConfig) -> Result<Self, CommError> {
        if cfg.ranks == 0 || cfg.ranks as usize > MAX_RANKS {
            return Err(CommError::RankCount { ranks: cfg.ranks });
        }
        if cfg.rank >= cfg.ranks {
            return Err(CommError::NoSuchRank {
                rank: cfg.rank,
                ranks: cfg.ranks,
            });
        }
        if cfg.window_bytes == 0 || cfg.window_bytes > MAX_WINDOW {
            return Err(CommError::WindowSize {
                bytes: cfg.window_bytes,
                ranks: cfg.ranks,
            });
        }
        let id = &cfg.run_id;
        if id.is_empty()
            || id.len() > 200
            || !id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(CommError::BadRunId(id.clone()));
        }
        let window = cfg.window_bytes.next_multiple_of(64);
        let label = format!("/pto-{id}");
        let name = CString::new(label.clone()).map_err(|_| CommError::BadRunId(id.clone()))?;
        let os = |call: &'static str| {
            let label = label.clone();
            move |source| CommError::Os {
                call,
                name: label,
                source,
            }
        };
        let start = Instant::now();
        let map = if cfg.rank == 0 {
            let len = HEADER + window * cfg.ranks as u64;
            let map = Mapping::create(&name, len as usize)
                .map_err(os("shm_open(O_CREAT|O_EXCL)"))?
                .ok_or(CommError::NameTaken {
                    name: label.clone(),
                })?;
            let w = map.words();
            w[W_RANKS].store(cfg.ranks as u64, Ordering::Relaxed);
            w[W_WINDOW].store(window, Ordering::Relaxed);
            // Published last: a rank that sees the magic sees a complete header.
            w[W_MAGIC].store(MAGIC, Ordering::Release);
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
        let w = map.words();
        let (ranks, bytes) = (
            w[W_RANKS].load(Ordering::Relaxed),
            w[W_WINDOW].load(Ordering::Relaxed),
        );
        if ranks != cfg.ranks as u64 || bytes != window {
            return Err(CommError::Mismatch {
                name: label,
                ranks,
                bytes,
            });
        }
        w[W_ATTACHED].fetch_add(1, Ordering::AcqRel);
        let comm = ShmComm {
            map,
            name,
            rank: cfg.rank,
            ranks: cfg.ranks,
            window,
            timeout: cfg.timeout,
            left: false,
        };
        let bit = 1u64 << cfg.rank;
        if comm.map.words()[W_JOINED].fetch_or(bit, Ordering::AcqRel) & bit != 0 {
            comm.barrier_words().poison(cfg.rank, PoisonReason::Aborted);
            return Err(CommError::DuplicateRank {
                rank: cfg.rank,
                name: label,
            });
        }
        comm.barrier()?;
        Ok(comm)
    }

    /// Gives up the barrier of the job `run_id` on behalf of `rank` without joining it (a
    /// launcher that saw `rank` die): every rank waiting in it, or arriving later, fails
    /// naming `rank`. Returns whether the job's object existed.
    pub fn poison_job(run_id: &str, rank: u32, reason: PoisonReason) -> Result<bool, CommError> {
        let label = format!("/pto-{run_id}");
        let name = CString::new(label.clone()).map_err(|_| CommError::BadRunId(run_id.into()))?;
        let map = Mapping::open(&name).map_err(|source| CommError::Os {
            call: "shm_open",
            name: label,
            source,
        })?;
        match map {
            Some(map)
                if map.len() as u64 >= HEADER
                    && map.words()[W_MAGIC].load(Ordering::Acquire) == MAGIC =>
            {
                let b = map.barrier(W_BARRIER);
                b.poison(rank, reason);
                futex_wake(&map.words()[W_BARRIER + 1]);
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// Removes the shared object of the job `run_id`, if it is still there (a launcher
    /// cleaning up after ranks that died before leaving).
    pub fn remove_job(run_id: &str) -> Result<(), CommError> {
        let label = format!("/pto-{run_id}");
        let name = CString::new(label.clone()).map_err(|_| CommError::BadRunId(run_id.into()))?;
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
        let result = self.barrier_words().wait(self.rank, self.ranks, |_| {
            spins += 1;
            if spins < SPINS_BEFORE_BLOCKING {
                std::hint::spin_loop();
            } else {
                // Many ranks may share few CPUs: block on the generation word until the
                // round's last rank bumps it (or a slice of the timeout passes).
                let seen = generation.load(Ordering::Acquire) as u32;
                let left = deadline.saturating_duration_since(Instant::now());
                futex_wait(generation, seen, left.min(Duration::from_millis(10)));
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
    }

    /// Leaves the communicator; the last rank out removes the shared-memory object.
    /// Idempotent; dropping the handle does it too.
    pub fn destroy(&mut self) -> Result<(), CommError> {
        if std::mem::replace(&mut self.left, true) {
            return Ok(());
        }
        if self.map.words()[W_ATTACHED].fetch_sub(1, Ordering::AcqRel) == 1 {
            unlink(&self.name).map_err(|source| CommError::Os {
                call: "shm_unlink",
                name: self.name.to_string_lossy().into_owned(),
                source,
            })?;
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
