//! A run's first problem, as its report states it: a code, a core and a value.

use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use pto_device_sys::abi::PtoAicpuCode;
use pto_device_sys::chip::ChipError;

/// The first problem recorded in the current run; later ones are dropped.
pub(crate) struct Problem {
    code: AtomicU32,
    core: AtomicU32,
    value: AtomicU64,
}

impl Problem {
    /// None recorded.
    pub(crate) const fn new() -> Self {
        Problem {
            code: AtomicU32::new(0),
            core: AtomicU32::new(0xffff),
            value: AtomicU64::new(0),
        }
    }

    /// Records a problem, unless one was recorded before.
    pub(crate) fn record(&self, code: PtoAicpuCode, core: u32, value: u64) {
        if self
            .code
            .compare_exchange(0, code as u32, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            self.core.store(core, Ordering::Relaxed);
            self.value.store(value, Ordering::Relaxed);
        }
    }

    /// Records a core's handshake failure.
    pub(crate) fn record_chip(&self, e: ChipError) {
        let (code, core, value) = match e {
            ChipError::CoreNotUp { core, waited_us } => (PtoAicpuCode::CoreNotUp, core, waited_us),
            ChipError::BadCoreId { core, id } => (PtoAicpuCode::BadCoreId, core, id as u64),
            ChipError::WrongCoreType { core, got, .. } => {
                (PtoAicpuCode::WrongCoreType, core, got as u64)
            }
            ChipError::StaleCond { core, value } => (PtoAicpuCode::StaleCond, core, value as u64),
            ChipError::ExitNotAcked { core, cond, .. } => {
                (PtoAicpuCode::ExitNotAcked, core, cond as u64)
            }
        };
        self.record(code, core as u32, value);
    }

    /// Whether a problem was recorded.
    pub(crate) fn failed(&self) -> bool {
        self.code.load(Ordering::Acquire) != 0
    }

    /// The problem (code, core, value); code 0 for none.
    pub(crate) fn get(&self) -> (u32, u32, u64) {
        (
            self.code.load(Ordering::Acquire),
            self.core.load(Ordering::Relaxed),
            self.value.load(Ordering::Relaxed),
        )
    }

    /// Forgets it, for the next run.
    pub(crate) fn clear(&self) {
        self.code.store(0, Ordering::Relaxed);
        self.core.store(0xffff, Ordering::Relaxed);
        self.value.store(0, Ordering::Relaxed);
    }
}
