//! The orchestrating thread: calls the run's orchestration function with the table of
//! runtime operations, closes submissions, then keeps the device watchdog until the
//! schedulers are done.

use core::ffi::{c_char, c_void};

use pto_device_sys::abi::{PTO_AICPU_ABI, PtoAicpuCode, PtoOrchOps, PtoOrchestrate};
use pto_device_sys::chip::ChipPlatform;
use pto_device_sys::raw::arch;
use pto_runtime_core::Orchestrator;
use pto_runtime_core::ffi::{
    PtoStatus, PtoTask, PtoTensorArg, alloc_c, settle_c, status_str, submit_c, wrote_c,
};

use crate::run::{Run, others_departed, record};

/// What the operations' `ctx` points to.
struct Ctx {
    o: Orchestrator<'static, 'static, ChipPlatform<'static>>,
    run: &'static Run,
}

/// Whether the run is past its deadline; if so it is aborted (once) and recorded.
fn past_deadline(run: &Run) -> bool {
    let limit = run
        .settings
        .watchdog_us
        .saturating_mul(run.settings.ticks_per_us);
    if arch::counter().wrapping_sub(run.start) <= limit {
        return false;
    }
    record(
        PtoAicpuCode::Watchdog,
        0xffff,
        run.settings.watchdog_us / 1000,
    );
    run.rt.abort(run.settings.watchdog_us);
    true
}

unsafe extern "C" fn submit(c: *mut c_void, task: *const PtoTask, id: *mut u64) -> i32 {
    // SAFETY: as for `scope_begin`.
    match unsafe { ctx(c) } {
        // SAFETY: the orchestration's contract on `task` and `id` (the C header's).
        Ok(c) => unsafe { submit_c(&mut c.o, task, id) as i32 },
        Err(e) => e,
    }
}

/// The orchestration's `Ctx`, if the run is still within its deadline.
///
/// # Safety
/// `ctx` is null or the `Ctx` `orchestrate` handed out, alive for the orchestration call and
/// used by the orchestrating thread only.
unsafe fn ctx<'a>(ctx: *mut c_void) -> Result<&'a mut Ctx, i32> {
    if ctx.is_null() {
        return Err(PtoStatus::PtoErrNull as i32);
    }
    // SAFETY: the caller's contract.
    let c = unsafe { &mut *(ctx as *mut Ctx) };
    if past_deadline(c.run) {
        return Err(PtoStatus::PtoErrRun as i32);
    }
    Ok(c)
}

unsafe extern "C" fn scope_begin(c: *mut c_void) -> i32 {
    // SAFETY: `c` is the operations' `ctx` (the orchestration ABI's contract).
    match unsafe { ctx(c) } {
        Ok(c) => PtoStatus::of(c.o.scope_begin()) as i32,
        Err(e) => e,
    }
}

unsafe extern "C" fn scope_end(c: *mut c_void) -> i32 {
    // SAFETY: as for `scope_begin`.
    match unsafe { ctx(c) } {
        Ok(c) => PtoStatus::of(c.o.scope_end()) as i32,
        Err(e) => e,
    }
}

unsafe extern "C" fn alloc(
    c: *mut c_void,
    ring: u8,
    bytes: u64,
    align: u64,
    addr: *mut u64,
) -> i32 {
    // SAFETY: as for `scope_begin`.
    match unsafe { ctx(c) } {
        // SAFETY: the orchestration ABI's contract on `addr`.
        Ok(c) => unsafe { alloc_c(&mut c.o, ring, bytes, align, addr) as i32 },
        Err(e) => e,
    }
}

unsafe extern "C" fn settle(c: *mut c_void, arg: *const PtoTensorArg) -> i32 {
    // SAFETY: as for `scope_begin`.
    match unsafe { ctx(c) } {
        // SAFETY: the orchestration ABI's contract on `arg`.
        Ok(c) => unsafe { settle_c(&mut c.o, arg) as i32 },
        Err(e) => e,
    }
}

unsafe extern "C" fn wrote(c: *mut c_void, arg: *const PtoTensorArg) -> i32 {
    // SAFETY: as for `scope_begin`.
    match unsafe { ctx(c) } {
        // SAFETY: the orchestration ABI's contract on `arg`.
        Ok(c) => unsafe { wrote_c(&mut c.o, arg) as i32 },
        Err(e) => e,
    }
}

unsafe extern "C" fn status(code: i32) -> *const c_char {
    status_str(code).as_ptr()
}

/// Runs the orchestration of `run`, then watches the deadline until the schedulers left.
pub(crate) fn orchestrate(run: &'static Run) {
    let a = &run.args;
    match run.rt.orchestrator(&run.platform) {
        Ok(o) => {
            let mut ctx = Ctx { o, run };
            let ops = PtoOrchOps {
                abi: PTO_AICPU_ABI,
                reserved: 0,
                ctx: (&raw mut ctx).cast(),
                submit,
                scope_begin,
                scope_end,
                alloc,
                status_str: status,
                settle,
                wrote,
            };
            let loaded = if a.orch_so != 0 {
                // SAFETY: the host wrote `orch_so_len` bytes of the SO at `orch_so`
                // (the exec ABI's contract).
                let l = unsafe {
                    crate::orch_so::load(
                        a.orch_so,
                        a.orch_so_len,
                        run.settings.device,
                        crate::run::run_number(),
                    )
                };
                match l {
                    Ok(l) => Some(l),
                    Err(e) => {
                        record(PtoAicpuCode::OrchestrationLoad, 0xffff, e as u64);
                        drop(ctx);
                        run.rt.abort(e as u64);
                        return watch(run);
                    }
                }
            } else {
                None
            };
            let f: PtoOrchestrate = match &loaded {
                Some(l) => l.entry,
                // SAFETY: `orchestrate` is non-null when no SO is given (checked at setup)
                // and names a function of the orchestration's ABI (the exec ABI's
                // contract).
                None => unsafe {
                    core::mem::transmute::<usize, PtoOrchestrate>(a.orchestrate as usize)
                },
            };
            // SAFETY: the function's contract: `ops` is valid for the call, `orch_args`
            // names `norch_args` words (checked non-null at setup when any).
            let rc = unsafe { f(&ops, a.orch_args as usize as *const u64, a.norch_args) };
            drop(ctx);
            drop(loaded);
            if rc != 0 {
                record(PtoAicpuCode::OrchestrationFailed, 0xffff, rc as i64 as u64);
                run.rt.abort(rc as u64);
            }
        }
        Err(_) => {
            record(PtoAicpuCode::BadConfig, 0xffff, 0);
            run.rt.abort(0);
        }
    }
    watch(run)
}

/// Keeps the deadline until every other thread departed. The schedulers stop once every
/// task finished or the run failed; the deadline bounds the first, and after an abort they
/// stop promptly.
fn watch(run: &Run) {
    let mut aborted = false;
    while !others_departed() {
        if !aborted {
            aborted = past_deadline(run);
        }
        crate::cpu::idle();
    }
}
