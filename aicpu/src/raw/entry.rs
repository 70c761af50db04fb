//! The SO's exported entry points, with the shape CANN calls: `uint32_t (*)(void *)`. Each
//! checks its pointer, copies the block it names and hands the copy to `crate::entry`.

use core::ffi::c_void;

use pto_device_sys::abi::{PtoAicpuExecArgs, PtoAicpuInitArgs};

/// `init`: takes the clock and timeouts for the runs that follow ([`PtoAicpuInitArgs`]).
/// Once per launch sequence; calling it again replaces the settings (between runs only).
/// 0 on success; 1 for a null or foreign block; 2 when the clock's rate is unknown.
///
/// # Safety
/// `args` is null or points to a readable `PtoAicpuInitArgs`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pto_aicpu_init(args: *mut c_void) -> u32 {
    if args.is_null() {
        return 1;
    }
    // SAFETY: non-null; the caller's contract. Unaligned copies are accepted.
    let a = unsafe { (args as *const PtoAicpuInitArgs).read_unaligned() };
    crate::entry::init(&a)
}

/// `exec`: one thread's part in a run ([`PtoAicpuExecArgs`]), called on `threads` threads.
/// Returns 0 once the thread's part is done (the run's outcome is in the report); 1 for a
/// null or foreign block, or no report address; 2 before `init` (reported too); 3 for a
/// thread that took no part (arrivals closed: too many threads, or too late).
///
/// # Safety
/// `args` is null or points to a readable `PtoAicpuExecArgs` whose addresses follow its
/// documentation (device memory mapped for the run).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pto_aicpu_exec(args: *mut c_void) -> u32 {
    if args.is_null() {
        return 1;
    }
    // SAFETY: non-null; the caller's contract. CANN's copy may be unaligned.
    let a = unsafe { (args as *const PtoAicpuExecArgs).read_unaligned() };
    crate::entry::exec(&a)
}

/// `inject_fault` (feature `fault-injection`, the tests' builds only): arms a lost release
/// (`kind` 1) or a lost ready entry (2) for the next run, or disarms (0). 0 on success; 1
/// for a kind it does not know.
#[cfg(feature = "fault-injection")]
#[unsafe(no_mangle)]
pub extern "C" fn pto_aicpu_inject_fault(kind: u32) -> u32 {
    crate::fault::arm(kind)
}
