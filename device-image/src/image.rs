//! The image's self-check over the scheduler core and the AICPU platform: a runtime in the
//! image's own region, register blocks for one AIC and two AIV cores, a DAG of tasks that
//! need no core (so no core has to answer), one scheduler. Returns 0 when every task
//! finished, else which step failed.
#![allow(unsafe_code)]

use core::ptr::NonNull;

use pto_device_sys::block::CoreBlock;
use pto_device_sys::raw::memory::{EngineWords, WatchedMemory};
use pto_device_sys::raw::regs::CoreBlocks;
use pto_device_sys::{AicpuConfig, AicpuPlatform, Coherence, pto_info};
use pto_runtime_core::{Config, RegionLayout, Runtime, TaskId, TaskSpec};

/// Bytes of the image's runtime region.
const REGION_BYTES: usize = 256 << 10;

#[repr(C, align(64))]
struct Region([u8; REGION_BYTES]);

static mut REGION: Region = Region([0; REGION_BYTES]);
static mut BLOCKS: [CoreBlock; 3] = [CoreBlock::ZERO; 3];

/// Tasks of the self-check: a chain, a fan-out from its end, and a join.
const CHAIN: usize = 40;
const FAN: usize = 16;

/// The self-check; `_start` calls it once, before anything else runs.
#[unsafe(no_mangle)]
pub extern "C" fn pto_aicpu_main() -> i32 {
    let cfg = Config {
        rings: 1,
        task_window: 64,
        max_deps: FAN as u16,
        max_args: 4,
        aic_cores: 1,
        aiv_cores: 2,
        schedulers: 1,
        max_tensors: 4,
        profile_capacity: 256,
        deferred_capacity: 64,
        ..Config::default()
    };
    let Ok(layout) = RegionLayout::new(&cfg) else {
        return 1;
    };
    if layout.size() > REGION_BYTES {
        return 1;
    }
    let region_ptr = &raw mut REGION;
    // SAFETY: `_start` calls this function once and alone, so this is the only reference
    // to the region ever made.
    let whole: &'static mut [u8; REGION_BYTES] = unsafe { &mut (*region_ptr).0 };
    let region = &mut whole[..layout.size()];
    let Ok(rt) = Runtime::init(region, cfg) else {
        return 2;
    };
    // SAFETY: the three blocks are the image's own zeroed statics, touched only through
    // this handle (nothing else runs).
    let blocks = unsafe { CoreBlocks::new(NonNull::new_unchecked(&raw mut BLOCKS).cast(), 3) };
    let Ok(p) = AicpuPlatform::new(AicpuConfig {
        cores: blocks,
        memory: WatchedMemory::NONE,
        engines: EngineWords::NONE,
        kernels: 1,
        ticks_per_us: None,
        coherence: Coherence::Coherent,
        heap: (0, 0),
    }) else {
        return 3;
    };
    {
        let Ok(mut o) = rt.orchestrator(&p) else {
            return 4;
        };
        let mut prev = match o.submit(&TaskSpec::dummy()) {
            Ok(t) => t,
            Err(_) => return 4,
        };
        for _ in 1..CHAIN {
            match o.submit(&TaskSpec::dummy().deps(&[prev])) {
                Ok(t) => prev = t,
                Err(_) => return 4,
            }
        }
        let mut fan = [prev; FAN];
        for f in &mut fan {
            match o.submit(&TaskSpec::dummy().deps(&[prev])) {
                Ok(t) => *f = t,
                Err(_) => return 4,
            }
        }
        let join: &[TaskId] = &fan;
        if o.submit(&TaskSpec::dummy().deps(join)).is_err() {
            return 4;
        }
    }
    let Ok(s) = rt.scheduler(0, &p) else {
        return 5;
    };
    if s.run().is_err() {
        return 5;
    }
    let r = rt.report();
    let want = (CHAIN + FAN + 1) as u64;
    pto_info!(
        "self-check: {} of {} tasks finished, {} slots live",
        r.finished,
        want,
        r.live_slots
    );
    if r.finished != want || r.live_slots != 0 {
        return 6;
    }
    0
}
