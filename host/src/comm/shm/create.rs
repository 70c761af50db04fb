//! Rank 0 makes the job's object whole before it has a name: reserved, its header written
//! (the layout, rank 0's process id, who made it), and only then named. A rank 0 killed at
//! any instant leaves either no name or a complete object whose header says who made it, so
//! that the launcher (or a later sweep) can tell it is this job's and remove it.

use std::ffi::CStr;
use std::sync::atomic::Ordering;

use crate::comm::error::CommError;
use pto_runtime_core::BarrierError;

use crate::comm::header::{
    HEADER, MAGIC, Provenance, W_BARRIER, W_MAGIC, W_PID, W_RANKS, W_WINDOW,
};
use crate::comm::identity::{ProcessIdentity, pid_namespace};
use crate::comm::raw_shm::{Mapping, Unnamed, shm_free_bytes, unlink};
use crate::signals;

/// What rank 0 puts in a new object's header.
pub(super) struct Layout {
    /// Ranks of the job.
    pub(super) ranks: u32,
    /// Bytes of each window.
    pub(super) window: u64,
    /// Bytes of the whole object.
    pub(super) len: usize,
    /// Whether a launcher (this process's parent) watches the job.
    pub(super) watched: bool,
}

/// Makes the object `name` (`label` in messages) of `layout`, named only once complete, and
/// returns it mapped by its name. A taken name is an error (never a silent reuse); on a
/// terminating signal from the instant it has its name, the name is removed.
pub(super) fn create(name: &CStr, label: &str, layout: &Layout) -> Result<Mapping, CommError> {
    let len = layout.len;
    let no_space = || CommError::NoSpace {
        name: label.to_string(),
        needed: len as u64,
        free: shm_free_bytes().unwrap_or(0),
    };
    if let Some(free) = shm_free_bytes()
        && free < len as u64
    {
        return Err(no_space());
    }
    let os = |call: &'static str| {
        move |source| CommError::Os {
            call,
            name: label.to_string(),
            source,
        }
    };
    let unnamed = Unnamed::create(len, HEADER as usize).map_err(|e| match e.raw_os_error() {
        Some(libc::ENOSPC) => no_space(),
        _ => os("making the object (O_TMPFILE, fallocate)")(e),
    })?;
    let me = ProcessIdentity::this()
        .ok_or_else(|| os("reading /proc/self/stat")(std::io::Error::other("no start time")))?;
    let provenance = Provenance {
        creator: me,
        launcher: if layout.watched {
            ProcessIdentity::parent()
        } else {
            None
        },
        pid_ns: pid_namespace().unwrap_or(0),
    };
    let w = unnamed.header().words();
    w[W_RANKS].store(layout.ranks as u64, Ordering::Relaxed);
    w[W_WINDOW].store(layout.window, Ordering::Relaxed);
    w[W_PID].store(me.pid as u64, Ordering::Relaxed);
    provenance.write(w);
    w[W_MAGIC].store(MAGIC, Ordering::Release);
    // A terminating signal comes before the object has its name or once the name is
    // guarded, never between (a peer that opens it later guards it too).
    let held = signals::hold();
    let linked = unnamed
        .link(name)
        .map_err(os("naming the object (linkat)"))?;
    if linked {
        signals::guard(name);
    }
    drop(held);
    if !linked {
        return Err(CommError::NameTaken {
            name: label.to_string(),
        });
    }
    // Mapped by its name, as every other process maps it (and as `/proc/<pid>/maps` then
    // shows it); the name is this object's unless someone removed it in the meantime.
    let map = match Mapping::open(name) {
        Ok(map) => map.filter(|m| Provenance::read(m.words()) == Some(provenance)),
        Err(e) => {
            signals::unguard();
            let _ = unlink(name);
            return Err(os("shm_open")(e));
        }
    };
    map.ok_or_else(|| {
        // Removed (and perhaps made again by another job) since: not ours to remove. A name
        // gone this early was removed by the last peer leaving a job given up, and giving a
        // job up poisons it first: the object rank 0 still holds names the culprit.
        signals::unguard();
        name_gone(unnamed.header(), label)
    })
}

/// Why rank 0 found the name of the object `header` heads (`label` in messages) gone: the
/// culprit the job was given up for, if it was poisoned, else that it vanished.
fn name_gone(header: &Mapping, label: &str) -> CommError {
    match header.barrier(W_BARRIER).poisoned() {
        Some((rank, reason)) => CommError::Barrier(BarrierError::Poisoned { rank, reason }),
        None => CommError::Vanished {
            name: label.to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use pto_runtime_core::PoisonReason;

    use super::*;

    #[test]
    fn a_name_removed_from_a_poisoned_job_names_the_culprit_else_says_it_vanished() {
        let unnamed = Unnamed::create(HEADER as usize, HEADER as usize).unwrap();
        let quiet = name_gone(unnamed.header(), "/pto-x");
        assert!(matches!(quiet, CommError::Vanished { .. }), "{quiet}");
        unnamed
            .header()
            .barrier(W_BARRIER)
            .poison(1, PoisonReason::Died);
        let named = name_gone(unnamed.header(), "/pto-x");
        assert!(
            matches!(
                named,
                CommError::Barrier(BarrierError::Poisoned {
                    rank: 1,
                    reason: PoisonReason::Died
                })
            ),
            "{named}"
        );
    }
}
