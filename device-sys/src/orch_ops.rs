//! The one implementation of the orchestration's table of runtime operations
//! ([`PtoOrchOps`]): C trampolines over an [`Orchestrator`], whatever its platform, each
//! asking the caller's gate first (the AICPU SO's gate is the run's deadline; the simulator's
//! lets every call through). `libpto_aicpu.so` and the host's simulator backend both call an
//! orchestration function through [`orchestrate`], so the two cannot drift apart.
#![allow(unsafe_code)]

use core::ffi::{c_char, c_void};

use pto_runtime_core::ffi::{
    PtoStatus, PtoTask, PtoTensorArg, alloc_c, settle_c, status_str, submit_c, wrote_c,
};
use pto_runtime_core::{Orchestrator, Platform};

use crate::abi::{PTO_AICPU_ABI, PtoOrchOps, PtoOrchestrate};

#[path = "orch_ops_graph.rs"]
mod graph;
#[cfg(test)]
#[path = "orch_ops_tests.rs"]
mod tests;

/// What the table's `ctx` points to during the call.
struct Ctx<'o, 'r, 'p, P: Platform, G> {
    o: &'o mut Orchestrator<'r, 'p, P>,
    gate: G,
}

/// Calls `entry` with the table of operations over `o` and the `nargs` words at `args`; the
/// function's return code. Before each operation `gate` is asked: `false` fails the
/// operation with `PtoErrRun` (the run is over, e.g. past its deadline) without touching the
/// orchestrator.
///
/// # Safety
/// `entry` is a function of the orchestration ABI (`pto_aicpu.h`), and `args` points to
/// `nargs` readable words (or `nargs` is 0) for the call.
pub unsafe fn orchestrate<P: Platform, G: FnMut() -> bool>(
    o: &mut Orchestrator<'_, '_, P>,
    gate: G,
    entry: PtoOrchestrate,
    args: *const u64,
    nargs: u32,
) -> i32 {
    let mut ctx = Ctx { o, gate };
    let ops = table(&raw mut ctx);
    // SAFETY: the caller's contract on `entry` and `args`; `ops` and the `ctx` it names live
    // until `entry` returns, used by this thread only.
    unsafe { entry(&ops, args, nargs) }
}

/// The table whose `ctx` is `ctx`, with the trampolines for its type.
fn table<P: Platform, G: FnMut() -> bool>(ctx: *mut Ctx<'_, '_, '_, P, G>) -> PtoOrchOps {
    PtoOrchOps {
        abi: PTO_AICPU_ABI,
        reserved: 0,
        ctx: ctx.cast(),
        submit: submit::<P, G>,
        scope_begin: scope_begin::<P, G>,
        scope_end: scope_end::<P, G>,
        alloc: alloc::<P, G>,
        status_str: status,
        settle: settle::<P, G>,
        wrote: wrote::<P, G>,
        graph_storage_size: graph::storage_size,
        graph_record: graph::record::<P, G>,
        graph_internal: graph::internal::<P, G>,
        graph_add: graph::add::<P, G>,
        graph_patch: graph::patch::<P, G>,
        graph_finish: graph::finish::<P, G>,
        graph_replay: graph::replay::<P, G>,
        graph_close: graph::close::<P, G>,
        graph_replay_with: graph::replay_with::<P, G>,
    }
}

/// The orchestrator behind `ctx`, if the gate lets the call through.
///
/// # Safety
/// `ctx` is null or the `ctx` of a table [`orchestrate`] built for these types, during its
/// call, on the thread that called it.
unsafe fn orch<'a, P: Platform, G: FnMut() -> bool>(
    ctx: *mut c_void,
) -> Result<&'a mut Orchestrator<'a, 'a, P>, i32> {
    if ctx.is_null() {
        return Err(PtoStatus::PtoErrNull as i32);
    }
    // SAFETY: the caller's contract: `ctx` is a live `Ctx` of these types, not aliased.
    let c = unsafe { &mut *ctx.cast::<Ctx<'a, 'a, 'a, P, G>>() };
    if !(c.gate)() {
        return Err(PtoStatus::PtoErrRun as i32);
    }
    Ok(&mut *c.o)
}

unsafe extern "C" fn submit<P: Platform, G: FnMut() -> bool>(
    ctx: *mut c_void,
    task: *const PtoTask,
    id: *mut u64,
) -> i32 {
    // SAFETY: `ctx` is the table's (the orchestration ABI's contract).
    match unsafe { orch::<P, G>(ctx) } {
        // SAFETY: the orchestration's contract on `task` and `id` (the C header's).
        Ok(o) => unsafe { submit_c(o, task, id) as i32 },
        Err(e) => e,
    }
}

unsafe extern "C" fn scope_begin<P: Platform, G: FnMut() -> bool>(ctx: *mut c_void) -> i32 {
    // SAFETY: as for `submit`.
    match unsafe { orch::<P, G>(ctx) } {
        Ok(o) => PtoStatus::of(o.scope_begin()) as i32,
        Err(e) => e,
    }
}

unsafe extern "C" fn scope_end<P: Platform, G: FnMut() -> bool>(ctx: *mut c_void) -> i32 {
    // SAFETY: as for `submit`.
    match unsafe { orch::<P, G>(ctx) } {
        Ok(o) => PtoStatus::of(o.scope_end()) as i32,
        Err(e) => e,
    }
}

unsafe extern "C" fn alloc<P: Platform, G: FnMut() -> bool>(
    ctx: *mut c_void,
    ring: u8,
    bytes: u64,
    align: u64,
    addr: *mut u64,
) -> i32 {
    // SAFETY: as for `submit`.
    match unsafe { orch::<P, G>(ctx) } {
        // SAFETY: the orchestration ABI's contract on `addr`.
        Ok(o) => unsafe { alloc_c(o, ring, bytes, align, addr) as i32 },
        Err(e) => e,
    }
}

unsafe extern "C" fn status(code: i32) -> *const c_char {
    status_str(code).as_ptr()
}

unsafe extern "C" fn settle<P: Platform, G: FnMut() -> bool>(
    ctx: *mut c_void,
    arg: *const PtoTensorArg,
) -> i32 {
    // SAFETY: as for `submit`.
    match unsafe { orch::<P, G>(ctx) } {
        // SAFETY: the orchestration ABI's contract on `arg`.
        Ok(o) => unsafe { settle_c(o, arg) as i32 },
        Err(e) => e,
    }
}

unsafe extern "C" fn wrote<P: Platform, G: FnMut() -> bool>(
    ctx: *mut c_void,
    arg: *const PtoTensorArg,
) -> i32 {
    // SAFETY: as for `submit`.
    match unsafe { orch::<P, G>(ctx) } {
        // SAFETY: the orchestration ABI's contract on `arg`.
        Ok(o) => unsafe { wrote_c(o, arg) as i32 },
        Err(e) => e,
    }
}
