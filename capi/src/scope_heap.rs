//! Scopes and the output heap, for the orchestrating thread: `pto_scope_begin` /
//! `pto_scope_end` (tasks submitted in a scope are reclaimed only after it ended) and
//! `pto_alloc` (a buffer of a ring's output heap for the next task of that ring).
#![allow(unsafe_code)]

use crate::api::orchestrator;
use crate::types::{PtoOrchestrator, PtoStatus};

/// Opens a scope: the tasks submitted until its end are reclaimed only after it ended.
/// `PtoErrScopeTooDeep` past the deepest nesting.
///
/// # Safety
/// `o` is null or was opened by `pto_orchestrator_open`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pto_scope_begin(o: *mut PtoOrchestrator) -> PtoStatus {
    // SAFETY: the caller's contract.
    match unsafe { orchestrator(o) } {
        Ok(o) => PtoStatus::of(o.scope_begin()),
        Err(e) => e,
    }
}

/// Ends the innermost open scope; `PtoErrNoOpenScope` if none is open.
///
/// # Safety
/// `o` is null or was opened by `pto_orchestrator_open`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pto_scope_end(o: *mut PtoOrchestrator) -> PtoStatus {
    // SAFETY: the caller's contract.
    match unsafe { orchestrator(o) } {
        Ok(o) => PtoStatus::of(o.scope_end()),
        Err(e) => e,
    }
}

/// Takes `bytes` (aligned to `align`, a power of two) of `ring`'s output heap for the next
/// task submitted to `ring`, and writes its device address to `addr`. Waits (bounded by
/// `submit_timeout_us`) for room; `PtoErrHeapTooSmall`, `PtoErrHeapFull`,
/// `PtoErrBadAlignment` or `PtoErrScopeDeadlock` say why not.
///
/// # Safety
/// `o` is null or was opened by `pto_orchestrator_open`; `addr` is null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pto_alloc(
    o: *mut PtoOrchestrator,
    ring: u8,
    bytes: u64,
    align: u64,
    addr: *mut u64,
) -> PtoStatus {
    // SAFETY: the caller's contract.
    match unsafe { orchestrator(o) } {
        // SAFETY: the caller's contract on `addr`.
        Ok(o) => unsafe { pto_runtime_core::ffi::alloc_c(o, ring, bytes, align, addr) },
        Err(e) => e,
    }
}
