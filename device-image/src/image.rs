//! The image's self-check, through its own entry points: a runtime in the image's region,
//! register blocks for one AIC and two AIV cores, a DAG of tasks that need no core (so no
//! core has to answer), one scheduler. Returns 0 when every task finished, else which step
//! failed.
#![allow(unsafe_code)]

use pto_device_sys::block::CoreBlock;
use pto_device_sys::pto_info;
use pto_device_sys::raw::memory::MemRange;
use pto_runtime_core::ffi::{PtoConfig, PtoReport, PtoStatus, PtoTask};
use pto_runtime_core::{Config, RegionLayout};

use crate::entry::{
    PtoAicpuArgs, pto_aicpu_close, pto_aicpu_init, pto_aicpu_report, pto_aicpu_scheduler,
    pto_aicpu_submit,
};

/// Bytes of the image's runtime region.
const REGION_BYTES: usize = 256 << 10;

#[repr(C, align(64))]
struct Region([u8; REGION_BYTES]);

static mut REGION: Region = Region([0; REGION_BYTES]);
static mut BLOCKS: [CoreBlock; 3] = [CoreBlock::ZERO; 3];

/// Tasks of the self-check: a chain, a fan-out from its end, and a join.
const CHAIN: usize = 40;
const FAN: usize = 16;

/// Submits a task with no core and these dependencies; its id, or `None`.
fn dummy(deps: &[u64]) -> Option<u64> {
    let t = PtoTask {
        kernel: 0,
        class: 3,
        ring: 0,
        args: core::ptr::null(),
        nargs: 0,
        deps: deps.as_ptr(),
        ndeps: deps.len(),
    };
    let mut id = 0;
    // SAFETY: `t` and its dependency array are valid for the call; `id` is writable.
    (unsafe { pto_aicpu_submit(&t, &mut id) } == PtoStatus::PtoOk).then_some(id)
}

/// The self-check; `_start` calls it once, before anything else runs.
#[unsafe(no_mangle)]
pub extern "C" fn pto_aicpu_main() -> i32 {
    let cfg = Config {
        rings: 1,
        task_window: 64,
        max_deps: FAN as u16,
        max_args: 4,
        max_tensors: 4,
        aic_cores: 1,
        aiv_cores: 2,
        schedulers: 1,
        profile_capacity: 256,
        deferred_capacity: 64,
        ..Config::default()
    };
    match RegionLayout::new(&cfg) {
        Ok(l) if l.size() <= REGION_BYTES => {}
        _ => return 1,
    }
    let args = PtoAicpuArgs {
        region: (&raw mut REGION).cast(),
        region_len: REGION_BYTES,
        config: PtoConfig::from_config(&cfg),
        blocks: (&raw mut BLOCKS).cast(),
        kernels: 1,
        ticks_per_us: 0,
        coherence: 0,
        watched: core::ptr::null(),
        nwatched: 0,
        engines: core::ptr::null_mut(),
        nengines: 0,
        heap: MemRange::default(),
    };
    // SAFETY: the region and the blocks are the image's own statics, handed over once here
    // (nothing else uses them).
    if unsafe { pto_aicpu_init(&args) } != PtoStatus::PtoOk {
        return 2;
    }
    // SAFETY: as above: a second init is refused, not run.
    if unsafe { pto_aicpu_init(&args) } != PtoStatus::PtoErrClaimed {
        return 2;
    }
    let Some(mut prev) = dummy(&[]) else {
        return 4;
    };
    for _ in 1..CHAIN {
        let Some(t) = dummy(&[prev]) else {
            return 4;
        };
        prev = t;
    }
    let mut fan = [0u64; FAN];
    for f in &mut fan {
        let Some(t) = dummy(&[prev]) else {
            return 4;
        };
        *f = t;
    }
    if dummy(&fan).is_none() {
        return 4;
    }
    pto_aicpu_close();
    if pto_aicpu_scheduler(0) != PtoStatus::PtoOk {
        return 5;
    }
    let mut r = PtoReport::default();
    // SAFETY: `r` is writable.
    if unsafe { pto_aicpu_report(&mut r) } != PtoStatus::PtoOk {
        return 6;
    }
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
