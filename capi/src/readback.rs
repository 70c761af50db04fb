//! What C reads back: the task records of a run profiled at `Tasks`
//! (`pto_runtime_records`) and a sentence for every status (`pto_status_str`). The
//! counters are in `pto_runtime_report`.
#![allow(unsafe_code)]

use core::ffi::c_char;

use crate::api::runtime;
use crate::types::{PtoRecord, PtoRuntime, PtoStatus};

/// Copies up to `cap` task records of the run (in the order the tasks finished; exact once
/// every thread stopped) to `out`, their number to `n`, and how many the run holds in all
/// to `total` (if not null).
///
/// # Safety
/// `rt` is null or initialised; `out` is null (then `cap` must be 0) or valid for writes
/// of `cap` records; `n` is null or valid for a write, and so is `total`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pto_runtime_records(
    rt: *const PtoRuntime,
    out: *mut PtoRecord,
    cap: usize,
    n: *mut usize,
    total: *mut usize,
) -> PtoStatus {
    if rt.is_null() {
        return PtoStatus::PtoErrNull;
    }
    // SAFETY: the caller's contract.
    let Some(r) = (unsafe { runtime(rt) }) else {
        return PtoStatus::PtoErrClosed;
    };
    // SAFETY: the caller's contract on `out`, `n` and `total`.
    unsafe { pto_runtime_core::ffi::records_c(r, out, cap, n, total) }
}

/// A sentence saying what status `code` means: a static, NUL-terminated string (never
/// null; an unknown code says so).
#[unsafe(no_mangle)]
pub extern "C" fn pto_status_str(code: i32) -> *const c_char {
    pto_runtime_core::ffi::status_str(code).as_ptr()
}
