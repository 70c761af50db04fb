//! A barrier for ranks that share three words of memory (a shared-memory header, a window):
//! tickets and generations only ever grow, so no counter is reset between rounds and a fast
//! rank can never release, or be released by, the wrong round; a poison word makes every rank
//! fail fast once one has given up.
//!
//! The protocol is here; how a rank waits (spin, yield, futex, its clock and its timeout) is
//! the caller's, passed as a function.
#![forbid(unsafe_code)]

use core::fmt;

use crate::sync::{AtomicU64, Ordering};

/// The barrier's shared words. All zero is a fresh barrier.
#[repr(C)]
pub struct BarrierWords {
    /// Arrivals so far, all rounds: arrival `t` belongs to round `t / ranks`.
    arrived: AtomicU64,
    /// Rounds completed: a waiter of round `g` leaves once this exceeds `g`.
    generation: AtomicU64,
    /// 0, or `(rank + 1) | reason << 32` of the first rank that gave up.
    poison: AtomicU64,
}

/// Why a rank gave up on a barrier, recorded in the poison word.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum PoisonReason {
    /// It waited past its timeout.
    TimedOut,
    /// It died (recorded in its name by whoever saw it die: the launcher).
    Died,
    /// It is shutting down on an error of its own.
    Aborted,
    /// It stopped making progress (its heartbeat stalled while it lives: hung or stopped),
    /// recorded in its name by a peer or the launcher that noticed.
    Unresponsive,
    /// It never joined: its peers waited past their timeout without ever learning of it
    /// (not started, or gone before it joined), recorded in its name by the rank that timed
    /// out.
    NeverJoined,
}

impl PoisonReason {
    fn code(self) -> u64 {
        match self {
            PoisonReason::TimedOut => 1,
            PoisonReason::Died => 2,
            PoisonReason::Aborted => 3,
            PoisonReason::Unresponsive => 4,
            PoisonReason::NeverJoined => 5,
        }
    }

    fn from_code(code: u64) -> Self {
        match code {
            1 => PoisonReason::TimedOut,
            2 => PoisonReason::Died,
            4 => PoisonReason::Unresponsive,
            5 => PoisonReason::NeverJoined,
            _ => PoisonReason::Aborted,
        }
    }
}

/// Why a barrier did not complete.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum BarrierError {
    /// This rank waited past its timeout (and poisoned the barrier for the others).
    TimedOut {
        /// The round it waited in.
        round: u64,
        /// Ranks that had arrived in that round.
        arrived: u32,
        /// Ranks in the barrier.
        ranks: u32,
    },
    /// Rank `rank` gave up first, for `reason`.
    Poisoned {
        /// The rank that poisoned the barrier.
        rank: u32,
        /// Why.
        reason: PoisonReason,
    },
}

impl fmt::Display for BarrierError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::TimedOut {
                round,
                arrived,
                ranks,
            } => write!(
                f,
                "barrier round {round} timed out with {arrived} of {ranks} ranks arrived: a \
                 peer is slow, stuck or dead"
            ),
            Self::Poisoned { rank, reason } => write!(
                f,
                "the job was given up because rank {rank} {}; this rank stops too",
                match reason {
                    PoisonReason::TimedOut => "timed out at a barrier",
                    PoisonReason::Died => "died",
                    PoisonReason::Aborted => "aborted",
                    PoisonReason::Unresponsive => "stopped responding (hung or stopped)",
                    PoisonReason::NeverJoined => "never joined (not started, or gone first)",
                }
            ),
        }
    }
}

impl core::error::Error for BarrierError {}

impl Default for BarrierWords {
    fn default() -> Self {
        Self::new()
    }
}

impl BarrierWords {
    /// A fresh barrier.
    pub fn new() -> Self {
        BarrierWords {
            arrived: AtomicU64::new(0),
            generation: AtomicU64::new(0),
            poison: AtomicU64::new(0),
        }
    }

    /// Waits until all `ranks` ranks reached this round. Between polls it calls `wait(round)`,
    /// which may spin, yield or block on the generation word, and returns `false` once the
    /// rank's timeout passed: then the rank poisons the barrier and returns
    /// [`BarrierError::TimedOut`]. A poisoned barrier fails at once.
    pub fn wait(
        &self,
        rank: u32,
        ranks: u32,
        mut wait: impl FnMut(u64) -> bool,
    ) -> Result<(), BarrierError> {
        self.check_poison()?;
        let n = ranks.max(1) as u64;
        let ticket = self.arrived.fetch_add(1, Ordering::AcqRel);
        let round = ticket / n;
        if ticket % n == n - 1 {
            // The last of the round: release it. Acquire above saw every earlier arrival.
            self.generation.store(round + 1, Ordering::Release);
            return Ok(());
        }
        loop {
            if self.generation.load(Ordering::Acquire) > round {
                return Ok(());
            }
            self.check_poison()?;
            if !wait(round) {
                // Released at the last moment? Then the round completed after all.
                if self.generation.load(Ordering::Acquire) > round {
                    return Ok(());
                }
                self.poison(rank, PoisonReason::TimedOut);
                let arrived = self.arrived.load(Ordering::Acquire);
                return Err(BarrierError::TimedOut {
                    round,
                    arrived: arrived.saturating_sub(round * n).min(n) as u32,
                    ranks,
                });
            }
        }
    }

    /// Gives the barrier up on behalf of `rank`: every waiting and later caller fails with
    /// [`BarrierError::Poisoned`] naming the first rank that did.
    pub fn poison(&self, rank: u32, reason: PoisonReason) {
        let word = (rank as u64 + 1) | reason.code() << 32;
        let _ = self
            .poison
            .compare_exchange(0, word, Ordering::AcqRel, Ordering::Acquire);
    }

    /// The rank that gave the barrier up, and why, if one did.
    pub fn poisoned(&self) -> Option<(u32, PoisonReason)> {
        match self.check_poison() {
            Err(BarrierError::Poisoned { rank, reason }) => Some((rank, reason)),
            _ => None,
        }
    }

    /// The generation word, for a waiter that blocks until it changes.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    fn check_poison(&self) -> Result<(), BarrierError> {
        match self.poison.load(Ordering::Acquire) {
            0 => Ok(()),
            w => Err(BarrierError::Poisoned {
                rank: (w as u32).wrapping_sub(1),
                reason: PoisonReason::from_code(w >> 32),
            }),
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::AtomicU64 as StdU64;
    use std::time::{Duration, Instant};
    use std::vec::Vec;

    /// Spin a little, then yield, until `deadline`.
    fn until(deadline: Instant) -> impl FnMut(u64) -> bool {
        let mut spins = 0u32;
        move |_| {
            spins += 1;
            if spins < 64 {
                core::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
            Instant::now() < deadline
        }
    }

    #[test]
    fn many_rounds_release_nobody_early_for_2_to_8_ranks() {
        let rounds = if cfg!(miri) { 5 } else { 400 };
        for ranks in 2..=8u32 {
            let b = Arc::new(BarrierWords::new());
            // Each rank's round counter: after a barrier, every rank has reached this round.
            let reached: Arc<Vec<StdU64>> = Arc::new((0..ranks).map(|_| StdU64::new(0)).collect());
            let threads: Vec<_> = (0..ranks)
                .map(|r| {
                    let (b, reached) = (b.clone(), reached.clone());
                    std::thread::spawn(move || {
                        let deadline = Instant::now() + Duration::from_secs(30);
                        for round in 1..=rounds {
                            reached[r as usize].store(round, std::sync::atomic::Ordering::SeqCst);
                            b.wait(r, ranks, until(deadline)).unwrap();
                            for other in reached.iter() {
                                let o = other.load(std::sync::atomic::Ordering::SeqCst);
                                assert!(o >= round, "released early: a peer is at {o} < {round}");
                            }
                        }
                    })
                })
                .collect();
            for t in threads {
                t.join().unwrap();
            }
            assert_eq!(b.generation(), rounds);
        }
    }

    #[test]
    fn a_missing_rank_times_out_and_poisons_the_others() {
        let b = Arc::new(BarrierWords::new());
        // Ranks 0 and 1 of 3 arrive; rank 2 never does.
        let t = {
            let b = b.clone();
            std::thread::spawn(move || {
                b.wait(1, 3, until(Instant::now() + Duration::from_secs(30)))
            })
        };
        // Rank 1 first (a slow host, qemu say, may start its thread late), within a bound.
        let start = Instant::now();
        while b.arrived.load(Ordering::SeqCst) < 1 {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "rank 1 never arrived"
            );
            std::thread::yield_now();
        }
        let e = b
            .wait(0, 3, until(Instant::now() + Duration::from_millis(50)))
            .unwrap_err();
        assert_eq!(
            e,
            BarrierError::TimedOut {
                round: 0,
                arrived: 2,
                ranks: 3
            }
        );
        assert_eq!(
            t.join().unwrap(),
            Err(BarrierError::Poisoned {
                rank: 0,
                reason: PoisonReason::TimedOut
            }),
            "the other waiter fails fast, naming rank 0"
        );
        // Later callers fail at once.
        assert!(matches!(
            b.wait(2, 3, |_| true),
            Err(BarrierError::Poisoned { rank: 0, .. })
        ));
        assert!(std::format!("{e}").contains("2 of 3 ranks"));
    }

    #[test]
    fn every_reason_survives_the_poison_word() {
        for reason in [
            PoisonReason::TimedOut,
            PoisonReason::Died,
            PoisonReason::Aborted,
            PoisonReason::Unresponsive,
            PoisonReason::NeverJoined,
        ] {
            let b = BarrierWords::new();
            b.poison(63, reason);
            assert_eq!(b.poisoned(), Some((63, reason)));
        }
    }

    #[test]
    fn the_first_poison_wins() {
        let b = BarrierWords::new();
        b.poison(5, PoisonReason::Died);
        b.poison(1, PoisonReason::Aborted);
        assert_eq!(
            b.wait(0, 2, |_| true),
            Err(BarrierError::Poisoned {
                rank: 5,
                reason: PoisonReason::Died
            })
        );
    }
}
