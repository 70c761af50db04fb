//! Task graphs, for the orchestrating thread: record a sub-DAG once, replay it with new
//! buffers as often as needed. `pto_graph_storage_size` sizes the byte array a recording
//! keeps its tasks in; `pto_graph_record` opens a `PtoGraph` on it with the graph's
//! boundary buffers; `pto_graph_internal`, `pto_graph_add` and `pto_graph_patch` describe it;
//! `pto_graph_finish` ends the recording; `pto_graph_replay` submits an instance;
//! `pto_graph_close` hands the storage back. See `docs/graphs.md`.
#![allow(unsafe_code)]

use core::ffi::c_void;

use crate::api::orchestrator;
use crate::types::{PtoOrchestrator, PtoStatus, PtoTask};
use pto_runtime_core::ffi::graph_raw;
use pto_runtime_core::ffi::{PtoBuffer, PtoGraph, PtoInstance, PtoReplay};

/// Writes to `bytes` the size of the storage (64-byte aligned) that a graph of `tasks`
/// tasks, `args` tensor arguments and `words` words (one per scalar argument and one per
/// edge between its tasks) needs.
///
/// # Safety
/// `bytes` is null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pto_graph_storage_size(
    tasks: u32,
    args: u32,
    words: u32,
    bytes: *mut usize,
) -> PtoStatus {
    // SAFETY: the caller's contract.
    unsafe { graph_raw::graph_storage_size_c(tasks, args, words, bytes) }
}

/// Opens `g` recording a graph into `storage` (`bytes` long, 64-byte aligned, as large as
/// `pto_graph_storage_size` says for `tasks`, `args` and `words`), whose tensor arguments
/// lie in the `nboundaries` buffers `boundaries` (bound anew by each replay, in this order)
/// or in its internal buffers. Nothing is submitted.
///
/// # Safety
/// `g` is null or valid for writes of a `PtoGraph`, not open, and not moved until closed;
/// `o` is null or open; `storage` is null or valid for `bytes` bytes, used by nothing else
/// until `g` is closed; `boundaries` is null or valid for `nboundaries` elements.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn pto_graph_record(
    g: *mut PtoGraph,
    o: *mut PtoOrchestrator,
    storage: *mut c_void,
    bytes: usize,
    tasks: u32,
    args: u32,
    words: u32,
    boundaries: *const PtoBuffer,
    nboundaries: usize,
) -> PtoStatus {
    // SAFETY: the caller's contract.
    match unsafe { orchestrator(o) } {
        // SAFETY: the caller's contract on the handle, the storage and the array.
        Ok(o) => unsafe {
            graph_raw::graph_record_c(
                g,
                o,
                (storage, bytes),
                [tasks, args, words],
                (boundaries, nboundaries),
            )
        },
        Err(e) => e,
    }
}

/// Gives the recording in `g` a buffer of `bytes` bytes aligned to `align` that each
/// instance allocates anew from its ring's output heap, and writes to `out` where the
/// recording places it: name it in tensor arguments as any buffer.
///
/// # Safety
/// `g` is null or open; `out` is null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pto_graph_internal(
    g: *mut PtoGraph,
    bytes: u64,
    align: u64,
    out: *mut PtoBuffer,
) -> PtoStatus {
    // SAFETY: the caller's contract.
    unsafe { graph_raw::graph_internal_c(g, bytes, align, out) }
}

/// Adds task `t` to the recording in `g`, checked as `pto_submit` would check it and
/// ordered after the earlier tasks by its tensor arguments and after the `nafter` earlier
/// nodes `after`; its node (its position) goes to `node` if not null. Its `deps` and `ring`
/// must be empty: a replay names the ring and what the instance waits for.
///
/// # Safety
/// `g` is null or open; `o` is null or open (the orchestrator `g` records for); `t` as for
/// `pto_submit`; `after` is null or valid for `nafter` elements; `node` is null or valid for
/// a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pto_graph_add(
    g: *mut PtoGraph,
    o: *mut PtoOrchestrator,
    t: *const PtoTask,
    after: *const u32,
    nafter: usize,
    node: *mut u32,
) -> PtoStatus {
    // SAFETY: the caller's contract.
    match unsafe { orchestrator(o) } {
        // SAFETY: the caller's contract on the handle, the task and the arrays.
        Ok(o) => unsafe { graph_raw::graph_add_c(g, o, t, (after, nafter), node) },
        Err(e) => e,
    }
}

/// Makes scalar argument `arg` of recorded node `node` a patch: each replay sets it to its
/// scalar `slot` (the `scalars` of `pto_graph_replay`; a token's position, say).
///
/// # Safety
/// `g` is null or open.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pto_graph_patch(
    g: *mut PtoGraph,
    node: u32,
    arg: u32,
    slot: u32,
) -> PtoStatus {
    // SAFETY: the caller's contract.
    unsafe { graph_raw::graph_patch_c(g, node, arg, slot) }
}

/// Ends the recording in `g`; from now on it replays (`PtoErrGraphState` if it is not
/// recording).
///
/// # Safety
/// `g` is null or open.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pto_graph_finish(g: *mut PtoGraph) -> PtoStatus {
    // SAFETY: the caller's contract.
    unsafe { graph_raw::graph_finish_c(g) }
}

/// Submits an instance of the graph in `g`: its boundaries bound to the `nbuffers` buffers
/// `buffers` (each as long as the recording's, none sharing bytes), its patched scalars to
/// the `nscalars` values `scalars` (as many as its patches take), its tasks into `ring`,
/// ordered among themselves as recorded and against every other task by the boundaries
/// they share, its first tasks also waiting for the `nafter` ids `after`. The instance goes
/// to `out` if not null. Bindings that do not fit are refused before anything is submitted,
/// unless `flags` has `PTO_REPLAY_OR_SUBMIT`: then the tasks are submitted one by one on
/// them and `out->fell_back` says why.
///
/// # Safety
/// `o` is null or open; `g` is null or open; `buffers`, `scalars` and `after` are null or
/// valid for their counts; `out` is null or valid for a write.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn pto_graph_replay(
    o: *mut PtoOrchestrator,
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
) -> PtoStatus {
    // SAFETY: the caller's contract.
    match unsafe { orchestrator(o) } {
        // SAFETY: the caller's contract on the handle and the arrays.
        Ok(o) => unsafe {
            graph_raw::graph_replay_c(
                o,
                g,
                (buffers, core::ptr::null(), nbuffers),
                (scalars, nscalars),
                (ring, flags, after, nafter),
                out,
            )
        },
        Err(e) => e,
    }
}

/// Submits an instance of the graph in `g` as `r` says: `pto_graph_replay`'s bindings, and
/// `r->shifts` (null, or one per boundary) moving the instance's tiles, views and
/// predicates along each binding (another part of the same buffer: the next token's row of
/// a cache, say). A shift that puts the bytes the graph's tasks touch outside a binding is
/// `PTO_ERR_GRAPH_WRONG_SIZE`, before anything is submitted.
///
/// # Safety
/// `o` is null or open; `g` is null or open; `r` is null or valid for a read, its arrays
/// null or valid for their counts; `out` is null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pto_graph_replay_with(
    o: *mut PtoOrchestrator,
    g: *mut PtoGraph,
    r: *const PtoReplay,
    out: *mut PtoInstance,
) -> PtoStatus {
    // SAFETY: the caller's contract.
    match unsafe { orchestrator(o) } {
        // SAFETY: the caller's contract on the handles, `r` and `out`.
        Ok(o) => unsafe { graph_raw::graph_replay_with_c(o, g, r, out) },
        Err(e) => e,
    }
}

/// Closes `g`: its storage is the caller's again (instances already submitted run on).
///
/// # Safety
/// `g` is null or was opened by `pto_graph_record`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pto_graph_close(g: *mut PtoGraph) -> PtoStatus {
    // SAFETY: the caller's contract.
    unsafe { graph_raw::graph_close_c(g) }
}
