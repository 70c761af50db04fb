//! Calling the run's orchestration function: the entry the exec arguments name, and the call
//! through the one operations table (`pto_device_sys::orch_ops`), gated by the run's
//! deadline.

use pto_device_sys::abi::{PtoAicpuExecArgs, PtoOrchestrate};
use pto_device_sys::chip::ChipPlatform;
use pto_runtime_core::Orchestrator;

use crate::orch::past_deadline;
use crate::run::Run;

/// The orchestration function the arguments name (`orchestrate`, non-null when no SO is
/// given: checked at setup).
pub(crate) fn given_entry(a: &PtoAicpuExecArgs) -> PtoOrchestrate {
    // SAFETY: `orchestrate` is non-null when no SO is given (checked at setup) and names a
    // function of the orchestration's ABI (the exec ABI's contract).
    unsafe { core::mem::transmute::<usize, PtoOrchestrate>(a.orchestrate as usize) }
}

/// Calls `f` with the table of operations over `o`, and the run's orchestration
/// arguments: the function's return code. Each operation past the run's deadline fails
/// (`PtoErrRun`) and aborts the run.
pub(crate) fn call<'p>(
    f: PtoOrchestrate,
    mut o: Orchestrator<'static, 'p, ChipPlatform<'static>>,
    run: &'p Run,
) -> i32 {
    let a = &run.args;
    // SAFETY: `f` is an orchestration function (the exec ABI's contract, or the SO's
    // exported entry), and `orch_args` names `norch_args` words (checked non-null at setup
    // when any).
    unsafe {
        pto_device_sys::orch_ops::orchestrate(
            &mut o,
            || !past_deadline(run),
            f,
            a.orch_args as usize as *const u64,
            a.norch_args,
        )
    }
}
