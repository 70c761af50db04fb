//! Telling a process apart from a later one that reuses its id: a process is its id and its
//! start time (field 22 of `/proc/<pid>/stat`, in clock ticks since boot), read within one
//! pid namespace (the inode of `/proc/self/ns/pid` names it). A job's object records who made
//! it this way, so that whoever finds it later can tell whether they are gone.
#![forbid(unsafe_code)]

use std::os::unix::fs::MetadataExt;

/// A process as the kernel knows it: its id and when it started.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct ProcessIdentity {
    /// Its process id (in this pid namespace).
    pub(crate) pid: u32,
    /// Its start time, clock ticks after boot (never 0 for a process read from `/proc`).
    pub(crate) start: u64,
}

impl ProcessIdentity {
    /// Process `pid`, if it runs (or is a zombie) and `/proc` can be read.
    pub(crate) fn of(pid: u32) -> Option<Self> {
        if pid == 0 {
            return None;
        }
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        Some(ProcessIdentity {
            pid,
            start: start_time(&stat)?,
        })
    }

    /// This process.
    pub(crate) fn this() -> Option<Self> {
        Self::of(std::process::id())
    }

    /// This process's parent (a launcher that spawned it), if it has one other than init.
    pub(crate) fn parent() -> Option<Self> {
        let ppid = rustix::process::getppid()?.as_raw_nonzero().get() as u32;
        (ppid > 1).then(|| Self::of(ppid)).flatten()
    }

    /// Whether this process is gone: no process has its id any more, a zombie has it (it
    /// ended and waits to be reaped), or another process does (a later start time). A
    /// process whose `/proc` entry cannot be read for another reason counts as alive.
    pub(crate) fn is_gone(&self) -> bool {
        match std::fs::read_to_string(format!("/proc/{}/stat", self.pid)) {
            Err(e) => e.kind() == std::io::ErrorKind::NotFound,
            Ok(stat) => {
                start_time(&stat) != Some(self.start) || matches!(state(&stat), Some('Z' | 'X'))
            }
        }
    }
}

/// The pid namespace this process runs in (the inode of `/proc/self/ns/pid`): process ids
/// recorded in another one mean other processes.
pub(crate) fn pid_namespace() -> Option<u64> {
    std::fs::metadata("/proc/self/ns/pid").ok().map(|m| m.ino())
}

/// The fields of a `/proc/<pid>/stat` line after the command (which may hold spaces and
/// parentheses: the fields start after the last `)`), the first being the state (field 3).
fn fields(stat: &str) -> Option<std::str::SplitWhitespace<'_>> {
    Some(stat.rsplit_once(')')?.1.split_whitespace())
}

/// Field 22, the start time.
fn start_time(stat: &str) -> Option<u64> {
    fields(stat)?.nth(22 - 3)?.parse().ok().filter(|&t| t != 0)
}

/// Field 3, the state letter.
fn state(stat: &str) -> Option<char> {
    fields(stat)?.next()?.chars().next()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_start_time_is_field_22_even_after_a_command_with_parentheses() {
        let stat = "77 (a) b (c) S 1 77 77 0 -1 4194560 10 0 0 0 1 2 0 0 20 0 1 0 123456 \
                    8413184 100 18446744073709551615";
        assert_eq!(start_time(stat), Some(123_456));
        assert_eq!(state(stat), Some('S'));
        assert_eq!(
            start_time("77 (cut"),
            None,
            "a line cut short is no identity"
        );
        assert_eq!(start_time("77 (x) S 1 2"), None);
    }

    #[test]
    fn this_process_lives_and_a_reaped_child_is_gone() {
        let me = ProcessIdentity::this().expect("this process reads its own stat");
        assert!(!me.is_gone());
        let later = ProcessIdentity {
            start: me.start + 1,
            ..me
        };
        assert!(later.is_gone(), "another start time is another process");
        let mut child = std::process::Command::new("true")
            .spawn()
            .expect("true runs");
        let it = ProcessIdentity::of(child.id());
        child.wait().expect("reaped");
        if let Some(it) = it {
            assert!(it.is_gone(), "a reaped child is gone");
        }
        assert!(pid_namespace().is_some());
    }
}
