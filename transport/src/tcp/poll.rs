//! Waiting for sockets to become readable or writable, bounded: poll(2) over one descriptor
//! or a set of them.
#![allow(unsafe_code)]

use std::os::fd::{AsRawFd, RawFd};
use std::time::Duration;

/// What a socket waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Want {
    /// Bytes to read (or a caller to accept, or a hang-up).
    Read,
    /// Room to write (or a dial completing).
    Write,
}

/// Blocks for at most `max` until `fd` is readable, or writable when `write` is set (or has
/// an error or hang-up pending). Interruptions and errors just end the wait early: callers
/// make progress and look again.
pub(super) fn wait_fd(fd: &impl AsRawFd, write: bool, max: Duration) {
    let want = if write { Want::Write } else { Want::Read };
    wait_fds(&[(fd.as_raw_fd(), want)], max);
}

/// Blocks for at most `max` until one of `fds` is ready for what it wants (or has an error
/// or hang-up pending). As [`wait_fd`], errors just end the wait early.
pub(super) fn wait_fds(fds: &[(RawFd, Want)], max: Duration) {
    let mut set: Vec<libc::pollfd> = fds
        .iter()
        .map(|&(fd, want)| libc::pollfd {
            fd,
            events: match want {
                // A read interest also wakes on a hang-up (POLLHUP is always reported).
                Want::Read => libc::POLLIN,
                Want::Write => libc::POLLOUT,
            },
            revents: 0,
        })
        .collect();
    let ts = libc::timespec {
        tv_sec: max.as_secs().min(i32::MAX as u64) as libc::time_t,
        tv_nsec: max.subsec_nanos() as libc::c_long,
    };
    // SAFETY: `set` holds `set.len()` valid, initialised pollfds and `ts` is a valid timespec,
    // both live across the call; the signal mask pointer is null (keep the current mask).
    // The descriptors are borrowed from sockets the caller keeps alive for the call; an
    // empty set just waits for the timeout.
    unsafe {
        libc::ppoll(
            set.as_mut_ptr(),
            set.len() as libc::nfds_t,
            &ts,
            std::ptr::null(),
        );
    }
}
