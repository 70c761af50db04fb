//! The stale sweep: a job whose every process was killed at once (its launcher and its ranks,
//! a whole process group SIGKILLed) before its ranks removed its object's name leaves the
//! object behind, with nobody left to remove it. The next job on the machine finds it
//! (`pto-launch` before it spawns ranks, rank 0 under another launcher before it makes its
//! object), sees from its header that the processes that made it are gone, removes it and
//! says so.
//!
//! An object is stale only when all of this holds: it is a regular file `/dev/shm/pto-*`
//! owned by this user; its header is a complete one of ours (magic and creator recorded);
//! it was made in this pid namespace; its creator is gone (no such process, a zombie, or
//! another process under its id: the start time differs); and so is its launcher, if it had
//! one. Anything else (another user's, a file of another program or version, one made in
//! another container, one whose maker lives) is left alone.
#![forbid(unsafe_code)]

use std::fmt;
use std::path::{Path, PathBuf};

use super::header::{HEADER, Provenance};
use super::identity::pid_namespace;
use super::raw_shm::{SHM_DIR, read_only, unlink_if_same};

/// What the objects of this crate are called in `/dev/shm` (see [`super::object_name`]).
const PREFIX: &str = "pto-";

/// An object the sweep removed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StaleObject {
    /// Its file (`/dev/shm/pto-<run id>`).
    pub path: PathBuf,
    /// The process that made it (the job's rank 0), gone.
    pub creator: u32,
    /// The launcher that watched its job, gone, if it had one.
    pub launcher: Option<u32>,
}

impl fmt::Display for StaleObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "removed the stale shared-memory object {}: the job that made it is gone (its \
             rank 0, process {}",
            self.path.display(),
            self.creator
        )?;
        if let Some(l) = self.launcher {
            write!(f, ", and its launcher, process {l}")?;
        }
        write!(f, ", ended without removing it)")
    }
}

/// Removes every stale object of this crate in `/dev/shm` (see the module's text for what
/// is stale), saying so on standard error, one line per object; returns them. An object
/// that cannot be read or removed is left (and said nothing of): the sweep never fails a job.
pub fn sweep_stale() -> Vec<StaleObject> {
    let swept = sweep_in(Path::new(SHM_DIR));
    for s in &swept {
        // One write per line: ranks may share this standard error.
        use std::io::Write;
        let _ = std::io::stderr().write_all(format!("{s}\n").as_bytes());
    }
    swept
}

/// The sweep of the directory `dir`.
fn sweep_in(dir: &Path) -> Vec<StaleObject> {
    let (Some(ns), Ok(entries)) = (pid_namespace(), std::fs::read_dir(dir)) else {
        return Vec::new();
    };
    let me = rustix::process::geteuid().as_raw();
    entries
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.starts_with(PREFIX))
        })
        .filter_map(|e| judge(&e.path(), me, ns))
        .collect()
}

/// Removes the object at `path` if it is stale for user `me` in pid namespace `ns`.
fn judge(path: &Path, me: u32, ns: u64) -> Option<StaleObject> {
    let (map, stat) = read_only(path, HEADER as usize).ok()??;
    if stat.uid != me {
        return None;
    }
    let p = Provenance::read(map.words())?;
    let gone = p.pid_ns == ns && p.creator.is_gone() && p.launcher.is_none_or(|l| l.is_gone());
    if !gone {
        return None;
    }
    drop(map);
    unlink_if_same(path, &stat).ok()?.then(|| StaleObject {
        path: path.to_path_buf(),
        creator: p.creator.pid,
        launcher: p.launcher.map(|l| l.pid),
    })
}

#[cfg(test)]
mod tests {
    use std::ffi::CString;
    use std::sync::atomic::Ordering;

    use super::*;
    use crate::comm::header::{MAGIC, W_MAGIC};
    use crate::comm::identity::ProcessIdentity;
    use crate::comm::raw_shm::{Unnamed, shm_path};

    /// Makes the object `/pto-sweep-<tag>-<pid>` whose header records `p`; returns its file.
    fn object(tag: &str, p: &Provenance) -> PathBuf {
        let name = CString::new(format!("/pto-sweep-{tag}-{}", std::process::id())).unwrap();
        let path = shm_path(&name);
        let _ = std::fs::remove_file(&path);
        let o = Unnamed::create(2 * HEADER as usize, HEADER as usize).unwrap();
        p.write(o.header().words());
        o.header().words()[W_MAGIC].store(MAGIC, Ordering::Release);
        assert!(o.link(&name).unwrap());
        path
    }

    /// A process that has ended and been reaped.
    fn gone() -> ProcessIdentity {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        // Not reaped yet: a zombie still has its stat.
        let it = ProcessIdentity::of(child.id()).expect("the child's stat");
        child.wait().unwrap();
        it
    }

    #[test]
    fn an_object_whose_makers_are_gone_is_removed_and_the_others_kept() {
        let ns = pid_namespace().expect("this process's pid namespace");
        let me = ProcessIdentity::this().unwrap();
        let made = |creator, launcher| Provenance {
            creator,
            launcher,
            pid_ns: ns,
        };
        let dead = object("dead", &made(gone(), Some(gone())));
        let dead_alone = object("deadalone", &made(gone(), None));
        let alive = object("alive", &made(me, None));
        let watched = object("watched", &made(gone(), Some(me)));
        let elsewhere = object(
            "elsewhere",
            &Provenance {
                pid_ns: ns + 1,
                ..made(gone(), None)
            },
        );
        let foreign = PathBuf::from(format!(
            "{SHM_DIR}/pto-sweep-foreign-{}",
            std::process::id()
        ));
        std::fs::write(&foreign, vec![7u8; 2 * HEADER as usize]).unwrap();

        let swept = sweep_stale();
        for removed in [&dead, &dead_alone] {
            assert!(
                !removed.exists(),
                "{} is stale and removed",
                removed.display()
            );
        }
        // Another sweep (a concurrent test's launcher) may have removed them first; ours
        // names what it removed.
        if let Some(s) = swept.iter().find(|s| s.path == dead) {
            let line = s.to_string();
            assert!(line.contains(&dead.display().to_string()), "{line}");
            assert!(line.contains("its launcher, process"), "{line}");
        }
        for (kept, why) in [
            (&alive, "its creator lives"),
            (&watched, "its launcher lives"),
            (&elsewhere, "its ids are another pid namespace's"),
            (&foreign, "it is not one of ours"),
        ] {
            assert!(kept.exists(), "{} is kept: {why}", kept.display());
            assert!(swept.iter().all(|s| &s.path != kept), "{why}");
            std::fs::remove_file(kept).unwrap();
        }
    }
}
