//! A graph's C pointers, checked and turned into Rust values: the handle's storage, the
//! caller's byte array carved into a recording's arrays, bindings and dependencies. With
//! `raw.rs`, the only unsafe code of the C ABIs.
#![allow(unsafe_code)]

use super::graph::{
    CGraph, GRAPH_STORAGE_ALIGN, PtoBuffer, PtoGraph, PtoInstance, PtoReplay, PtoReplayFlags,
    storage_layout,
};
use super::raw::{put, slice, with_spec};
use super::status::PtoStatus;
use super::task::PtoTask;
use crate::ids::TaskId;
use crate::orchestrator::{
    Bindings, GraphRecordedArg, GraphRecordedTask, GraphStorage, MAX_GRAPH_BOUNDARIES,
    MAX_GRAPH_SCALARS, Node, Orchestrator, Recording,
};
use crate::platform::Platform;
use crate::region::config::MAX_DEPS;
use crate::tensor::arg::Buffer;
use core::ffi::c_void;

#[cfg(all(test, not(loom)))]
#[path = "graph_raw_tests.rs"]
mod tests;

/// Writes to `bytes` the size of the storage (64-byte aligned) a graph of `tasks` tasks,
/// `args` tensor arguments and `words` words (one per scalar argument and per edge) needs.
///
/// # Safety
/// `bytes` is null or valid for a write.
pub unsafe fn graph_storage_size_c(
    tasks: u32,
    args: u32,
    words: u32,
    bytes: *mut usize,
) -> PtoStatus {
    if bytes.is_null() {
        return PtoStatus::PtoErrNull;
    }
    match super::graph::storage_size(tasks as usize, args as usize, words as usize) {
        Some(n) => {
            // SAFETY: non-null; the caller's contract.
            unsafe { bytes.write(n) };
            PtoStatus::PtoOk
        }
        None => PtoStatus::PtoErrGraphStorage,
    }
}

/// Opens `g` recording a graph for `o`'s run into `storage` (`bytes` long, 64-byte aligned,
/// at least what `pto_graph_storage_size` says for `counts`: tasks, tensor arguments,
/// words), its boundary buffers `boundaries` (`n` of them), in the order replays bind them.
///
/// # Safety
/// `g` is null or valid for writes of a `PtoGraph`, not open, and not moved until closed;
/// `storage` is null or valid for reads and writes of `bytes` bytes, used by nothing else
/// until `g` is closed; `boundaries` is null or valid for reads of `n` elements.
pub unsafe fn graph_record_c<P: Platform>(
    g: *mut PtoGraph,
    o: &Orchestrator<'_, '_, P>,
    (storage, bytes): (*mut c_void, usize),
    counts: [u32; 3],
    (boundaries, n): (*const PtoBuffer, usize),
) -> PtoStatus {
    if g.is_null() || storage.is_null() {
        return PtoStatus::PtoErrNull;
    }
    if n > MAX_GRAPH_BOUNDARIES {
        return PtoStatus::PtoErrGraphTooManyBuffers;
    }
    let [tasks, args, words] = counts.map(|c| c as usize);
    let Some([t, a, w, end]) = storage_layout(tasks, args, words) else {
        return PtoStatus::PtoErrGraphStorage;
    };
    if end > bytes || storage.addr() % GRAPH_STORAGE_ALIGN != 0 {
        return PtoStatus::PtoErrGraphStorage;
    }
    // SAFETY: the caller's contract on the array.
    let raw = match unsafe { slice(boundaries, n) } {
        Ok(raw) => raw,
        Err(e) => return e,
    };
    let mut kept = [Buffer::new(0, 0); MAX_GRAPH_BOUNDARIES];
    for (k, b) in kept.iter_mut().zip(raw) {
        *k = b.to_buffer();
    }
    let base = storage.cast::<u8>();
    // SAFETY: the three arrays lie inside the caller's `bytes` bytes (`end <= bytes`), each
    // at an offset aligned for its type from a 64-byte-aligned start, apart from each other
    // (the layout puts them one after the other); each element is written before the slice
    // is made, and nothing else uses the storage until `g` closes (the caller's contract).
    let storage = unsafe {
        GraphStorage {
            tasks: filled(base.add(t).cast(), tasks, GraphRecordedTask::EMPTY),
            args: filled(base.add(a).cast(), args, GraphRecordedArg::EMPTY),
            words: filled(base.add(w).cast(), words, 0u64),
        }
    };
    match Recording::new(o, storage, &kept[..n]) {
        Ok(rec) => {
            // SAFETY: `g` is non-null, large and aligned enough (checked at compile time in
            // `graph.rs`) and valid for writes (the caller's contract).
            unsafe {
                g.cast::<Option<CGraph>>()
                    .write(Some(CGraph::Recording(rec)))
            };
            PtoStatus::PtoOk
        }
        Err(e) => e.into(),
    }
}

/// `n` copies of `v` written from `p`, as a slice.
///
/// # Safety
/// `p` is aligned and valid for writes of `n` elements for `'a`, and used by nothing else.
unsafe fn filled<'a, T: Copy>(p: *mut T, n: usize, v: T) -> &'a mut [T] {
    for i in 0..n {
        // SAFETY: inside the caller's `n` elements.
        unsafe { p.add(i).write(v) };
    }
    // SAFETY: `n` elements, each written above; the caller's contract.
    unsafe { core::slice::from_raw_parts_mut(p, n) }
}

/// The state of open handle `g`.
///
/// # Safety
/// `g` is null or was opened by [`graph_record_c`] and not closed (and is not used by
/// another thread).
unsafe fn state<'a>(g: *mut PtoGraph) -> Result<&'a mut CGraph, PtoStatus> {
    if g.is_null() {
        return Err(PtoStatus::PtoErrNull);
    }
    // SAFETY: the caller's contract: an open handle holds an `Option<CGraph>`.
    unsafe { (*g.cast::<Option<CGraph>>()).as_mut() }.ok_or(PtoStatus::PtoErrGraphState)
}

/// Gives the recording in `g` an internal buffer of `bytes` bytes aligned to `align`
/// (allocated per instance), and writes where the recording places it to `out`: name it in
/// tensor arguments as any buffer.
///
/// # Safety
/// `g` is null or open; `out` is null or valid for a write.
pub unsafe fn graph_internal_c(
    g: *mut PtoGraph,
    bytes: u64,
    align: u64,
    out: *mut PtoBuffer,
) -> PtoStatus {
    if out.is_null() {
        return PtoStatus::PtoErrNull;
    }
    // SAFETY: the caller's contract.
    let Ok(CGraph::Recording(rec)) = (unsafe { state(g) }) else {
        return if g.is_null() {
            PtoStatus::PtoErrNull
        } else {
            PtoStatus::PtoErrGraphState
        };
    };
    match rec.internal(bytes, align) {
        Ok(b) => {
            // SAFETY: non-null; the caller's contract.
            unsafe { out.write(PtoBuffer::of(b)) };
            PtoStatus::PtoOk
        }
        Err(e) => e.into(),
    }
}

/// Adds task `t` to the recording in `g` (checked by `o`, the orchestrator of the run it
/// records for), after the earlier nodes `after` (`nafter` of them) besides what its tensors
/// order; its node goes to `node` (if not null). Its `deps` and `ring` must be empty.
///
/// # Safety
/// `g` is null or open; `t` as for [`super::submit_c`]; `after` is null or valid for reads
/// of `nafter` elements; `node` is null or valid for a write.
pub unsafe fn graph_add_c<P: Platform>(
    g: *mut PtoGraph,
    o: &Orchestrator<'_, '_, P>,
    t: *const PtoTask,
    (after, nafter): (*const u32, usize),
    node: *mut u32,
) -> PtoStatus {
    if t.is_null() {
        return PtoStatus::PtoErrNull;
    }
    // SAFETY: the caller's contract.
    let rec = match unsafe { state(g) } {
        Ok(CGraph::Recording(rec)) => rec,
        Ok(CGraph::Recorded(_)) => return PtoStatus::PtoErrGraphState,
        Err(e) => return e,
    };
    if nafter > MAX_DEPS as usize {
        return PtoStatus::PtoErrTooManyDeps;
    }
    // SAFETY: the caller's contract on the array.
    let after = match unsafe { slice(after, nafter) } {
        Ok(a) => a,
        Err(e) => return e,
    };
    let mut nodes = [Node(0); MAX_DEPS as usize];
    for (n, &a) in nodes.iter_mut().zip(after) {
        *n = Node(a);
    }
    // SAFETY: non-null; the caller's contract on the task and its arrays.
    let added = unsafe {
        with_spec(&*t, |spec| {
            rec.add_after(o, spec, &nodes[..nafter])
                .map_err(PtoStatus::from)
        })
    };
    match added {
        Ok(n) => {
            // SAFETY: the caller's contract.
            unsafe { put(node, n.index()) };
            PtoStatus::PtoOk
        }
        Err(e) => e,
    }
}

/// Makes scalar `arg` of recorded node `node` of the recording in `g` a patch, set by each
/// replay from its scalar `slot`.
///
/// # Safety
/// `g` is null or open.
pub unsafe fn graph_patch_c(g: *mut PtoGraph, node: u32, arg: u32, slot: u32) -> PtoStatus {
    // SAFETY: the caller's contract.
    match unsafe { state(g) } {
        Ok(CGraph::Recording(rec)) => match rec.patch(Node(node), arg, slot) {
            Ok(()) => PtoStatus::PtoOk,
            Err(e) => e.into(),
        },
        Ok(CGraph::Recorded(_)) => PtoStatus::PtoErrGraphState,
        Err(e) => e,
    }
}

/// Ends the recording in `g`: from now on it replays.
///
/// # Safety
/// `g` is null or open.
pub unsafe fn graph_finish_c(g: *mut PtoGraph) -> PtoStatus {
    if g.is_null() {
        return PtoStatus::PtoErrNull;
    }
    // SAFETY: the caller's contract: an open handle holds an `Option<CGraph>`.
    let slot = unsafe { &mut *g.cast::<Option<CGraph>>() };
    match slot.take() {
        Some(CGraph::Recording(rec)) => {
            *slot = Some(CGraph::Recorded(rec.finish()));
            PtoStatus::PtoOk
        }
        other => {
            *slot = other;
            PtoStatus::PtoErrGraphState
        }
    }
}

/// Replays the graph in `g` through `o` as `r` says ([`PtoReplay`]): [`graph_replay_c`] of
/// its fields. The instance goes to `out` (if not null).
///
/// # Safety
/// `g` is null or open; `r` is null or valid for a read, its arrays null or valid for reads
/// of their counts (`shifts` of `nbuffers`); `out` is null or valid for a write.
pub unsafe fn graph_replay_with_c<P: Platform>(
    o: &mut Orchestrator<'_, '_, P>,
    g: *mut PtoGraph,
    r: *const PtoReplay,
    out: *mut PtoInstance,
) -> PtoStatus {
    if r.is_null() {
        return PtoStatus::PtoErrNull;
    }
    // SAFETY: non-null and valid for a read (the caller's contract).
    let r = unsafe { r.read() };
    // SAFETY: the caller's contract on the arrays and `out`.
    unsafe {
        graph_replay_c(
            o,
            g,
            (r.buffers, r.shifts, r.nbuffers),
            (r.scalars, r.nscalars),
            (r.ring, r.flags, r.after, r.nafter),
            out,
        )
    }
}

/// Replays the graph in `g` through `o`: its boundaries bound to `buffers` (`n` of them, as
/// long as the recording's, unless `flags` has [`PtoReplayFlags::PtoReplayOrSubmit`]),
/// moved along them by `shifts` (null: not moved; else `n` of them), its patched scalars to
/// `scalars`, its tasks into `ring`, its first tasks waiting for `after` (`nafter` ids) too.
/// The instance goes to `out` (if not null).
///
/// # Safety
/// `g` is null or open; `buffers`, `shifts`, `scalars` and `after` are null or valid for
/// reads of their counts; `out` is null or valid for a write.
pub unsafe fn graph_replay_c<P: Platform>(
    o: &mut Orchestrator<'_, '_, P>,
    g: *mut PtoGraph,
    (buffers, shifts, n): (*const PtoBuffer, *const i64, usize),
    (scalars, nscalars): (*const u64, usize),
    (ring, flags, after, nafter): (u8, u32, *const u64, usize),
    out: *mut PtoInstance,
) -> PtoStatus {
    // SAFETY: the caller's contract.
    let graph = match unsafe { state(g) } {
        Ok(CGraph::Recorded(graph)) => graph,
        Ok(CGraph::Recording(_)) => return PtoStatus::PtoErrGraphState,
        Err(e) => return e,
    };
    if n > MAX_GRAPH_BOUNDARIES {
        return PtoStatus::PtoErrGraphWrongCount;
    }
    if nscalars > MAX_GRAPH_SCALARS {
        return PtoStatus::PtoErrGraphWrongScalars;
    }
    if nafter > MAX_DEPS as usize {
        return PtoStatus::PtoErrTooManyDeps;
    }
    // SAFETY: the caller's contract on the arrays.
    let arrays = unsafe {
        (
            slice(buffers, n),
            slice(scalars, nscalars),
            slice(after, nafter),
        )
    };
    let (raw, scalars, raw_after) = match arrays {
        (Ok(b), Ok(s), Ok(a)) => (b, s, a),
        (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => return e,
    };
    let mut bound = [Buffer::new(0, 0); MAX_GRAPH_BOUNDARIES];
    for (b, r) in bound.iter_mut().zip(raw) {
        *b = r.to_buffer();
    }
    let moved = if shifts.is_null() {
        &[][..]
    } else {
        // SAFETY: non-null and valid for `n` reads (the caller's contract).
        match unsafe { slice(shifts, n) } {
            Ok(s) => s,
            Err(e) => return e,
        }
    };
    let mut ids = [TaskId::from_raw(0); MAX_DEPS as usize];
    for (d, &r) in ids.iter_mut().zip(raw_after) {
        *d = TaskId::from_raw(r);
    }
    let mut bind = Bindings::new(&bound[..n])
        .ring(ring)
        .after(&ids[..nafter])
        .scalars(scalars)
        .shifts(moved);
    bind.or_submit = flags & PtoReplayFlags::PtoReplayOrSubmit as u32 != 0;
    match o.replay(graph, &bind) {
        Ok(instance) => {
            let first = instance.task(Node(0)).map_or(0, TaskId::raw);
            let v = PtoInstance {
                first,
                tasks: instance.len(),
                fell_back: instance
                    .fell_back()
                    .map_or(0, |why| PtoStatus::from(why) as i32),
            };
            // SAFETY: the caller's contract.
            unsafe { put(out, v) };
            PtoStatus::PtoOk
        }
        Err(e) => e.into(),
    }
}

/// Closes `g`: its storage (and the caller's array) is the caller's again. A closed handle
/// stays closed.
///
/// # Safety
/// `g` is null or was opened by [`graph_record_c`].
pub unsafe fn graph_close_c(g: *mut PtoGraph) -> PtoStatus {
    if g.is_null() {
        return PtoStatus::PtoErrNull;
    }
    // SAFETY: non-null, large and aligned enough, valid for writes (the caller's contract);
    // nothing of what it held needs dropping.
    unsafe { g.cast::<Option<CGraph>>().write(None) };
    PtoStatus::PtoOk
}
