//! The C side's pointers, checked and turned into Rust values: with `graph_raw.rs`, the
//! only unsafe code of the C ABIs (the static library of `pto-runtime-capi`, the
//! operations `libpto_aicpu.so` hands an orchestration SO). A null array with a count is `PtoErrNull`, an array longer
//! than any configuration allows is refused by its typed status, and results go out only
//! through pointers that are not null.
#![allow(unsafe_code)]

use super::report::PtoRecord;
use super::status::PtoStatus;
use super::task::{PtoTask, PtoTensorArg, class_of};
use crate::ids::{KernelId, TaskId};
use crate::orchestrator::{Orchestrator, TaskSpec};
use crate::platform::Platform;
use crate::region::config::{MAX_ARGS, MAX_DEPS, MAX_TENSORS};
use crate::runtime::Runtime;
use crate::tensor::arg::{Buffer, TensorArg};
use crate::tensor::tile::Tile;

/// `n` elements at `p` as a slice (empty for `n == 0`, whatever `p`).
///
/// # Safety
/// `p` is null or valid for reads of `n` elements for `'a`.
pub unsafe fn slice<'a, T>(p: *const T, n: usize) -> Result<&'a [T], PtoStatus> {
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(PtoStatus::PtoErrNull);
    }
    // SAFETY: non-null and valid for `n` elements (the caller's contract).
    Ok(unsafe { core::slice::from_raw_parts(p, n) })
}

/// Writes `v` to `p` unless `p` is null.
///
/// # Safety
/// `p` is null or valid for a write of a `T`.
pub unsafe fn put<T>(p: *mut T, v: T) {
    if !p.is_null() {
        // SAFETY: non-null; the caller's contract.
        unsafe { p.write(v) };
    }
}

/// Submits the task `t` points to through `o`, and writes its id to `id` (if not null).
/// Returns `PtoOk`, or the status that says why not: `PtoErrNull` for a null task or a null
/// array with a count, `PtoErrSubmit` for an unknown class or tensor access, the
/// `PtoErrTooMany*` status for a count above any configuration's limit (checked before the
/// array is read), and the status of the [`crate::SubmitError`] for a task the
/// orchestrator refused.
///
/// # Safety
/// `t` is null or valid for a read; its `args`, `deps` and `tensors` are valid for reads
/// of `nargs`, `ndeps` and `ntensors` elements, unless null (then their count must be 0,
/// or the call fails); its `predicate` is null or valid for a read; `id` is null or valid
/// for a write.
pub unsafe fn submit_c<P: Platform>(
    o: &mut Orchestrator<'_, '_, P>,
    t: *const PtoTask,
    id: *mut u64,
) -> PtoStatus {
    if t.is_null() {
        return PtoStatus::PtoErrNull;
    }
    // SAFETY: non-null; the caller's contract.
    let t = unsafe { &*t };
    // SAFETY: the caller's contract on the task's arrays.
    match unsafe { submit(o, t) } {
        Ok(task) => {
            // SAFETY: the caller's contract.
            unsafe { put(id, task.raw()) };
            PtoStatus::PtoOk
        }
        Err(e) => e,
    }
}

/// The task `t` describes, submitted.
///
/// # Safety
/// As for [`submit_c`], on `t`'s arrays.
unsafe fn submit<P: Platform>(
    o: &mut Orchestrator<'_, '_, P>,
    t: &PtoTask,
) -> Result<TaskId, PtoStatus> {
    // SAFETY: the caller's contract on `t`'s arrays.
    unsafe { with_spec(t, |spec| o.submit(spec).map_err(PtoStatus::from)) }
}

/// Calls `f` with the task `t` describes, checked and converted.
///
/// # Safety
/// As for [`submit_c`], on `t`'s arrays.
pub(super) unsafe fn with_spec<R>(
    t: &PtoTask,
    f: impl FnOnce(&TaskSpec<'_>) -> Result<R, PtoStatus>,
) -> Result<R, PtoStatus> {
    let class = class_of(t.class)?;
    // Counts no configuration allows are refused before any slice is made of them.
    if t.nargs > MAX_ARGS as usize {
        return Err(PtoStatus::PtoErrTooManyArgs);
    }
    if t.ndeps > MAX_DEPS as usize {
        return Err(PtoStatus::PtoErrTooManyDeps);
    }
    if t.ntensors > MAX_TENSORS as usize {
        return Err(PtoStatus::PtoErrTooManyTensors);
    }
    // SAFETY: the caller's contract on each array.
    let (args, raw_deps, raw_tensors) = unsafe {
        (
            slice(t.args, t.nargs)?,
            slice(t.deps, t.ndeps)?,
            slice(t.tensors, t.ntensors)?,
        )
    };
    let mut deps = [TaskId::from_raw(0); MAX_DEPS as usize];
    for (d, &raw) in deps.iter_mut().zip(raw_deps) {
        *d = TaskId::from_raw(raw);
    }
    let none = TensorArg::input(Buffer::new(0, 0), Tile::contiguous(0, 1, 1));
    let mut tensors = [none; MAX_TENSORS as usize];
    for (d, c) in tensors.iter_mut().zip(raw_tensors) {
        *d = PtoTensorArg::to_arg(c)?;
    }
    let mut spec = TaskSpec::new(KernelId(t.kernel), class)
        .args(args)
        .deps(&deps[..raw_deps.len()])
        .tensors(&tensors[..raw_tensors.len()]);
    spec.ring = t.ring;
    spec.blocks = t.blocks.max(1);
    spec.sync_start = t.sync_start != 0;
    if t.per_lane != 0 {
        spec.aiv_kernels = Some(t.aiv_kernels.map(KernelId));
    }
    if !t.predicate.is_null() {
        // SAFETY: non-null; the caller's contract.
        let p = unsafe { &*t.predicate };
        spec = spec.when(p.to_predicate()?);
    }
    f(&spec)
}

/// Waits until the orchestrator may touch the tile `arg` names
/// ([`Orchestrator::settle`]): `PtoOk`, or the status of why not (a task still working on
/// it past the timeout, a cancelled writer, an invalid tile).
///
/// # Safety
/// `arg` is null or valid for a read.
pub unsafe fn settle_c<P: Platform>(
    o: &mut Orchestrator<'_, '_, P>,
    arg: *const PtoTensorArg,
) -> PtoStatus {
    // SAFETY: the caller's contract.
    match unsafe { tensor_arg(arg) } {
        Ok(a) => PtoStatus::of(o.settle(&a)),
        Err(e) => e,
    }
}

/// Says the orchestrator wrote the tile `arg` names ([`Orchestrator::wrote`]).
///
/// # Safety
/// `arg` is null or valid for a read.
pub unsafe fn wrote_c<P: Platform>(
    o: &mut Orchestrator<'_, '_, P>,
    arg: *const PtoTensorArg,
) -> PtoStatus {
    // SAFETY: the caller's contract.
    match unsafe { tensor_arg(arg) } {
        Ok(a) => PtoStatus::of(o.wrote(&a)),
        Err(e) => e,
    }
}

/// The tensor argument `arg` points at.
///
/// # Safety
/// `arg` is null or valid for a read.
unsafe fn tensor_arg(arg: *const PtoTensorArg) -> Result<TensorArg, PtoStatus> {
    if arg.is_null() {
        return Err(PtoStatus::PtoErrNull);
    }
    // SAFETY: non-null; the caller's contract.
    unsafe { &*arg }.to_arg()
}

/// Takes `bytes` (aligned to `align`) of `ring`'s output heap for the next task of `ring`
/// and writes the address to `addr`.
///
/// # Safety
/// `addr` is null or valid for a write.
pub unsafe fn alloc_c<P: Platform>(
    o: &mut Orchestrator<'_, '_, P>,
    ring: u8,
    bytes: u64,
    align: u64,
    addr: *mut u64,
) -> PtoStatus {
    if addr.is_null() {
        return PtoStatus::PtoErrNull;
    }
    match o.alloc(ring, bytes, align) {
        Ok(a) => {
            // SAFETY: non-null; the caller's contract.
            unsafe { addr.write(a) };
            PtoStatus::PtoOk
        }
        Err(e) => e.into(),
    }
}

/// Copies up to `cap` of `rt`'s task records (in the order the tasks finished) to `out`
/// and their number to `n`; how many records the run holds in all goes to `total` (if
/// not null), so a caller sees what did not fit.
///
/// # Safety
/// `out` is null (then `cap` must be 0) or valid for writes of `cap` records; `n` and
/// `total` are null or valid for a write.
pub unsafe fn records_c(
    rt: &Runtime<'_>,
    out: *mut PtoRecord,
    cap: usize,
    n: *mut usize,
    total: *mut usize,
) -> PtoStatus {
    if (out.is_null() && cap > 0) || n.is_null() {
        return PtoStatus::PtoErrNull;
    }
    let mut written = 0;
    let mut all = 0;
    for r in rt.task_records() {
        if written < cap {
            // SAFETY: `written < cap`, inside the caller's array.
            unsafe { out.add(written).write(PtoRecord::from_record(&r)) };
            written += 1;
        }
        all += 1;
    }
    // SAFETY: `n` is non-null; the caller's contract (and for `total`).
    unsafe {
        n.write(written);
        put(total, all);
    }
    PtoStatus::PtoOk
}
