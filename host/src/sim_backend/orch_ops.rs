//! The orchestration ABI's table of runtime operations (`PtoOrchOps`, as
//! `libpto_aicpu.so` hands it out on the chip) over the simulator's orchestrator.
#![allow(unsafe_code)]

use std::ffi::{c_char, c_void};

use pto_device_sys::abi::{PTO_AICPU_ABI, PtoOrchOps, PtoOrchestrate};
use pto_runtime_core::ffi::{
    PtoStatus, PtoTask, PtoTensorArg, alloc_c, settle_c, status_str, submit_c, wrote_c,
};
use pto_sim::SimOrchestrator;

/// Calls `entry` with the operations over `o` and `args`; its return value.
pub fn orchestrate(o: &mut SimOrchestrator<'_, '_>, entry: PtoOrchestrate, args: &[u64]) -> i32 {
    let ops = PtoOrchOps {
        abi: PTO_AICPU_ABI,
        reserved: 0,
        ctx: (o as *mut SimOrchestrator<'_, '_>).cast(),
        submit,
        scope_begin,
        scope_end,
        alloc,
        status_str: status,
        settle,
        wrote,
    };
    let nargs = u32::try_from(args.len()).unwrap_or(u32::MAX);
    // SAFETY: the orchestration ABI's contract: `ops` and `args` (`nargs` words) are valid
    // for the call, and `ctx` is the orchestrator, used by this thread only.
    unsafe { entry(&ops, args.as_ptr(), nargs) }
}

/// The orchestrator `ctx` names.
///
/// # Safety
/// `ctx` is null or the `ctx` of the table `orchestrate` built, during its call.
unsafe fn orch<'a>(ctx: *mut c_void) -> Result<&'a mut SimOrchestrator<'a, 'a>, i32> {
    if ctx.is_null() {
        return Err(PtoStatus::PtoErrNull as i32);
    }
    // SAFETY: the caller's contract.
    Ok(unsafe { &mut *ctx.cast::<SimOrchestrator<'a, 'a>>() })
}

unsafe extern "C" fn submit(ctx: *mut c_void, task: *const PtoTask, id: *mut u64) -> i32 {
    // SAFETY: `ctx` is the table's (the orchestration ABI's contract).
    match unsafe { orch(ctx) } {
        // SAFETY: the orchestration's contract on `task` and `id` (the C header's).
        Ok(o) => unsafe { submit_c(o, task, id) as i32 },
        Err(e) => e,
    }
}

unsafe extern "C" fn scope_begin(ctx: *mut c_void) -> i32 {
    // SAFETY: as for `submit`.
    match unsafe { orch(ctx) } {
        Ok(o) => PtoStatus::of(o.scope_begin()) as i32,
        Err(e) => e,
    }
}

unsafe extern "C" fn scope_end(ctx: *mut c_void) -> i32 {
    // SAFETY: as for `submit`.
    match unsafe { orch(ctx) } {
        Ok(o) => PtoStatus::of(o.scope_end()) as i32,
        Err(e) => e,
    }
}

unsafe extern "C" fn alloc(
    ctx: *mut c_void,
    ring: u8,
    bytes: u64,
    align: u64,
    addr: *mut u64,
) -> i32 {
    // SAFETY: as for `submit`.
    match unsafe { orch(ctx) } {
        // SAFETY: the orchestration ABI's contract on `addr`.
        Ok(o) => unsafe { alloc_c(o, ring, bytes, align, addr) as i32 },
        Err(e) => e,
    }
}

unsafe extern "C" fn status(code: i32) -> *const c_char {
    status_str(code).as_ptr()
}

unsafe extern "C" fn settle(ctx: *mut c_void, arg: *const PtoTensorArg) -> i32 {
    // SAFETY: as for `submit`.
    match unsafe { orch(ctx) } {
        // SAFETY: the orchestration ABI's contract on `arg`.
        Ok(o) => unsafe { settle_c(o, arg) as i32 },
        Err(e) => e,
    }
}

unsafe extern "C" fn wrote(ctx: *mut c_void, arg: *const PtoTensorArg) -> i32 {
    // SAFETY: as for `submit`.
    match unsafe { orch(ctx) } {
        // SAFETY: the orchestration ABI's contract on `arg`.
        Ok(o) => unsafe { wrote_c(o, arg) as i32 },
        Err(e) => e,
    }
}
