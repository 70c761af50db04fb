//! Creating (rank 0) or joining (the others) a communicator's object, and forming the job:
//! every rank met, the watching launcher mapped it, the name removed.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pto_runtime_core::{BarrierError, MAX_RANKS, PoisonReason};

use super::ShmComm;
use super::ShmConfig;
use crate::comm::error::CommError;
use crate::comm::header::{
    HEADER, MAGIC, W_ATTACHED, W_HEARTBEAT, W_JOINED, W_MAGIC, W_PID, W_RANKS, W_WATCHED, W_WINDOW,
};
use crate::comm::heartbeat::Heartbeat;
use crate::comm::liveness::Liveness;
use crate::comm::name::object_name;
use crate::comm::raw_shm::Mapping;
use crate::signals;

/// Largest window per rank.
const MAX_WINDOW: u64 = 16 << 30;

impl ShmComm {
    /// Creates (rank 0) or joins (the others) the communicator of `cfg.run_id`, and returns
    /// once every rank has joined; the object's name is removed then. Every wait is bounded
    /// by `cfg.timeout`.
    pub fn init(cfg: &ShmConfig) -> Result<Self, CommError> {
        Self::init_inner(cfg, false)
    }

    /// As [`ShmComm::init`], for a rank whose launcher watches the job
    /// ([`crate::comm::JobWatch`]): the name is removed only once the launcher mapped the object
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
            let layout = super::create::Layout {
                ranks: cfg.ranks,
                window,
                len,
                watched,
            };
            super::create::create(&name, &label, &layout)?
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
            spins: super::barrier_spins(cfg.ranks),
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
}
