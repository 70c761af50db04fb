//! An alternate signal stack for a thread that runs user code, so that the crash handler can
//! run even when the crash is the thread's stack overflowing; and the thread's stack bounds,
//! so the handler can tell an overflow from another bad access.

use crate::crash;

/// Bytes of the alternate stack (the handler formats one line on it).
const SIZE: usize = 64 << 10;

/// This thread's alternate signal stack while it lives, if this value made it (a thread that
/// had one already, as Rust's own threads may, keeps its own).
pub(crate) struct AltStack {
    /// The mapping made for it, if any: `(address, bytes)`.
    mine: Option<(*mut libc::c_void, usize)>,
}

impl AltStack {
    /// Makes sure this thread has an alternate signal stack, and records its stack's lowest
    /// address for the crash handler. Never fails: a thread left without one still has its
    /// crashes named, except a stack overflow.
    pub(crate) fn ensure() -> Self {
        record_stack_low();
        // SAFETY: querying this thread's alternate stack into a zeroed `stack_t`.
        let mut now: libc::stack_t = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        if unsafe { libc::sigaltstack(std::ptr::null(), &mut now) } != 0
            || now.ss_flags & libc::SS_DISABLE == 0
        {
            return AltStack { mine: None };
        }
        let size = SIZE.max(libc::SIGSTKSZ);
        // SAFETY: a fresh private anonymous mapping aliases nothing.
        let at = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                size,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if at == libc::MAP_FAILED {
            return AltStack { mine: None };
        }
        let stack = libc::stack_t {
            ss_sp: at,
            ss_flags: 0,
            ss_size: size,
        };
        // SAFETY: `stack` describes the mapping just made, which lives until `drop` removes
        // it from the thread first.
        if unsafe { libc::sigaltstack(&stack, std::ptr::null_mut()) } != 0 {
            // SAFETY: the mapping made above, used by nothing.
            unsafe { libc::munmap(at, size) };
            return AltStack { mine: None };
        }
        AltStack {
            mine: Some((at, size)),
        }
    }
}

impl Drop for AltStack {
    fn drop(&mut self) {
        let Some((at, size)) = self.mine else {
            return;
        };
        let off = libc::stack_t {
            ss_sp: std::ptr::null_mut(),
            ss_flags: libc::SS_DISABLE,
            ss_size: 0,
        };
        // SAFETY: this thread stops using the alternate stack (not running on it: a handler
        // that runs there never returns into this code), then its mapping goes.
        unsafe {
            libc::sigaltstack(&off, std::ptr::null_mut());
            libc::munmap(at, size);
        }
    }
}

/// Records the lowest address of this thread's stack (from its pthread attributes), for the
/// crash handler's overflow test.
fn record_stack_low() {
    // SAFETY: the attributes of this thread, read into a zeroed value and destroyed after.
    unsafe {
        let mut attr: libc::pthread_attr_t = std::mem::zeroed();
        if libc::pthread_getattr_np(libc::pthread_self(), &mut attr) != 0 {
            return;
        }
        let mut addr: *mut libc::c_void = std::ptr::null_mut();
        let mut size: libc::size_t = 0;
        if libc::pthread_attr_getstack(&attr, &mut addr, &mut size) == 0 {
            crash::set_stack_low(addr as usize);
        }
        libc::pthread_attr_destroy(&mut attr);
    }
}
