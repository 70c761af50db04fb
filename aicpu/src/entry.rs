//! What the SO's entry points do with the argument blocks they copied (`raw::entry` exports
//! them). One SO per device (CANN loads one inner SO per host process and device), so the
//! SO's state is the device's.

use pto_device_sys::abi::{
    PTO_AICPU_ABI, PtoAicpuCode, PtoAicpuExecArgs, PtoAicpuInitArgs, PtoAicpuReport,
};

use crate::raw::abi_memory::write_report;
use crate::state::SO;

/// `pto_aicpu_init` with its block: 0, or 1 for a foreign block, 2 for an unknown clock.
pub(crate) fn init(a: &PtoAicpuInitArgs) -> u32 {
    if a.abi != PTO_AICPU_ABI {
        return 1;
    }
    if SO.settings.set(a) { 0 } else { 2 }
}

/// `pto_aicpu_exec` with its block (see its codes there).
pub(crate) fn exec(a: &PtoAicpuExecArgs) -> u32 {
    if a.abi != PTO_AICPU_ABI || a.report == 0 {
        return 1;
    }
    if !crate::raw::cpu::allowed(a.cpu_mask) {
        return 0;
    }
    let Some(s) = SO.settings.get() else {
        let r = PtoAicpuReport {
            code: PtoAicpuCode::NotInitialized as u32,
            core: 0xffff,
            ..PtoAicpuReport::default()
        };
        write_report(a, r);
        return 2;
    };
    if a.threads < 2 || a.threads > 64 {
        let r = PtoAicpuReport {
            code: PtoAicpuCode::BadArgs as u32,
            core: 0xffff,
            value: a.threads as u64,
            ..PtoAicpuReport::default()
        };
        write_report(a, r);
        return 1;
    }
    crate::run::exec(a, s)
}
