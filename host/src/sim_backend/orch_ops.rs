//! The orchestration ABI's table of runtime operations (`PtoOrchOps`, as `libpto_aicpu.so`
//! hands it out on the chip) over the simulator's orchestrator: the same trampolines
//! (`pto_device_sys::orch_ops`), with no deadline of their own.
#![allow(unsafe_code)]

use pto_device_sys::abi::PtoOrchestrate;
use pto_sim::SimOrchestrator;

/// Calls `entry` with the operations over `o` and `args`; its return value.
pub fn orchestrate(o: &mut SimOrchestrator<'_, '_>, entry: PtoOrchestrate, args: &[u64]) -> i32 {
    let nargs = u32::try_from(args.len()).unwrap_or(u32::MAX);
    // SAFETY: `entry` is an orchestration function (the orchestration ABI's contract, as the
    // caller loaded it), and `args` holds `nargs` words for the call.
    unsafe { pto_device_sys::orch_ops::orchestrate(o, || true, entry, args.as_ptr(), nargs) }
}
