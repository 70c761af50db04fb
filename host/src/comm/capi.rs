//! The communicator's C ABI: the six calls of the C++ runtime's comm API, over
//! [`ShmComm`]. Errors are negative integers (see [`code`]), never an unwinding panic: every
//! entry point catches panics and reports [`code::PANIC`].
#![allow(unsafe_code)]

use std::ffi::{CStr, c_char, c_int};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Duration;

use pto_runtime_core::{BarrierError, CommContext, PoisonReason};

use super::{CommError, ShmComm, ShmConfig};

/// Return codes of the C ABI.
pub mod code {
    /// Success.
    pub const OK: i32 = 0;
    /// A null pointer, or a handle in the wrong state (windows allocated twice, a barrier
    /// before windows exist).
    pub const BAD_ARGUMENT: i32 = -1;
    /// A rank count of 0 or above 64, or a rank not below it.
    pub const BAD_RANK: i32 = -2;
    /// A window size that cannot be mapped.
    pub const BAD_WINDOW: i32 = -3;
    /// A wait ran out of time (a peer never came).
    pub const TIMEOUT: i32 = -4;
    /// A peer gave up (timed out, died or aborted).
    pub const PEER_FAILED: i32 = -5;
    /// The run id is malformed or taken by another job.
    pub const BAD_RUN_ID: i32 = -6;
    /// The operating system refused a shared-memory call.
    pub const OS: i32 = -7;
    /// A bug: a panic was caught at the boundary.
    pub const PANIC: i32 = -99;
}

/// How long the C ABI's waits may take.
const TIMEOUT: Duration = Duration::from_secs(60);

/// An opaque communicator handle for C.
pub struct CommHandle {
    rank: u32,
    ranks: u32,
    run_id: String,
    comm: Option<ShmComm>,
    /// The device context, at a stable address while the handle lives.
    ctx: Option<Box<CommContext>>,
}

fn code_of(e: &CommError) -> i32 {
    match e {
        CommError::RankCount { .. } | CommError::NoSuchRank { .. } => code::BAD_RANK,
        CommError::WindowSize { .. } | CommError::Mismatch { .. } | CommError::NoSpace { .. } => {
            code::BAD_WINDOW
        }
        CommError::BadRunId(_) | CommError::NameTaken { .. } => code::BAD_RUN_ID,
        CommError::DuplicateRank { .. } => code::BAD_RANK,
        CommError::NotCreated { .. }
        | CommError::Unwatched { .. }
        | CommError::Barrier(BarrierError::TimedOut { .. })
        // The job waited out its timeout for a rank that never came.
        | CommError::Barrier(BarrierError::Poisoned {
            reason: PoisonReason::NeverJoined,
            ..
        }) => code::TIMEOUT,
        CommError::Barrier(BarrierError::Poisoned { .. }) | CommError::Vanished { .. } => {
            code::PEER_FAILED
        }
        CommError::Os { .. } => code::OS,
    }
}

/// Runs `f`, turning a panic into [`code::PANIC`].
fn guarded(f: impl FnOnce() -> i32) -> i32 {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(code::PANIC)
}

/// The handle behind `h`, if it is not null.
///
/// # Safety
/// `h` is null or a handle from [`comm_init`] not yet passed to [`comm_destroy`], used by
/// one thread at a time.
unsafe fn handle<'a>(h: *mut CommHandle) -> Option<&'a mut CommHandle> {
    // SAFETY: the caller's contract.
    unsafe { h.as_mut() }
}

/// Creates a handle for `rank` of `nranks`, in the job named by `rendezvous` (the run id of
/// the shared-memory backend, a NUL-terminated string). `device_id` is accepted for the
/// device backends and ignored here. Returns null on bad input.
///
/// # Safety
/// `rendezvous` is null or points to a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn comm_init(
    rank: c_int,
    nranks: c_int,
    device_id: c_int,
    rendezvous: *const c_char,
) -> *mut CommHandle {
    let _ = device_id;
    catch_unwind(AssertUnwindSafe(|| {
        if rendezvous.is_null() || rank < 0 || nranks <= 0 || rank >= nranks || nranks > 64 {
            return std::ptr::null_mut();
        }
        // SAFETY: non-null, and NUL-terminated by the caller's contract.
        let Ok(run_id) = unsafe { CStr::from_ptr(rendezvous) }.to_str() else {
            return std::ptr::null_mut();
        };
        Box::into_raw(Box::new(CommHandle {
            rank: rank as u32,
            ranks: nranks as u32,
            run_id: run_id.to_string(),
            comm: None,
            ctx: None,
        }))
    }))
    .unwrap_or(std::ptr::null_mut())
}

/// Maps every rank's window of `win_size` bytes (collective: every rank calls it) and
/// writes the address of this rank's device context (a `CommContext`, valid until
/// [`comm_destroy`]) to `ctx_out`.
///
/// # Safety
/// `h` as in [`comm_destroy`]; `ctx_out` is null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn comm_alloc_windows(
    h: *mut CommHandle,
    win_size: usize,
    ctx_out: *mut u64,
) -> c_int {
    guarded(|| {
        // SAFETY: the caller's contract.
        let Some(h) = (unsafe { handle(h) }) else {
            return code::BAD_ARGUMENT;
        };
        if ctx_out.is_null() || h.comm.is_some() {
            return code::BAD_ARGUMENT;
        }
        let comm = match ShmComm::init(&ShmConfig {
            rank: h.rank,
            ranks: h.ranks,
            run_id: h.run_id.clone(),
            window_bytes: win_size as u64,
            timeout: TIMEOUT,
        }) {
            Ok(c) => c,
            Err(e) => return code_of(&e),
        };
        let ctx = match comm.context() {
            Ok(c) => Box::new(c),
            Err(_) => return code::BAD_RANK,
        };
        // SAFETY: non-null and writable by the caller's contract.
        unsafe { ctx_out.write(&*ctx as *const CommContext as u64) };
        h.ctx = Some(ctx);
        h.comm = Some(comm);
        code::OK
    })
}

/// Writes this process's address of this rank's window to `base_out`.
///
/// # Safety
/// As [`comm_alloc_windows`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn comm_get_local_window_base(
    h: *mut CommHandle,
    base_out: *mut u64,
) -> c_int {
    guarded(|| {
        // SAFETY: the caller's contract.
        let Some(comm) = (unsafe { handle(h) }).and_then(|h| h.comm.as_ref()) else {
            return code::BAD_ARGUMENT;
        };
        if base_out.is_null() {
            return code::BAD_ARGUMENT;
        }
        // SAFETY: non-null and writable by the caller's contract.
        unsafe { base_out.write(comm.local_window_base()) };
        code::OK
    })
}

/// Writes the size of each window (after rounding) to `size_out`.
///
/// # Safety
/// As [`comm_alloc_windows`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn comm_get_window_size(h: *mut CommHandle, size_out: *mut usize) -> c_int {
    guarded(|| {
        // SAFETY: the caller's contract.
        let Some(comm) = (unsafe { handle(h) }).and_then(|h| h.comm.as_ref()) else {
            return code::BAD_ARGUMENT;
        };
        if size_out.is_null() {
            return code::BAD_ARGUMENT;
        }
        // SAFETY: non-null and writable by the caller's contract.
        unsafe { size_out.write(comm.window_size() as usize) };
        code::OK
    })
}

/// Waits until every rank reached the barrier (bounded; a timeout poisons it for all).
///
/// # Safety
/// As [`comm_destroy`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn comm_barrier(h: *mut CommHandle) -> c_int {
    guarded(|| {
        // SAFETY: the caller's contract.
        let Some(comm) = (unsafe { handle(h) }).and_then(|h| h.comm.as_ref()) else {
            return code::BAD_ARGUMENT;
        };
        match comm.barrier() {
            Ok(()) => code::OK,
            Err(e) => code_of(&e),
        }
    })
}

/// Leaves the communicator and frees the handle (the shared object's name was removed once
/// every rank mapped it; the memory goes with the last mapping). A null handle is accepted
/// and does nothing.
///
/// # Safety
/// `h` is null or a handle from [`comm_init`] that was not destroyed yet; it is not used
/// after this call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn comm_destroy(h: *mut CommHandle) -> c_int {
    guarded(|| {
        if h.is_null() {
            return code::OK;
        }
        // SAFETY: a live handle from `comm_init` (Box::into_raw), destroyed once.
        let mut h = unsafe { Box::from_raw(h) };
        match h.comm.as_mut().map(ShmComm::destroy) {
            Some(Err(e)) => code_of(&e),
            _ => code::OK,
        }
    })
}
