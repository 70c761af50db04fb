//! The SO's entry points, with the shape CANN calls: `uint32_t (*)(void *)`.
//!
//! One SO per device (CANN loads one inner SO per host process and device), so the SO's
//! state is the device's.

use core::ffi::c_void;

use pto_device_sys::abi::{
    PTO_AICPU_ABI, PtoAicpuCode, PtoAicpuExecArgs, PtoAicpuInitArgs, PtoAicpuReport,
};

use crate::run::write_report;

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
    if a.abi != PTO_AICPU_ABI {
        return 1;
    }
    if crate::settings::set(&a) { 0 } else { 2 }
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
    if a.abi != PTO_AICPU_ABI || a.report == 0 {
        return 1;
    }
    if !crate::cpu::allowed(a.cpu_mask) {
        return 0;
    }
    let Some(s) = crate::settings::get() else {
        let r = PtoAicpuReport {
            code: PtoAicpuCode::NotInitialized as u32,
            core: 0xffff,
            ..PtoAicpuReport::default()
        };
        write_report(&a, r);
        return 2;
    };
    if a.threads < 2 || a.threads > 64 {
        let r = PtoAicpuReport {
            code: PtoAicpuCode::BadArgs as u32,
            core: 0xffff,
            value: a.threads as u64,
            ..PtoAicpuReport::default()
        };
        write_report(&a, r);
        return 1;
    }
    crate::run::exec(&a, s)
}
