//! What a rank says when a terminating signal ends it: which peers had died, or never joined,
//! before. Under mpirun the signal is usually the launcher's teardown after a rank died, and
//! it can come before the survivors noticed the death on their own: this names the dead rank
//! all the same, in the survivor's last line.
#![forbid(unsafe_code)]

use std::sync::atomic::{AtomicU64, Ordering};

use pto_runtime_core::{MAX_RANKS, PoisonReason};

use super::header::{W_HEARTBEAT, W_PID, W_RANKS, W_SIGNALED};
use super::liveness::LEFT;
use crate::signals;

/// The peers of rank `me` (in the job header `words`) to blame for the job's end: those whose
/// process is gone although they never left (and no terminating signal was ending them: they
/// were stopped with the job); else, if none, those that never joined.
pub(crate) fn culprits(words: &[AtomicU64], me: u32) -> Vec<(u32, PoisonReason)> {
    let ranks = words[W_RANKS].load(Ordering::Relaxed).min(MAX_RANKS as u64) as usize;
    let peers = (0..ranks).filter(|&r| r != me as usize);
    let beat = |r: usize| words[W_HEARTBEAT + r].load(Ordering::Acquire);
    let died: Vec<_> = peers
        .clone()
        .filter(|&r| !matches!(beat(r), 0 | LEFT))
        .filter(|&r| words[W_SIGNALED + r].load(Ordering::Acquire) == 0)
        .filter(|&r| {
            let pid = words[W_PID + r].load(Ordering::Relaxed);
            u32::try_from(pid).is_ok_and(signals::is_dead)
        })
        .map(|r| (r as u32, PoisonReason::Died))
        .collect();
    if !died.is_empty() {
        return died;
    }
    peers
        .filter(|&r| beat(r) == 0)
        .map(|r| (r as u32, PoisonReason::NeverJoined))
        .collect()
}

/// The line rank `me` prints when signal `sig` ends it, if it has someone to name.
pub(crate) fn line(me: u32, sig: i32, culprits: &[(u32, PoisonReason)]) -> Option<String> {
    if culprits.is_empty() {
        return None;
    }
    let name = match sig {
        libc::SIGINT => " (SIGINT)",
        libc::SIGTERM => " (SIGTERM)",
        libc::SIGHUP => " (SIGHUP)",
        _ => "",
    };
    let said: Vec<String> = culprits
        .iter()
        .map(|&(r, why)| match why {
            PoisonReason::NeverJoined => {
                format!("rank {r} never joined the job (did it die before joining?)")
            }
            _ => format!("rank {r} died"),
        })
        .collect();
    Some(format!(
        "rank {me}: stopped by signal {sig}{name}; before it, {}\n",
        said.join(", ")
    ))
}

/// Records in the job header `words` that signal `sig` is ending rank `me`, then prints its
/// last line on standard error (one write: ranks share it), if it has someone to name.
pub(crate) fn say(words: &[AtomicU64], me: u32, sig: i32) {
    words[W_SIGNALED + me as usize].store(sig as u64, Ordering::Release);
    if let Some(l) = line(me, sig, &culprits(words, me)) {
        use std::io::Write;
        let _ = std::io::stderr().write_all(l.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(ranks: u64) -> Vec<AtomicU64> {
        let words: Vec<AtomicU64> = (0..512).map(|_| AtomicU64::new(0)).collect();
        words[W_RANKS].store(ranks, Ordering::Relaxed);
        words
    }

    #[test]
    fn a_dead_peer_is_named_before_one_that_never_joined() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id() as u64;
        child.wait().unwrap();
        let words = header(4);
        let me = std::process::id() as u64;
        for (r, beat, pid) in [(0, 9, me), (1, 5, dead), (2, LEFT, dead), (3, 0, 0)] {
            words[W_HEARTBEAT + r].store(beat, Ordering::Relaxed);
            words[W_PID + r].store(pid, Ordering::Relaxed);
        }
        let found = culprits(&words, 0);
        assert_eq!(found, [(1, PoisonReason::Died)], "rank 2 left on purpose");
        words[W_SIGNALED + 1].store(15, Ordering::Relaxed);
        assert_eq!(
            culprits(&words, 0),
            [(3, PoisonReason::NeverJoined)],
            "a signal ended rank 1 too: it was stopped with the job"
        );
        words[W_SIGNALED + 1].store(0, Ordering::Relaxed);
        assert_eq!(
            line(0, libc::SIGTERM, &found).unwrap(),
            "rank 0: stopped by signal 15 (SIGTERM); before it, rank 1 died\n"
        );
        // Rank 1 alive after all: the one that never came is named instead.
        words[W_PID + 1].store(me, Ordering::Relaxed);
        let found = culprits(&words, 0);
        assert_eq!(found, [(3, PoisonReason::NeverJoined)]);
        assert!(
            line(0, libc::SIGINT, &found)
                .unwrap()
                .contains("rank 3 never joined the job")
        );
        // Everyone alive and joined: nothing to say.
        words[W_HEARTBEAT + 3].store(1, Ordering::Relaxed);
        words[W_PID + 3].store(me, Ordering::Relaxed);
        assert_eq!(line(0, libc::SIGTERM, &culprits(&words, 0)), None);
    }
}
