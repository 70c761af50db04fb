//! The image's entry points, called by whatever loads the image on the AICPU (the
//! self-check, a launcher): one `pto_aicpu_init` with the region, the configuration and the
//! machine; then `pto_aicpu_scheduler` on each scheduler thread, `pto_aicpu_submit` and
//! `pto_aicpu_close` on the orchestrating thread, `pto_aicpu_report` at the end. Every entry
//! point checks its pointers and its state and returns a `PtoStatus`.
#![allow(unsafe_code)]

use core::ptr::NonNull;

use pto_device_sys::block::CoreBlock;
use pto_device_sys::raw::memory::{EngineWords, MemRange, WatchedMemory};
use pto_device_sys::raw::regs::CoreBlocks;
use pto_device_sys::{AicpuConfig, AicpuPlatform, Coherence};
use pto_runtime_core::ffi::{PtoConfig, PtoReport, PtoStatus, PtoTask, submit_c};
use pto_runtime_core::{Orchestrator, Runtime};
use spin::{Mutex, Once};

/// What the AICPU is given at init.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PtoAicpuArgs {
    /// The runtime's region: 64-byte aligned, at least the layout's size.
    pub region: *mut u8,
    /// Its bytes.
    pub region_len: usize,
    /// The configuration.
    pub config: PtoConfig,
    /// The cores' register blocks, `aic_cores + aiv_cores` of them, in core id order.
    pub blocks: *mut CoreBlock,
    /// Kernels `0..kernels` can be dispatched.
    pub kernels: u32,
    /// Counter ticks per microsecond; 0 reads the counter's frequency.
    pub ticks_per_us: u64,
    /// 0: caches coherent with the cores; 1: the image maintains them.
    pub coherence: u8,
    /// Device memory deferred counters may live in.
    pub watched: *const MemRange,
    /// How many ranges.
    pub nwatched: usize,
    /// The engines' completion watermarks.
    pub engines: *mut u64,
    /// How many engines.
    pub nengines: usize,
    /// The output heap: first byte and bytes (0, 0: none).
    pub heap: MemRange,
}

static PLATFORM: Once<AicpuPlatform<'static>> = Once::new();
static RUNTIME: Once<Runtime<'static>> = Once::new();
static ORCHESTRATOR: Mutex<Option<Orchestrator<'static, 'static, AicpuPlatform<'static>>>> =
    Mutex::new(None);

fn ready() -> Option<(&'static Runtime<'static>, &'static AicpuPlatform<'static>)> {
    Some((RUNTIME.get()?, PLATFORM.get()?))
}

/// Lays the runtime out and opens the orchestrator. Once per image: a second call is
/// refused with `PtoErrClaimed`.
///
/// # Safety
/// `args` is null or valid; its region, blocks, ranges and engine words are valid as its
/// fields say, for the rest of the image's life, and used by nothing else except the cores
/// (blocks) and the agents that write watched words.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pto_aicpu_init(args: *const PtoAicpuArgs) -> PtoStatus {
    if args.is_null() {
        return PtoStatus::PtoErrNull;
    }
    // SAFETY: non-null; the caller's contract.
    let a = unsafe { &*args };
    if a.region.is_null() || a.blocks.is_null() {
        return PtoStatus::PtoErrNull;
    }
    if (a.watched.is_null() && a.nwatched > 0) || (a.engines.is_null() && a.nengines > 0) {
        return PtoStatus::PtoErrNull;
    }
    if PLATFORM.is_completed() {
        return PtoStatus::PtoErrClaimed;
    }
    let Some(cfg) = a.config.to_config() else {
        return PtoStatus::PtoErrConfig;
    };
    if !(a.region as usize).is_multiple_of(64) {
        return PtoStatus::PtoErrConfig;
    }
    let cores = cfg.cores() as usize;
    // SAFETY: the caller gives `cores` blocks at `blocks` to the image for its life.
    let blocks = unsafe { CoreBlocks::new(NonNull::new_unchecked(a.blocks), cores) };
    let watched: &'static [MemRange] = if a.nwatched == 0 {
        &[]
    } else {
        // SAFETY: non-null, valid for `nwatched` ranges for the image's life.
        unsafe { core::slice::from_raw_parts(a.watched, a.nwatched) }
    };
    // SAFETY: the caller promises the ranges are mapped and readable.
    let memory = unsafe { WatchedMemory::new(watched) };
    let engines = match NonNull::new(a.engines) {
        // SAFETY: `nengines` words at `engines`, valid for the image's life.
        Some(p) => unsafe { EngineWords::new(p, a.nengines) },
        None => EngineWords::NONE,
    };
    let platform = AicpuPlatform::new(AicpuConfig {
        cores: blocks,
        memory,
        engines,
        kernels: a.kernels,
        ticks_per_us: (a.ticks_per_us > 0).then_some(a.ticks_per_us),
        coherence: if a.coherence == 1 {
            Coherence::Manual
        } else {
            Coherence::Coherent
        },
        heap: (a.heap.base, a.heap.len),
    });
    let Ok(platform) = platform else {
        return PtoStatus::PtoErrConfig;
    };
    // SAFETY: the caller gives the region to the runtime for the image's life.
    let region: &'static mut [u8] =
        unsafe { core::slice::from_raw_parts_mut(a.region, a.region_len) };
    let Ok(rt) = Runtime::init(region, cfg) else {
        return PtoStatus::PtoErrConfig;
    };
    let platform = PLATFORM.call_once(|| platform);
    let rt = RUNTIME.call_once(|| rt);
    match rt.orchestrator(platform) {
        Ok(o) => {
            *ORCHESTRATOR.lock() = Some(o);
            PtoStatus::PtoOk
        }
        Err(_) => PtoStatus::PtoErrClaimed,
    }
}

/// Submits `t`; its id goes to `id` (if not null).
///
/// # Safety
/// `t` is null or valid, its arrays valid for their counts; `id` is null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pto_aicpu_submit(t: *const PtoTask, id: *mut u64) -> PtoStatus {
    if t.is_null() {
        return PtoStatus::PtoErrNull;
    }
    let mut guard = ORCHESTRATOR.lock();
    let Some(o) = guard.as_mut() else {
        return PtoStatus::PtoErrClosed;
    };
    // SAFETY: the caller's contract on the task, its arrays and `id`.
    unsafe { submit_c(o, t, id) }
}

/// Ends the submissions: the schedulers stop once every task finished. A second call does
/// nothing.
#[unsafe(no_mangle)]
pub extern "C" fn pto_aicpu_close() -> PtoStatus {
    ORCHESTRATOR.lock().take();
    PtoStatus::PtoOk
}

/// Runs scheduler `index` on the calling AICPU thread until the run ends.
#[unsafe(no_mangle)]
pub extern "C" fn pto_aicpu_scheduler(index: u8) -> PtoStatus {
    let Some((rt, p)) = ready() else {
        return PtoStatus::PtoErrClosed;
    };
    let Ok(s) = rt.scheduler(index, p) else {
        return PtoStatus::PtoErrClaimed;
    };
    match s.run() {
        Ok(()) => PtoStatus::PtoOk,
        Err(_) => PtoStatus::PtoErrRun,
    }
}

/// What the run did, in `out`.
///
/// # Safety
/// `out` is null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pto_aicpu_report(out: *mut PtoReport) -> PtoStatus {
    if out.is_null() {
        return PtoStatus::PtoErrNull;
    }
    let Some((rt, _)) = ready() else {
        return PtoStatus::PtoErrClosed;
    };
    // SAFETY: non-null; the caller's contract.
    unsafe { out.write(PtoReport::from_report(&rt.report())) };
    PtoStatus::PtoOk
}
