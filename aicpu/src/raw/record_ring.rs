//! The record stream's memory (`PtoAicpuExecArgs::record_stream` and `records`) as a safe
//! view for the record pump: its control block's words as atomics, and its ring of records.
//! `setup` checks the addresses (non-null, aligned, a ring of at least one record) before
//! the pump asks for the view.

use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use pto_device_sys::abi::{PtoAicpuExecArgs, PtoRecordStream};
use pto_device_sys::chip::RecordWindow;
use pto_device_sys::raw::arch;
use pto_runtime_core::ffi::PtoRecord;

/// The record stream of a run: the control block the host reads and writes, the ring.
pub(crate) struct RecordRing {
    ctl: &'static PtoRecordStreamWords,
    ring: *mut PtoRecord,
    cap: u64,
    manual: bool,
}

/// [`PtoRecordStream`]'s words as the pump touches them (same layout).
#[repr(C, align(64))]
struct PtoRecordStreamWords {
    produced: AtomicU64,
    lost: AtomicU64,
    done: AtomicU32,
    reserved: u32,
    wait_us: AtomicU64,
    pad: [u64; 4],
    collected: AtomicU64,
    pad2: [u64; 7],
}

const _: () = {
    assert!(size_of::<PtoRecordStreamWords>() == size_of::<PtoRecordStream>());
    assert!(core::mem::offset_of!(PtoRecordStreamWords, collected) == PtoRecordStream::COLLECTED);
    assert!(core::mem::offset_of!(PtoRecordStreamWords, produced) == PtoRecordStream::PRODUCED);
};

impl RecordRing {
    /// The stream `a` names; `None` without one.
    pub(crate) fn of(a: &PtoAicpuExecArgs) -> Option<Self> {
        if a.record_stream == 0 || a.records == 0 || a.records_cap == 0 {
            return None;
        }
        // SAFETY: `record_stream` is non-null and 64-byte aligned (checked at setup) and names
        // a `PtoRecordStream` of device memory the host gave the run (the ABI's contract),
        // touched during the run only through these atomics here and the host's aligned
        // 8-byte copies of `produced` and `collected`.
        let ctl = unsafe { &*(a.record_stream as usize as *const PtoRecordStreamWords) };
        Some(RecordRing {
            ctl,
            ring: a.records as usize as *mut PtoRecord,
            cap: u64::from(a.records_cap),
            manual: a.coherence == 1,
        })
    }

    /// How long the host asked the pump to wait for it, µs.
    pub(crate) fn wait_us(&self) -> u64 {
        match self.ctl.wait_us.load(Ordering::Relaxed) {
            0 => PtoRecordStream::DEFAULT_WAIT_US,
            w => w,
        }
    }

    fn clean_ctl(&self) {
        if self.manual {
            arch::clean(self.ctl as *const PtoRecordStreamWords as usize, 64);
        }
    }
}

impl RecordWindow for RecordRing {
    fn capacity(&self) -> u64 {
        self.cap
    }

    fn collected(&self) -> u64 {
        if self.manual {
            arch::clean_invalidate(&self.ctl.collected as *const AtomicU64 as usize, 8);
        }
        self.ctl.collected.load(Ordering::Acquire)
    }

    fn write(&self, i: u64, r: &PtoRecord) {
        let p = self.ring.wrapping_add((i % self.cap) as usize);
        // SAFETY: `records` names `records_cap` records of device memory the host gave the
        // run (the ABI's contract); entry `i % cap` is the pump's alone until it publishes
        // `produced > i`, and the host has taken what was there before (the outlet's
        // check). An unaligned ring is written bytewise.
        unsafe { p.write_unaligned(*r) };
    }

    fn publish(&self, from: u64, to: u64) {
        if self.manual {
            let rec = size_of::<PtoRecord>();
            for i in from..to {
                let at = self.ring.wrapping_add((i % self.cap) as usize) as usize;
                arch::clean(at, rec);
            }
        }
        self.ctl.produced.store(to, Ordering::Release);
        self.clean_ctl();
    }

    fn close(&self, lost: u64) {
        self.ctl.lost.store(lost, Ordering::Relaxed);
        self.ctl.done.store(1, Ordering::Release);
        self.clean_ctl();
    }

    fn now(&self) -> u64 {
        arch::counter()
    }

    fn idle(&self) {
        crate::raw::cpu::idle();
    }
}

// SAFETY: the ring pointer is used by the pump thread alone; the control block's words are
// atomics.
unsafe impl Send for RecordRing {}
