//! Telling a dead or stopped rank from a slow one: a thread of each rank bumps a heartbeat
//! word in the job's header every 5 ms while the process runs, and whoever watches (every waiting peer, the launcher) remembers when
//! each heartbeat last moved. A heartbeat that has not moved for [`DEAD_CHECK_AFTER`] makes the
//! watcher look at the rank's process: gone (or a zombie) is a rank that died; one that stays
//! still for [`HUNG_AFTER`] while its process lives is unresponsive (stopped or hung).
//!
//! A stall counts only while the watcher was there to see it: a watcher kept off the CPU
//! itself (a loaded machine, a job stopped with Ctrl-Z and resumed) counts at most
//! [`MAX_UNSEEN`] of its own absence, so that on its return it does not name a live peer whose
//! heartbeat thread has simply not run yet either.
#![forbid(unsafe_code)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use pto_runtime_core::PoisonReason;

use super::header::{W_HEARTBEAT, W_PID};
use crate::signals;

/// A heartbeat word's value once its rank left the communicator on purpose.
pub const LEFT: u64 = u64::MAX;
/// How long a heartbeat may stand still before the rank is named unresponsive. Its thread
/// bumps it every 5 ms, so a second is two hundred missed beats (a busy machine delays a
/// sleeping thread by milliseconds, not seconds); with the 10 ms between checks, a stopped
/// rank is named within [`NAMED_WITHIN`].
pub const HUNG_AFTER: Duration = Duration::from_secs(1);
/// The bound this crate states for naming a stopped or hung rank, from its last heartbeat, by
/// a watcher that looks at least every [`MAX_UNSEEN`].
pub const NAMED_WITHIN: Duration = Duration::from_secs(2);
/// How long a heartbeat may stand still before the watcher checks whether the process lives.
pub const DEAD_CHECK_AFTER: Duration = Duration::from_millis(20);
/// The most of a gap between two of a watcher's looks that counts as a stall: the rest of a
/// longer gap the watcher itself was not running, and saw nothing of.
pub const MAX_UNSEEN: Duration = Duration::from_millis(250);

/// What a watcher remembers of each rank's heartbeat.
#[derive(Debug)]
pub(crate) struct Liveness {
    /// Per rank: the value last seen and when it was first seen (moved on past the part of
    /// a long gap between looks that does not count, [`MAX_UNSEEN`]).
    seen: Vec<(u64, Instant)>,
    /// When the heartbeats were last looked at (or the watcher started).
    last: Instant,
}

impl Liveness {
    pub(crate) fn new(ranks: u32) -> Self {
        let now = Instant::now();
        Liveness {
            seen: vec![(0, now); ranks as usize],
            last: now,
        }
    }

    /// As [`Liveness::check`], at most once per `every` (a caller polling faster pays
    /// nothing in between).
    pub(crate) fn check_every(
        &mut self,
        every: Duration,
        words: &[AtomicU64],
        me: Option<u32>,
    ) -> Option<(u32, PoisonReason)> {
        if self.last.elapsed() < every {
            return None;
        }
        self.check(words, me)
    }

    /// Looks at every rank's heartbeat in `words` (a job header) but `me`'s, and returns the
    /// first rank that died or stopped responding. Ranks that have not joined yet (heartbeat
    /// 0) or have left are not judged.
    pub(crate) fn check(
        &mut self,
        words: &[AtomicU64],
        me: Option<u32>,
    ) -> Option<(u32, PoisonReason)> {
        let now = Instant::now();
        // Every `seen` time is at or before `last`, so it stays at or before `now`.
        if let Some(unseen) = now
            .saturating_duration_since(self.last)
            .checked_sub(MAX_UNSEEN)
        {
            for seen in &mut self.seen {
                seen.1 += unseen;
            }
        }
        self.last = now;
        for (rank, seen) in self.seen.iter_mut().enumerate() {
            if Some(rank as u32) == me {
                continue;
            }
            let beat = words[W_HEARTBEAT + rank].load(Ordering::Acquire);
            if beat != seen.0 {
                *seen = (beat, now);
                continue;
            }
            if beat == 0 || beat == LEFT {
                continue;
            }
            let still = now.saturating_duration_since(seen.1);
            if still < DEAD_CHECK_AFTER {
                continue;
            }
            let pid = words[W_PID + rank].load(Ordering::Relaxed);
            if u32::try_from(pid).is_ok_and(signals::is_dead) {
                return Some((rank as u32, PoisonReason::Died));
            }
            if still >= HUNG_AFTER {
                return Some((rank as u32, PoisonReason::Unresponsive));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(pid: u64) -> Vec<AtomicU64> {
        let words: Vec<AtomicU64> = (0..512).map(|_| AtomicU64::new(0)).collect();
        words[W_HEARTBEAT + 1].store(7, Ordering::Relaxed);
        words[W_PID + 1].store(pid, Ordering::Relaxed);
        words
    }

    #[test]
    fn a_still_heartbeat_of_a_live_process_is_unresponsive_after_the_bound() {
        let words = header(std::process::id() as u64);
        let mut live = Liveness::new(2);
        let start = Instant::now();
        let found = loop {
            if let Some(c) = live.check(&words, Some(0)) {
                break c;
            }
            assert!(start.elapsed() < NAMED_WITHIN, "named within the bound");
            std::thread::sleep(Duration::from_millis(10));
        };
        assert_eq!(found, (1, PoisonReason::Unresponsive));
        assert!(start.elapsed() >= HUNG_AFTER, "not before the bound");
    }

    #[test]
    fn a_still_heartbeat_of_a_gone_process_is_a_death_at_once() {
        let mut child = std::process::Command::new("true")
            .spawn()
            .expect("true runs");
        let pid = child.id() as u64;
        child.wait().expect("reaped");
        let words = header(pid);
        let mut live = Liveness::new(2);
        let start = Instant::now();
        let found = loop {
            if let Some(c) = live.check(&words, Some(0)) {
                break c;
            }
            assert!(start.elapsed() < HUNG_AFTER, "a death is not a stall");
            std::thread::sleep(Duration::from_millis(2));
        };
        assert_eq!(found, (1, PoisonReason::Died));
    }

    #[test]
    fn a_watcher_kept_away_does_not_take_its_own_absence_for_a_peers_stall() {
        let words = header(std::process::id() as u64);
        let mut live = Liveness::new(2);
        assert_eq!(live.check(&words, Some(0)), None, "the first look");
        // The watcher is kept away past the bound (a loaded machine, a job stopped and
        // resumed), and rank 1's heartbeat thread has not run again yet when it returns.
        std::thread::sleep(HUNG_AFTER + Duration::from_millis(200));
        let back = Instant::now();
        assert_eq!(
            live.check(&words, Some(0)),
            None,
            "a live rank is not named for a stall nobody watched"
        );
        // Watched from then on, the stall counts, and the rank is named.
        let found = loop {
            if let Some(c) = live.check(&words, Some(0)) {
                break c;
            }
            // Generous: past a loaded machine's gaps between looks (each counts at most
            // MAX_UNSEEN), never reached by a watcher that looks every 10 ms.
            assert!(back.elapsed() < 10 * NAMED_WITHIN, "named in the end");
            std::thread::sleep(Duration::from_millis(10));
        };
        assert_eq!(found, (1, PoisonReason::Unresponsive));
        assert!(
            back.elapsed() >= HUNG_AFTER - MAX_UNSEEN,
            "at most MAX_UNSEEN of the absence counted"
        );
    }

    #[test]
    fn moving_heartbeats_and_ranks_that_left_or_never_came_are_fine() {
        let words = header(std::process::id() as u64);
        words[W_HEARTBEAT + 2].store(LEFT, Ordering::Relaxed);
        let mut live = Liveness::new(4);
        let start = Instant::now();
        while start.elapsed() < HUNG_AFTER + Duration::from_millis(100) {
            words[W_HEARTBEAT + 1].fetch_add(1, Ordering::Relaxed);
            assert_eq!(live.check(&words, Some(0)), None);
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}
