//! Ticket 0 sets a run up: checks the arguments, opens every core through the chip's
//! handshake (one deadline for all), formats the runtime in the run's region and makes the
//! platform. Problems are recorded (`So::problem`); cores opened before or despite a
//! problem stay in the run's cell, so the last out still sends them the exit.

use core::sync::atomic::{AtomicU32, AtomicU64};

use pto_device_sys::Coherence;
use pto_device_sys::abi::{PTO_AICPU_ABI, PtoAicpuCode, PtoAicpuExecArgs};
use pto_device_sys::chip::layout::{CORE_AIC, CORE_AIV};
use pto_device_sys::chip::{ChipConfig, ChipPlatform, OpenArgs, open_core};
use pto_device_sys::handoff::Setup;
use pto_device_sys::raw::arch;
use pto_runtime_core::Runtime;

use crate::raw::{abi_memory, record_ring};
use crate::run::{MAX_CORES, Run};
use crate::settings::Settings;
use crate::state::SO;

/// Most register windows and kernels a run may name.
const MAX_REGS: u32 = 4096;
const MAX_KERNELS: u32 = 1 << 16;
/// Most watched memory ranges and engines a run may name.
const MAX_WATCHED: u32 = 256;
const MAX_ENGINES: u32 = 1024;

fn bad(value: u64) -> bool {
    SO.problem.record(PtoAicpuCode::BadArgs, 0xffff, value);
    false
}

/// Sets the run up with ticket 0's `setup`; false if it cannot run (the reason is
/// recorded).
pub(crate) fn setup(a: &PtoAicpuExecArgs, s: Settings, start: u64, setup: &mut Setup<'_>) -> bool {
    if a.abi != PTO_AICPU_ABI {
        return bad(a.abi as u64);
    }
    if a.region == 0
        || a.handshakes == 0
        || a.slots == 0
        || a.regs == 0
        || (a.orchestrate == 0 && a.orch_so == 0)
        || (a.orch_so != 0 && a.orch_so_len == 0)
    {
        return bad(0);
    }
    if a.nregs > MAX_REGS || a.nkernels > MAX_KERNELS || (a.kernels == 0 && a.nkernels > 0) {
        return bad(1);
    }
    if (a.orch_args == 0 && a.norch_args > 0) || a.coherence > 1 {
        return bad(2);
    }
    if !a.handshakes.is_multiple_of(64)
        || !a.slots.is_multiple_of(64)
        || !a.regs.is_multiple_of(8)
        || !a.kernels.is_multiple_of(8)
        || !a.tensors.is_multiple_of(64)
        || !a.watched.is_multiple_of(8)
        || !a.engines.is_multiple_of(8)
        || !a.records.is_multiple_of(8)
        || !a.record_stream.is_multiple_of(64)
        || !a.producers.is_multiple_of(8)
        || !a.producer_stream.is_multiple_of(64)
    {
        return bad(3);
    }
    if a.nwatched > MAX_WATCHED
        || a.nengines > MAX_ENGINES
        || (a.watched == 0 && a.nwatched > 0)
        || (a.engines == 0 && a.nengines > 0)
        || (a.records == 0 && a.records_cap > 0)
        || (a.record_stream != 0 && a.records_cap == 0)
        || (a.producers == 0 && a.producers_cap > 0)
        || (a.producer_stream != 0 && a.producers_cap == 0)
    {
        return bad(5);
    }
    let Some(cfg) = a.config.to_config() else {
        SO.problem.record(PtoAicpuCode::BadConfig, 0xffff, 0);
        return false;
    };
    let cores = cfg.aic_cores as usize + cfg.aiv_cores as usize;
    let per_slot = cfg.max_tensors as usize;
    if cores > MAX_CORES {
        SO.problem
            .record(PtoAicpuCode::BadConfig, 0xffff, cores as u64);
        return false;
    }
    let coherence = if a.coherence == 1 {
        Coherence::Manual
    } else {
        Coherence::Coherent
    };
    let regs = abi_memory::regs(a);
    let opened = SO.run.cores_mut(setup);
    opened.clear();
    let limit = s.handshake_us.saturating_mul(s.ticks_per_us);
    for i in 0..cores {
        let Some((hs, slots)) = abi_memory::core_ends(a, i, per_slot) else {
            return bad(4);
        };
        let spent = arch::counter().wrapping_sub(start);
        let left_us = limit.saturating_sub(spent) / s.ticks_per_us;
        let args = OpenArgs {
            core: i as u16,
            hs,
            slots,
            regs,
            want_type: if i < cfg.aic_cores as usize {
                CORE_AIC
            } else {
                CORE_AIV
            },
            ticks_per_us: s.ticks_per_us,
            timeout_us: left_us,
            coherence,
        };
        match open_core(args) {
            Ok(c) => {
                let _ = opened.push(c);
            }
            Err((e, c)) => {
                SO.problem.record_chip(e);
                if let Some(c) = c {
                    let _ = opened.push(c);
                }
            }
        }
    }
    if SO.problem.failed() {
        return false;
    }
    // Checked once the cores are open, so that the last out sends them the exit.
    let pump = u32::from(a.record_stream != 0);
    if a.threads != cfg.schedulers as u32 + 1 + pump {
        SO.problem
            .record(PtoAicpuCode::BadConfig, 0xffff, a.threads as u64);
        return false;
    }
    if let Err(words) = ChipPlatform::fits(&cfg) {
        SO.problem
            .record(PtoAicpuCode::SlotTooSmall, 0xffff, words as u64);
        return false;
    }
    let region = abi_memory::region(a);
    let rt = match Runtime::init(region, cfg) {
        Ok(rt) => rt,
        Err(_) => {
            SO.problem
                .record(PtoAicpuCode::BadConfig, 0xffff, a.region_len);
            return false;
        }
    };
    // Before the first submit, so the ring streams from its first record.
    let drain = if pump == 1 { rt.record_drain() } else { None };
    let schedulers = cfg.schedulers as u32;
    SO.stalls.clear();
    if let Some(ring) = record_ring::producers(a) {
        let wait = ring.wait_us().saturating_mul(s.ticks_per_us);
        SO.producers
            .open(ring.with_idle(Some(crate::raw::cpu::idle)), wait);
    }
    let threads = a.threads as usize;
    SO.run.install(setup, |cores| {
        let platform = ChipPlatform::new(ChipConfig {
            cores,
            kernels: abi_memory::kernels(a),
            memory: abi_memory::watched(a),
            engines: abi_memory::engines(a),
            stalls: Some(&SO.stalls),
            ticks_per_us: s.ticks_per_us,
            coherence,
            heap: (a.heap_base, a.heap_len),
            // More threads than CPUs (the host harness): idle schedulers give their CPU
            // away.
            idle: (crate::raw::cpu::cpus() < threads + cores.len())
                .then_some(crate::raw::cpu::idle as fn()),
            producers: Some(&SO.producers),
        });
        Run {
            rt,
            platform,
            args: *a,
            settings: s,
            start,
            drain: spin::Mutex::new(drain),
            schedulers_left: AtomicU32::new(schedulers),
            pumped: AtomicU64::new(0),
            pump_lost: AtomicU64::new(0),
        }
    });
    true
}
