//! The layout of a communicator's shared object: `[4 KiB header][window of rank 0][window of
//! rank 1]...`, the header's words, who made the object (its [`Provenance`]), and the
//! once-only removal of the object's name.
#![forbid(unsafe_code)]

use std::sync::atomic::{AtomicU64, Ordering};

use super::identity::ProcessIdentity;
use super::raw_shm::{Mapping, unlink};

/// Removes `name`, the name of `map`, unless someone already did or is doing it (the
/// header's [`W_UNLINKED`] word decides, so a name is removed once and never a later job's).
pub(crate) fn remove_once(map: &Mapping, name: &std::ffi::CStr) -> std::io::Result<()> {
    if map.words()[W_UNLINKED]
        .compare_exchange(0, 1, Ordering::AcqRel, Ordering::Acquire)
        .is_ok()
    {
        unlink(name)?;
    }
    Ok(())
}

pub(crate) const HEADER: u64 = 4096;
pub(crate) const MAGIC: u64 = 0x5054_4f5f_434f_4d4d; // "PTO_COMM"
/// Header words.
pub(crate) const W_MAGIC: usize = 0;
pub(crate) const W_RANKS: usize = 1;
pub(crate) const W_WINDOW: usize = 2;
pub(crate) const W_ATTACHED: usize = 3;
pub(crate) const W_JOINED: usize = 4;
/// Non-zero once the launcher watching the job has mapped the object.
pub(crate) const W_WATCHED: usize = 5;
/// Non-zero once someone took on removing the object's name (removal happens once).
pub(crate) const W_UNLINKED: usize = 6;
pub(crate) const W_BARRIER: usize = 8;
/// Who made the object ([`Provenance`]): the creator's process id and start time, its
/// launcher's (0 and 0 if none watches the job), and the pid namespace they are read in.
pub(crate) const W_CREATOR: usize = 16;
pub(crate) const W_CREATOR_START: usize = 17;
pub(crate) const W_LAUNCHER: usize = 18;
pub(crate) const W_LAUNCHER_START: usize = 19;
pub(crate) const W_PID_NS: usize = 20;
/// One heartbeat word per rank: 0 before it joins, then bumped while it waits, [`LEFT`] once
/// it left.
pub(crate) const W_HEARTBEAT: usize = 64;
/// One word per rank: its process id (on this host), written when it joins.
pub(crate) const W_PID: usize = 128;
/// One word per rank: the terminating signal that is ending it (0 while none is): a peer
/// that ends this way was stopped with the job, not the cause of its end.
pub(crate) const W_SIGNALED: usize = 192;

/// Who made a job's object: rank 0's process, the launcher watching the job if there is one,
/// and the pid namespace both ids belong to. Written before the object has its name, so
/// whoever finds the name finds this too.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Provenance {
    /// The process that made the object (rank 0).
    pub(crate) creator: ProcessIdentity,
    /// The launcher that watches the job (`pto-launch`), if one does.
    pub(crate) launcher: Option<ProcessIdentity>,
    /// The pid namespace of both (the inode of `/proc/self/ns/pid`; 0 if it was unknown).
    pub(crate) pid_ns: u64,
}

impl Provenance {
    /// Writes itself into a header's `words`.
    pub(crate) fn write(&self, words: &[AtomicU64]) {
        let launcher = self.launcher.map_or((0, 0), |l| (l.pid as u64, l.start));
        for (at, value) in [
            (W_CREATOR, self.creator.pid as u64),
            (W_CREATOR_START, self.creator.start),
            (W_LAUNCHER, launcher.0),
            (W_LAUNCHER_START, launcher.1),
            (W_PID_NS, self.pid_ns),
        ] {
            words[at].store(value, Ordering::Relaxed);
        }
    }

    /// Reads it from a header's `words`: `None` if the header is not a complete one of
    /// ours (no magic, or no creator recorded, as in an object of an older version).
    pub(crate) fn read(words: &[AtomicU64]) -> Option<Self> {
        let word = |at: usize| words.get(at).map(|w| w.load(Ordering::Acquire));
        if word(W_MAGIC)? != MAGIC {
            return None;
        }
        let identity = |pid: u64, start: u64| {
            let pid = u32::try_from(pid).ok().filter(|&p| p != 0)?;
            (start != 0).then_some(ProcessIdentity { pid, start })
        };
        let creator = identity(word(W_CREATOR)?, word(W_CREATOR_START)?)?;
        let launcher = identity(word(W_LAUNCHER)?, word(W_LAUNCHER_START)?);
        Some(Provenance {
            creator,
            launcher,
            pid_ns: word(W_PID_NS)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provenance_reads_back_and_an_incomplete_header_has_none() {
        let words: Vec<AtomicU64> = (0..HEADER / 8).map(|_| AtomicU64::new(0)).collect();
        let p = Provenance {
            creator: ProcessIdentity { pid: 7, start: 99 },
            launcher: Some(ProcessIdentity { pid: 5, start: 98 }),
            pid_ns: 4026531836,
        };
        p.write(&words);
        assert_eq!(Provenance::read(&words), None, "no magic yet");
        words[W_MAGIC].store(MAGIC, Ordering::Release);
        assert_eq!(Provenance::read(&words), Some(p));
        let alone = Provenance {
            launcher: None,
            ..p
        };
        alone.write(&words);
        assert_eq!(Provenance::read(&words), Some(alone), "no launcher watches");
        words[W_CREATOR_START].store(0, Ordering::Relaxed);
        assert_eq!(
            Provenance::read(&words),
            None,
            "an older header names no creator"
        );
        assert_eq!(Provenance::read(&words[..4]), None, "a short one neither");
    }
}
