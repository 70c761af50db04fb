//! A task from C: its arguments and dependencies come as raw pointers and counts.

use crate::ffi::{PtoStatus, PtoTask};
use crate::ids::{KernelId, TaskId, WorkerClass};
use crate::orchestrator::{Orchestrator, TaskSpec};
use crate::platform::Platform;
use crate::region::config::MAX_DEPS;

/// Submits the task `t` points to through `o`, and writes its id to `id` (if not null).
/// Returns `PtoOk`, or the status that says why not: `PtoErrNull` for a null task or a null
/// array with a count, `PtoErrSubmit` for an unknown class, too many dependencies, or a task
/// the orchestrator refused.
///
/// # Safety
/// `t` is null or valid for a read; `t.args` is valid for reads of `t.nargs` words and
/// `t.deps` of `t.ndeps`, unless null (then their count must be 0, or the call fails); `id`
/// is null or valid for a write.
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
            if !id.is_null() {
                // SAFETY: non-null; the caller's contract.
                unsafe { id.write(task.raw()) };
            }
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
    let class = match t.class {
        0 => WorkerClass::Aic,
        1 => WorkerClass::Aiv,
        2 => WorkerClass::Mix,
        3 => WorkerClass::Dummy,
        _ => return Err(PtoStatus::PtoErrSubmit),
    };
    if (t.args.is_null() && t.nargs > 0) || (t.deps.is_null() && t.ndeps > 0) {
        return Err(PtoStatus::PtoErrNull);
    }
    if t.ndeps > MAX_DEPS as usize {
        return Err(PtoStatus::PtoErrSubmit);
    }
    let args: &[u64] = if t.nargs == 0 {
        &[]
    } else {
        // SAFETY: non-null and valid for `nargs` words (the caller's contract).
        unsafe { core::slice::from_raw_parts(t.args, t.nargs) }
    };
    let mut deps = [TaskId::from_raw(0); MAX_DEPS as usize];
    for (i, d) in deps.iter_mut().take(t.ndeps).enumerate() {
        // SAFETY: `i < ndeps`, inside the array (the caller's contract).
        *d = TaskId::from_raw(unsafe { *t.deps.add(i) });
    }
    let mut spec = TaskSpec::new(KernelId(t.kernel), class)
        .args(args)
        .deps(&deps[..t.ndeps]);
    spec.ring = t.ring;
    o.submit(&spec).map_err(|_| PtoStatus::PtoErrSubmit)
}
