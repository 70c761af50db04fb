//! The graph operations of the orchestration's table ([`crate::abi::PtoOrchOps`]):
//! trampolines over the core's C layer (`pto_runtime_core::ffi::graph_raw`), each asking the
//! table's gate first, as the other operations do.
#![allow(unsafe_code)]

use core::ffi::c_void;

use pto_runtime_core::Platform;
use pto_runtime_core::ffi::graph_raw;
use pto_runtime_core::ffi::{PtoBuffer, PtoGraph, PtoInstance, PtoReplay, PtoStatus, PtoTask};

use super::orch;

/// The status code of `r` (its error's, or 0).
fn code(r: Result<PtoStatus, i32>) -> i32 {
    r.map_or_else(|e| e, |s| s as i32)
}

pub(super) unsafe extern "C" fn storage_size(
    tasks: u32,
    args: u32,
    words: u32,
    bytes: *mut usize,
) -> i32 {
    // SAFETY: the orchestration ABI's contract on `bytes`.
    unsafe { graph_raw::graph_storage_size_c(tasks, args, words, bytes) as i32 }
}

#[allow(clippy::too_many_arguments)]
pub(super) unsafe extern "C" fn record<P: Platform, G: FnMut() -> bool>(
    ctx: *mut c_void,
    g: *mut PtoGraph,
    storage: *mut c_void,
    bytes: usize,
    tasks: u32,
    args: u32,
    words: u32,
    boundaries: *const PtoBuffer,
    nboundaries: usize,
) -> i32 {
    // SAFETY: `ctx` is the table's (the orchestration ABI's contract).
    let o = unsafe { orch::<P, G>(ctx) };
    code(o.map(|o| {
        let counts = [tasks, args, words];
        // SAFETY: the orchestration ABI's contract on the handle, storage and array.
        unsafe {
            graph_raw::graph_record_c(g, o, (storage, bytes), counts, (boundaries, nboundaries))
        }
    }))
}

pub(super) unsafe extern "C" fn internal<P: Platform, G: FnMut() -> bool>(
    ctx: *mut c_void,
    g: *mut PtoGraph,
    bytes: u64,
    align: u64,
    out: *mut PtoBuffer,
) -> i32 {
    // SAFETY: as for `record`.
    let o = unsafe { orch::<P, G>(ctx) };
    // SAFETY: the orchestration ABI's contract on the handle and `out`.
    code(o.map(|_| unsafe { graph_raw::graph_internal_c(g, bytes, align, out) }))
}

pub(super) unsafe extern "C" fn add<P: Platform, G: FnMut() -> bool>(
    ctx: *mut c_void,
    g: *mut PtoGraph,
    task: *const PtoTask,
    after: *const u32,
    nafter: usize,
    node: *mut u32,
) -> i32 {
    // SAFETY: as for `record`.
    let o = unsafe { orch::<P, G>(ctx) };
    // SAFETY: the orchestration ABI's contract on the handle, the task and the arrays.
    code(o.map(|o| unsafe { graph_raw::graph_add_c(g, o, task, (after, nafter), node) }))
}

pub(super) unsafe extern "C" fn patch<P: Platform, G: FnMut() -> bool>(
    ctx: *mut c_void,
    g: *mut PtoGraph,
    node: u32,
    arg: u32,
    slot: u32,
) -> i32 {
    // SAFETY: as for `record`.
    let o = unsafe { orch::<P, G>(ctx) };
    // SAFETY: the orchestration ABI's contract on the handle.
    code(o.map(|_| unsafe { graph_raw::graph_patch_c(g, node, arg, slot) }))
}

pub(super) unsafe extern "C" fn finish<P: Platform, G: FnMut() -> bool>(
    ctx: *mut c_void,
    g: *mut PtoGraph,
) -> i32 {
    // SAFETY: as for `record`.
    let o = unsafe { orch::<P, G>(ctx) };
    // SAFETY: the orchestration ABI's contract on the handle.
    code(o.map(|_| unsafe { graph_raw::graph_finish_c(g) }))
}

#[allow(clippy::too_many_arguments)]
pub(super) unsafe extern "C" fn replay<P: Platform, G: FnMut() -> bool>(
    ctx: *mut c_void,
    g: *mut PtoGraph,
    buffers: *const PtoBuffer,
    nbuffers: usize,
    scalars: *const u64,
    nscalars: usize,
    ring: u8,
    flags: u32,
    after: *const u64,
    nafter: usize,
    out: *mut PtoInstance,
) -> i32 {
    // SAFETY: as for `record`.
    let o = unsafe { orch::<P, G>(ctx) };
    code(o.map(|o| {
        let (b, s, a) = (
            (buffers, core::ptr::null(), nbuffers),
            (scalars, nscalars),
            (ring, flags, after, nafter),
        );
        // SAFETY: the orchestration ABI's contract on the handle, the arrays and `out`.
        unsafe { graph_raw::graph_replay_c(o, g, b, s, a, out) }
    }))
}

pub(super) unsafe extern "C" fn replay_with<P: Platform, G: FnMut() -> bool>(
    ctx: *mut c_void,
    g: *mut PtoGraph,
    r: *const PtoReplay,
    out: *mut PtoInstance,
) -> i32 {
    // SAFETY: as for `record`.
    let o = unsafe { orch::<P, G>(ctx) };
    // SAFETY: the orchestration ABI's contract on the handle, `r`, its arrays and `out`.
    code(o.map(|o| unsafe { graph_raw::graph_replay_with_c(o, g, r, out) }))
}

pub(super) unsafe extern "C" fn close<P: Platform, G: FnMut() -> bool>(
    ctx: *mut c_void,
    g: *mut PtoGraph,
) -> i32 {
    // SAFETY: as for `record`.
    let o = unsafe { orch::<P, G>(ctx) };
    // SAFETY: the orchestration ABI's contract on the handle.
    code(o.map(|_| unsafe { graph_raw::graph_close_c(g) }))
}
