//! The device memory an exec argument block names, as safe views. The ABI's contract
//! (`pto_device_sys::abi::PtoAicpuExecArgs`) is that every address names device memory the
//! host mapped and filled for the run; `setup` checks what can be checked (non-null, aligned,
//! bounded counts) before it asks for a view.

use core::ptr::NonNull;

use pto_device_sys::abi::{PtoAicpuExecArgs, PtoAicpuReport};
use pto_device_sys::chip::layout::{Handshake, Slot};
use pto_device_sys::raw::arch;
use pto_device_sys::raw::chip::{HandshakeRef, RegTable, SlotPair};
use pto_device_sys::raw::memory::{EngineWords, MemRange, WatchedMemory};
use pto_runtime_core::Runtime;
use pto_runtime_core::ffi::{PtoRecord, PtoTensor, records_c};

/// Writes `r` where the run's arguments say (`report`, non-null: `exec` checks).
pub(crate) fn write_report(a: &PtoAicpuExecArgs, r: PtoAicpuReport) {
    let p = a.report as usize as *mut PtoAicpuReport;
    // SAFETY: `report` is non-null (checked by `exec`) and names device memory the host
    // gave for the report (the ABI's contract); an unaligned one is written bytewise.
    unsafe { p.write_unaligned(r) };
    if a.coherence == 1 {
        arch::clean(p as usize, size_of::<PtoAicpuReport>());
    }
}

/// Copies `rt`'s task records where the run's arguments say: (copied, held in all).
pub(crate) fn copy_records(rt: &Runtime<'_>, a: &PtoAicpuExecArgs) -> (u32, u32) {
    let out = a.records as usize as *mut PtoRecord;
    let (mut n, mut total) = (0usize, 0usize);
    // SAFETY: `records` is null (cap 0, checked at setup) or names `records_cap` aligned
    // records of device memory the host gave for them (the ABI's contract).
    unsafe { records_c(rt, out, a.records_cap as usize, &raw mut n, &raw mut total) };
    if a.coherence == 1 && n > 0 {
        arch::clean(out as usize, n * size_of::<PtoRecord>());
    }
    (n as u32, total.min(u32::MAX as usize) as u32)
}

/// The register window table (`regs`, non-null and aligned: checked at setup).
pub(crate) fn regs(a: &PtoAicpuExecArgs) -> RegTable<'static> {
    // SAFETY: `regs` is non-null and aligned and names `nregs` words of device memory the
    // host filled with register window addresses (the ABI's contract), for the run.
    unsafe {
        RegTable::new(core::slice::from_raw_parts(
            a.regs as usize as *const u64,
            a.nregs as usize,
        ))
    }
}

/// Core `i`'s handshake block and payload slots (with `per_slot` tensor descriptors each
/// when `tensors` is given); `None` for a null address. The bases are aligned (checked at
/// setup).
pub(crate) fn core_ends(
    a: &PtoAicpuExecArgs,
    i: usize,
    per_slot: usize,
) -> Option<(HandshakeRef<'static>, SlotPair<'static>)> {
    let hs = (a.handshakes as usize + i * size_of::<Handshake>()) as *mut Handshake;
    let slots = (a.slots as usize + i * 2 * size_of::<Slot>()) as *mut [Slot; 2];
    let (hs, slots) = (NonNull::new(hs)?, NonNull::new(slots)?);
    // SAFETY: two slots per core at `slots` (the ABI's contract), shared with the core only.
    let mut pair = unsafe { SlotPair::new(slots) };
    let descs = a.tensors as usize + i * 2 * per_slot * size_of::<PtoTensor>();
    if let Some(d) = NonNull::new(descs as *mut PtoTensor).filter(|_| a.tensors != 0) {
        // SAFETY: the host gives `2 * max_tensors` aligned descriptors per core at
        // `tensors` (the ABI's contract), read by that core only.
        pair = unsafe { pair.with_tensors(d, per_slot) };
    }
    // SAFETY: the host gives the cores aligned handshake blocks at `handshakes` (the ABI's
    // contract), shared with the cores only.
    Some((unsafe { HandshakeRef::new(hs) }, pair))
}

/// The run's region (`region`, non-null: checked at setup). Ticket 0 takes it once per run.
pub(crate) fn region(a: &PtoAicpuExecArgs) -> &'static mut [u8] {
    // SAFETY: the host gives the run `region_len` bytes of device memory at `region`, used
    // by nothing else during the run; ticket 0 takes it once, and the runtime over it is
    // dropped before the run ends.
    unsafe { core::slice::from_raw_parts_mut(a.region as usize as *mut u8, a.region_len as usize) }
}

/// The kernels' device addresses by id (`kernels` non-null and aligned when any: checked
/// at setup).
pub(crate) fn kernels(a: &PtoAicpuExecArgs) -> &'static [u64] {
    if a.nkernels == 0 {
        return &[];
    }
    // SAFETY: non-null, aligned, `nkernels` words the host wrote (the ABI's contract).
    unsafe { core::slice::from_raw_parts(a.kernels as usize as *const u64, a.nkernels as usize) }
}

/// The memory deferred counters may live in (`watched` non-null and aligned when any:
/// checked at setup).
pub(crate) fn watched(a: &PtoAicpuExecArgs) -> WatchedMemory<'static> {
    let ranges: &'static [MemRange] = if a.nwatched == 0 {
        &[]
    } else {
        // SAFETY: non-null, aligned, `nwatched` ranges the host wrote (the ABI's contract).
        unsafe {
            core::slice::from_raw_parts(a.watched as usize as *const MemRange, a.nwatched as usize)
        }
    };
    // SAFETY: the host names mapped device memory whose counters agents bump with single
    // aligned stores (the ABI's contract), for the run.
    unsafe { WatchedMemory::new(ranges) }
}

/// The engines' watermark words (`engines` aligned: checked at setup).
pub(crate) fn engines(a: &PtoAicpuExecArgs) -> EngineWords<'static> {
    match NonNull::new(a.engines as usize as *mut u64) {
        // SAFETY: `nengines` aligned watermark words at `engines` (the ABI's contract).
        Some(e) if a.nengines > 0 => unsafe { EngineWords::new(e, a.nengines as usize) },
        _ => EngineWords::NONE,
    }
}
