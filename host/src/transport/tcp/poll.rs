//! Waiting for a socket to become readable or writable, bounded: poll(2) on one descriptor.
#![allow(unsafe_code)]

use std::os::fd::AsRawFd;
use std::time::Duration;

/// Blocks for at most `max` until `fd` is readable, or writable when `write` is set (or has
/// an error or hang-up pending). Interruptions and errors just end the wait early: callers
/// make progress and look again.
pub(super) fn wait_fd(fd: &impl AsRawFd, write: bool, max: Duration) {
    let mut pfd = libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLIN | if write { libc::POLLOUT } else { 0 },
        revents: 0,
    };
    let ts = libc::timespec {
        tv_sec: max.as_secs().min(i32::MAX as u64) as libc::time_t,
        tv_nsec: max.subsec_nanos() as libc::c_long,
    };
    // SAFETY: `pfd` is one valid, initialised pollfd and `ts` a valid timespec, both live
    // across the call; the count passed is 1 and the signal mask pointer is null (keep the
    // current mask). The descriptor is borrowed from a live socket.
    unsafe {
        libc::ppoll(&mut pfd, 1, &ts, std::ptr::null());
    }
}
