//! The entry points. Each checks its pointers, never unwinds into C, and returns a
//! [`PtoStatus`]. Handles live in storage the C caller owns ([`PtoRuntime`],
//! [`PtoOrchestrator`]); an open handle must not be moved or copied.
#![allow(unsafe_code)]

use core::mem::{align_of, size_of};

use pto_runtime_core::{Config, Orchestrator, RegionLayout, Runtime};

use crate::platform::CPlatform;
use crate::types::{
    PtoConfig, PtoOrchestrator, PtoPlatform, PtoReport, PtoRuntime, PtoStatus, PtoTask,
    PtoTensorArg,
};

type RtSlot = Option<Runtime<'static>>;

/// The orchestrator and the platform it borrows, side by side in the caller's storage (the
/// storage does not move while open, so the borrow stays valid).
struct OrchSlot {
    orch: Option<Orchestrator<'static, 'static, CPlatform>>,
    platform: CPlatform,
}

const _: () = {
    assert!(size_of::<RtSlot>() <= size_of::<PtoRuntime>());
    assert!(align_of::<RtSlot>() <= align_of::<PtoRuntime>());
    assert!(size_of::<Option<OrchSlot>>() <= size_of::<PtoOrchestrator>());
    assert!(align_of::<Option<OrchSlot>>() <= align_of::<PtoOrchestrator>());
};

/// Writes the default configuration into `out`.
///
/// # Safety
/// `out` is null or valid for a write of a `PtoConfig`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pto_config_default(out: *mut PtoConfig) -> PtoStatus {
    if out.is_null() {
        return PtoStatus::PtoErrNull;
    }
    // SAFETY: checked non-null; the caller's contract makes it valid.
    unsafe { out.write(PtoConfig::from_config(&Config::default())) };
    PtoStatus::PtoOk
}

/// The region bytes `cfg` needs, in `out`.
///
/// # Safety
/// Each pointer is null or valid (`cfg` for a read, `out` for a write).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pto_region_size(cfg: *const PtoConfig, out: *mut usize) -> PtoStatus {
    if cfg.is_null() || out.is_null() {
        return PtoStatus::PtoErrNull;
    }
    // SAFETY: checked non-null; the caller's contract.
    let Some(c) = (unsafe { &*cfg }).to_config() else {
        return PtoStatus::PtoErrConfig;
    };
    match RegionLayout::new(&c) {
        Ok(l) => {
            // SAFETY: checked non-null; the caller's contract.
            unsafe { out.write(l.size()) };
            PtoStatus::PtoOk
        }
        Err(_) => PtoStatus::PtoErrConfig,
    }
}

/// Lays out a runtime for `cfg` in `region` (`len` bytes, 64-byte aligned, at least
/// `pto_region_size`) and opens `rt` on it.
///
/// # Safety
/// `rt` is null or valid for writes of a `PtoRuntime` and not open; `region` is null or
/// valid for reads and writes of `len` bytes, used by nothing else, until
/// `pto_runtime_fini`; `cfg` is null or valid for a read.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pto_runtime_init(
    rt: *mut PtoRuntime,
    region: *mut u8,
    len: usize,
    cfg: *const PtoConfig,
) -> PtoStatus {
    if rt.is_null() || region.is_null() || cfg.is_null() {
        return PtoStatus::PtoErrNull;
    }
    // SAFETY: checked non-null; the caller's contract.
    let Some(c) = (unsafe { &*cfg }).to_config() else {
        return PtoStatus::PtoErrConfig;
    };
    if !(region as usize).is_multiple_of(64) {
        return PtoStatus::PtoErrConfig;
    }
    // SAFETY: the caller gives `len` bytes at `region` to the runtime until fini.
    let bytes: &'static mut [u8] = unsafe { core::slice::from_raw_parts_mut(region, len) };
    let Ok(r) = Runtime::init(bytes, c) else {
        return PtoStatus::PtoErrConfig;
    };
    // SAFETY: `rt` is valid for a write of its storage, which is large and aligned enough
    // for an `RtSlot` (checked at compile time).
    unsafe { (rt as *mut RtSlot).write(Some(r)) };
    PtoStatus::PtoOk
}

/// The runtime open in `rt`.
///
/// # Safety
/// `rt` is valid and was initialised by `pto_runtime_init`.
pub(crate) unsafe fn runtime<'a>(rt: *const PtoRuntime) -> Option<&'a Runtime<'static>> {
    // SAFETY: the caller's contract: the storage holds an `RtSlot`.
    unsafe { (*(rt as *const RtSlot)).as_ref() }
}

/// Closes the runtime in `rt`; the region is the caller's again. A second call does nothing.
///
/// # Safety
/// `rt` is null, or was initialised by `pto_runtime_init`; no orchestrator or scheduler of
/// it is still open or running.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pto_runtime_fini(rt: *mut PtoRuntime) -> PtoStatus {
    if rt.is_null() {
        return PtoStatus::PtoErrNull;
    }
    // SAFETY: the caller's contract: the storage holds an `RtSlot`, and nothing borrows it.
    unsafe { (*(rt as *mut RtSlot)).take() };
    PtoStatus::PtoOk
}

/// What the run did, in `out` (exact once every thread stopped).
///
/// # Safety
/// `rt` is null or initialised; `out` is null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pto_runtime_report(
    rt: *const PtoRuntime,
    out: *mut PtoReport,
) -> PtoStatus {
    if rt.is_null() || out.is_null() {
        return PtoStatus::PtoErrNull;
    }
    // SAFETY: the caller's contract.
    let Some(r) = (unsafe { runtime(rt) }) else {
        return PtoStatus::PtoErrClosed;
    };
    let report = PtoReport::from_report(&r.report());
    // SAFETY: checked non-null; the caller's contract.
    unsafe { out.write(report) };
    PtoStatus::PtoOk
}

/// Fails the run with `code`; every thread stops promptly.
///
/// # Safety
/// `rt` is null or initialised.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pto_runtime_abort(rt: *const PtoRuntime, code: u64) -> PtoStatus {
    if rt.is_null() {
        return PtoStatus::PtoErrNull;
    }
    // SAFETY: the caller's contract.
    match unsafe { runtime(rt) } {
        Some(r) => {
            r.abort(code);
            PtoStatus::PtoOk
        }
        None => PtoStatus::PtoErrClosed,
    }
}

/// Opens the runtime's orchestrator in `o`, on the machine `p` (copied).
///
/// # Safety
/// `o` is null or valid for writes of a `PtoOrchestrator`, not open, and not moved until
/// closed; `rt` is null or initialised and outlives `o`; `p` is null or valid for a read.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pto_orchestrator_open(
    o: *mut PtoOrchestrator,
    rt: *const PtoRuntime,
    p: *const PtoPlatform,
) -> PtoStatus {
    if o.is_null() || rt.is_null() || p.is_null() {
        return PtoStatus::PtoErrNull;
    }
    // SAFETY: the caller's contract.
    let Some(r) = (unsafe { runtime(rt) }) else {
        return PtoStatus::PtoErrClosed;
    };
    // SAFETY: checked non-null; the caller's contract.
    let Some(platform) = CPlatform::new(unsafe { &*p }) else {
        return PtoStatus::PtoErrNull;
    };
    let slot = o as *mut Option<OrchSlot>;
    // SAFETY: the storage is large and aligned enough (checked at compile time) and valid
    // for writes; the platform is placed first, then borrowed for as long as the storage
    // stays open and unmoved (the caller's contract).
    unsafe {
        slot.write(Some(OrchSlot {
            orch: None,
            platform,
        }));
        let s = (*slot).as_mut().unwrap_unchecked();
        let pp: *const CPlatform = &raw const s.platform;
        let platform: &'static CPlatform = &*pp;
        match r.orchestrator(platform) {
            Ok(orch) => {
                s.orch = Some(orch);
                PtoStatus::PtoOk
            }
            Err(_) => {
                slot.write(None);
                PtoStatus::PtoErrClaimed
            }
        }
    }
}

/// The orchestrator open in `o`: `PtoErrNull` for a null `o`, `PtoErrClosed` if not open.
///
/// # Safety
/// `o` is null or was opened by `pto_orchestrator_open` (and is not used by another thread).
pub(crate) unsafe fn orchestrator<'a>(
    o: *mut PtoOrchestrator,
) -> Result<&'a mut Orchestrator<'static, 'static, CPlatform>, PtoStatus> {
    if o.is_null() {
        return Err(PtoStatus::PtoErrNull);
    }
    // SAFETY: the caller's contract: `o` was opened, so it holds an `Option<OrchSlot>`.
    (unsafe { (*(o as *mut Option<OrchSlot>)).as_mut() })
        .and_then(|s| s.orch.as_mut())
        .ok_or(PtoStatus::PtoErrClosed)
}

/// Submits `t`; its id goes to `id` (if not null). `PtoOk`, or the status of the reason
/// it was refused (one per `SubmitError` variant; nothing of the task was kept).
///
/// # Safety
/// `o` is null or open; `t` is null or valid for a read, its `args`, `deps` and `tensors`
/// valid for `nargs`, `ndeps` and `ntensors` elements; `id` is null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pto_submit(
    o: *mut PtoOrchestrator,
    t: *const PtoTask,
    id: *mut u64,
) -> PtoStatus {
    if t.is_null() {
        return PtoStatus::PtoErrNull;
    }
    // SAFETY: the caller's contract: `o` was opened.
    let orch = match unsafe { orchestrator(o) } {
        Ok(orch) => orch,
        Err(e) => return e,
    };
    // SAFETY: the caller's contract on the task, its arrays and `id`.
    unsafe { pto_runtime_core::ffi::submit_c(orch, t, id) }
}

/// Waits until no task submitted so far still works on the tile `arg` names (for a read,
/// the tasks writing it; for a write, those reading it too), bounded by the submit
/// timeout, so the caller may read or write its bytes itself. `PtoOk`, or why not
/// (`PtoErrTileBusy`, `PtoErrTileCancelled`, `PtoErrBadTensor`).
///
/// # Safety
/// `o` is null or open; `arg` is null or valid for a read.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pto_settle(
    o: *mut PtoOrchestrator,
    arg: *const PtoTensorArg,
) -> PtoStatus {
    // SAFETY: the caller's contract: `o` was opened.
    match unsafe { orchestrator(o) } {
        // SAFETY: the caller's contract on `arg`.
        Ok(orch) => unsafe { pto_runtime_core::ffi::settle_c(orch, arg) },
        Err(e) => e,
    }
}

/// Says the caller wrote the tile `arg` names (after `pto_settle`), before it submits the
/// tasks that read it.
///
/// # Safety
/// `o` is null or open; `arg` is null or valid for a read.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pto_wrote(o: *mut PtoOrchestrator, arg: *const PtoTensorArg) -> PtoStatus {
    // SAFETY: the caller's contract: `o` was opened.
    match unsafe { orchestrator(o) } {
        // SAFETY: the caller's contract on `arg`.
        Ok(orch) => unsafe { pto_runtime_core::ffi::wrote_c(orch, arg) },
        Err(e) => e,
    }
}

/// Closes the orchestrator: nothing more will be submitted, and the schedulers stop once
/// every task finished. A second call does nothing.
///
/// # Safety
/// `o` is null or was opened by `pto_orchestrator_open`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pto_orchestrator_close(o: *mut PtoOrchestrator) -> PtoStatus {
    if o.is_null() {
        return PtoStatus::PtoErrNull;
    }
    // SAFETY: the caller's contract: the storage holds an `Option<OrchSlot>`. The
    // orchestrator drops before the platform it borrows.
    unsafe {
        if let Some(s) = (*(o as *mut Option<OrchSlot>)).as_mut() {
            s.orch.take();
        }
        (*(o as *mut Option<OrchSlot>)).take();
    }
    PtoStatus::PtoOk
}

/// Runs scheduler `index` on the calling thread until the run ends: `PtoOk` when every
/// task finished, `PtoErrRun` when it failed (see `pto_runtime_report`).
///
/// # Safety
/// `rt` is null or initialised; `p` is null or valid for a read.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pto_scheduler_run(
    rt: *const PtoRuntime,
    p: *const PtoPlatform,
    index: u8,
) -> PtoStatus {
    if rt.is_null() || p.is_null() {
        return PtoStatus::PtoErrNull;
    }
    // SAFETY: the caller's contract.
    let Some(r) = (unsafe { runtime(rt) }) else {
        return PtoStatus::PtoErrClosed;
    };
    // SAFETY: checked non-null; the caller's contract.
    let Some(platform) = CPlatform::new(unsafe { &*p }) else {
        return PtoStatus::PtoErrNull;
    };
    let Ok(s) = r.scheduler(index, &platform) else {
        return PtoStatus::PtoErrClaimed;
    };
    match s.run() {
        Ok(()) => PtoStatus::PtoOk,
        Err(_) => PtoStatus::PtoErrRun,
    }
}
