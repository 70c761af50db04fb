//! Ticket 0 sets a run up: checks the arguments, opens every core through the chip's
//! handshake (one deadline for all), formats the runtime in the run's region and makes the
//! platform. Problems are recorded (`run::record`); cores opened before or despite a
//! problem stay in `run::CORES`, so the last out still sends them the exit.

use core::ptr::NonNull;

use pto_device_sys::Coherence;
use pto_device_sys::abi::{PTO_AICPU_ABI, PtoAicpuCode, PtoAicpuExecArgs};
use pto_device_sys::chip::layout::{CORE_AIC, CORE_AIV, Handshake, Slot};
use pto_device_sys::chip::{ChipConfig, ChipPlatform, OpenArgs, open_core};
use pto_device_sys::raw::arch;
use pto_device_sys::raw::chip::{HandshakeRef, RegTable, SlotPair};
use pto_device_sys::raw::memory::{EngineWords, MemRange, WatchedMemory};
use pto_runtime_core::Runtime;
use pto_runtime_core::ffi::PtoTensor;

use crate::run::{CORES, MAX_CORES, RUN, Run, record, record_chip};
use crate::settings::Settings;

/// Most register windows and kernels a run may name.
const MAX_REGS: u32 = 4096;
const MAX_KERNELS: u32 = 1 << 16;
/// Most watched memory ranges and engines a run may name.
const MAX_WATCHED: u32 = 256;
const MAX_ENGINES: u32 = 1024;

fn bad(value: u64) -> bool {
    record(PtoAicpuCode::BadArgs, 0xffff, value);
    false
}

/// Sets the run up; false if it cannot run (the reason is recorded).
pub(crate) fn setup(a: &PtoAicpuExecArgs, s: Settings, start: u64) -> bool {
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
    {
        return bad(3);
    }
    if a.nwatched > MAX_WATCHED
        || a.nengines > MAX_ENGINES
        || (a.watched == 0 && a.nwatched > 0)
        || (a.engines == 0 && a.nengines > 0)
        || (a.records == 0 && a.records_cap > 0)
    {
        return bad(5);
    }
    let Some(cfg) = a.config.to_config() else {
        record(PtoAicpuCode::BadConfig, 0xffff, 0);
        return false;
    };
    let cores = cfg.aic_cores as usize + cfg.aiv_cores as usize;
    let per_slot = cfg.max_tensors as usize;
    if cores > MAX_CORES {
        record(PtoAicpuCode::BadConfig, 0xffff, cores as u64);
        return false;
    }
    let coherence = if a.coherence == 1 {
        Coherence::Manual
    } else {
        Coherence::Coherent
    };
    // SAFETY: `regs` is non-null and aligned and names `nregs` words of device memory the
    // host filled with register window addresses (the ABI's contract), for the run.
    let regs = unsafe {
        RegTable::new(core::slice::from_raw_parts(
            a.regs as usize as *const u64,
            a.nregs as usize,
        ))
    };
    // SAFETY: ticket 0 alone touches the cores until it publishes the run's state.
    let opened = unsafe { &mut *CORES.get() };
    opened.clear();
    let limit = s.handshake_us.saturating_mul(s.ticks_per_us);
    for i in 0..cores {
        let hs = (a.handshakes as usize + i * size_of::<Handshake>()) as *mut Handshake;
        let slots = (a.slots as usize + i * 2 * size_of::<Slot>()) as *mut [Slot; 2];
        let (Some(hs), Some(slots)) = (NonNull::new(hs), NonNull::new(slots)) else {
            return bad(4);
        };
        // SAFETY: two slots per core at `slots` (the ABI's contract), shared with the
        // core only.
        let mut pair = unsafe { SlotPair::new(slots) };
        let descs = a.tensors as usize + i * 2 * per_slot * size_of::<PtoTensor>();
        if let Some(d) = NonNull::new(descs as *mut PtoTensor).filter(|_| a.tensors != 0) {
            // SAFETY: the host gives `2 * max_tensors` aligned descriptors per core at
            // `tensors` (the ABI's contract), read by that core only.
            pair = unsafe { pair.with_tensors(d, per_slot) };
        }
        let spent = arch::counter().wrapping_sub(start);
        let left_us = limit.saturating_sub(spent) / s.ticks_per_us;
        let args = OpenArgs {
            core: i as u16,
            // SAFETY: the host gives `cores` aligned handshake blocks at `handshakes`
            // (the ABI's contract), shared with the cores only.
            hs: unsafe { HandshakeRef::new(hs) },
            slots: pair,
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
                record_chip(e);
                if let Some(c) = c {
                    let _ = opened.push(c);
                }
            }
        }
    }
    if crate::run::failed() {
        return false;
    }
    // Checked once the cores are open, so that the last out sends them the exit.
    if a.threads != cfg.schedulers as u32 + 1 {
        record(PtoAicpuCode::BadConfig, 0xffff, a.threads as u64);
        return false;
    }
    if let Err(words) = ChipPlatform::fits(&cfg) {
        record(PtoAicpuCode::SlotTooSmall, 0xffff, words as u64);
        return false;
    }
    // SAFETY: the host gives the run `region_len` bytes of device memory at `region`, used
    // by nothing else during the run; the runtime is dropped before the run ends.
    let region = unsafe {
        core::slice::from_raw_parts_mut(a.region as usize as *mut u8, a.region_len as usize)
    };
    let rt = match Runtime::init(region, cfg) {
        Ok(rt) => rt,
        Err(_) => {
            record(PtoAicpuCode::BadConfig, 0xffff, a.region_len);
            return false;
        }
    };
    let kernels: &'static [u64] = if a.nkernels == 0 {
        &[]
    } else {
        // SAFETY: non-null, aligned, `nkernels` words the host wrote (the ABI's contract).
        unsafe {
            core::slice::from_raw_parts(a.kernels as usize as *const u64, a.nkernels as usize)
        }
    };
    // SAFETY: `opened` is a static filled above and not changed again until the last out
    // clears it, after the platform is dropped.
    let cores: &'static [_] = unsafe { (*CORES.get()).as_slice() };
    let ranges: &'static [MemRange] = if a.nwatched == 0 {
        &[]
    } else {
        // SAFETY: non-null, aligned, `nwatched` ranges the host wrote (the ABI's contract).
        unsafe {
            core::slice::from_raw_parts(a.watched as usize as *const MemRange, a.nwatched as usize)
        }
    };
    // SAFETY: the host names mapped device memory whose counters agents bump with
    // single aligned stores (the ABI's contract), for the run.
    let memory = unsafe { WatchedMemory::new(ranges) };
    let engines = match NonNull::new(a.engines as usize as *mut u64) {
        // SAFETY: `nengines` aligned watermark words at `engines` (the ABI's contract).
        Some(e) if a.nengines > 0 => unsafe { EngineWords::new(e, a.nengines as usize) },
        _ => EngineWords::NONE,
    };
    crate::run::STALLS.clear();
    let platform = ChipPlatform::new(ChipConfig {
        cores,
        kernels,
        memory,
        engines,
        stalls: Some(&crate::run::STALLS),
        ticks_per_us: s.ticks_per_us,
        coherence,
        heap: (a.heap_base, a.heap_len),
        // More threads than CPUs (the host harness): idle schedulers give their CPU away.
        idle: (crate::cpu::cpus() < a.threads as usize + cores.len())
            .then_some(crate::cpu::idle as fn()),
    });
    // SAFETY: ticket 0 alone writes the run, before it publishes READY.
    unsafe {
        *RUN.get() = Some(Run {
            rt,
            platform,
            args: *a,
            settings: s,
            start,
        })
    };
    true
}
