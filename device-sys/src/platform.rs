//! `AicpuPlatform`: the scheduler core's [`Platform`] on the AICPU, over the cores' register
//! blocks, the system counter and the words deferred completions watch.
//!
//! Dispatch: the payload goes into the slot the token's parity selects, a release barrier
//! follows (after writing the slot back to memory when caches are not coherent with the
//! cores), then the token goes into that slot's doorbell. Completion: the status word is
//! read (after discarding a stale cached copy), then an acquire barrier, so what the kernel
//! wrote before FIN is visible.
#![forbid(unsafe_code)]

use pto_runtime_core::{
    CoreId, KernelId, Payload, Platform, RawCondition, ResultWord, StatusWord, Token, Watch,
};

use crate::raw::arch;
use crate::raw::memory::{EngineWords, WatchedMemory};
use crate::raw::regs::CoreBlocks;

/// Whether the AICPU's caches see what the cores write without maintenance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Coherence {
    /// Hardware keeps them coherent: no cache maintenance.
    Coherent,
    /// Write payloads back before ringing, discard status lines, condition slabs and
    /// watched words before reading them.
    Manual,
}

/// Why an `AicpuPlatform` could not be made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlatformError {
    /// The counter's frequency is unknown (not aarch64) and none was given.
    UnknownClock,
    /// A frequency below 1 MHz (the scheduler counts whole ticks per microsecond).
    SlowClock(u64),
}

impl core::fmt::Display for PlatformError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            PlatformError::UnknownClock => write!(
                f,
                "the system counter's frequency is unknown on this CPU: pass ticks_per_us"
            ),
            PlatformError::SlowClock(hz) => write!(
                f,
                "a system counter of {hz} Hz is below the 1 MHz the scheduler needs"
            ),
        }
    }
}

/// What the AICPU platform is given at init.
#[derive(Clone, Copy, Debug)]
pub struct AicpuConfig<'a> {
    /// The cores' register blocks, in core id order.
    pub cores: CoreBlocks<'a>,
    /// Device memory deferred counters may live in.
    pub memory: WatchedMemory<'a>,
    /// The engines' completion watermarks.
    pub engines: EngineWords<'a>,
    /// Kernels `0..kernels` can be dispatched.
    pub kernels: u32,
    /// Counter ticks per microsecond; `None` reads the counter's frequency (aarch64).
    pub ticks_per_us: Option<u64>,
    /// Cache maintenance towards the cores.
    pub coherence: Coherence,
    /// The output heap in device memory: base and length (`(0, 0)`: none).
    pub heap: (u64, u64),
}

/// The scheduler's view of the AICPU.
#[derive(Debug)]
pub struct AicpuPlatform<'a> {
    cfg: AicpuConfig<'a>,
    ticks_per_us: u64,
}

impl<'a> AicpuPlatform<'a> {
    /// The platform for `cfg`.
    pub fn new(cfg: AicpuConfig<'a>) -> Result<Self, PlatformError> {
        let ticks_per_us = match cfg.ticks_per_us {
            Some(t) => t,
            None => {
                let hz = arch::counter_frequency().ok_or(PlatformError::UnknownClock)?;
                if hz < 1_000_000 {
                    return Err(PlatformError::SlowClock(hz));
                }
                hz / 1_000_000
            }
        };
        if ticks_per_us == 0 {
            return Err(PlatformError::SlowClock(0));
        }
        Ok(AicpuPlatform { cfg, ticks_per_us })
    }

    fn manual(&self) -> bool {
        self.cfg.coherence == Coherence::Manual
    }
}

fn parity(token: Token) -> usize {
    (token.bits() & 1) as usize
}

impl Platform for AicpuPlatform<'_> {
    fn now(&self) -> u64 {
        arch::counter()
    }

    fn ticks_per_us(&self) -> u64 {
        self.ticks_per_us
    }

    fn has_kernel(&self, kernel: KernelId) -> bool {
        kernel.0 < self.cfg.kernels
    }

    fn write_payload(&self, core: CoreId, token: Token, payload: &Payload<'_>) {
        let Some(c) = self.cfg.cores.core(core.0 as usize) else {
            return;
        };
        let n = payload.args.len().min(crate::block::SLOT_ARGS);
        let shape = payload.lane as u32
            | (payload.lanes as u32) << 8
            | (n as u32) << 16
            | (payload.profile as u32) << 24;
        c.write_payload(
            parity(token),
            payload.task.raw(),
            payload.kernel.0,
            shape,
            &payload.args[..n],
        );
    }

    fn ring_doorbell(&self, core: CoreId, token: Token) {
        let Some(c) = self.cfg.cores.core(core.0 as usize) else {
            return;
        };
        let p = parity(token);
        if self.manual() {
            let (a, l) = c.payload_range(p);
            arch::clean(a, l);
        }
        arch::device_barrier();
        c.ring(p, token.bits());
        if self.manual() {
            let (a, l) = c.payload_range(p);
            arch::clean(a, l.min(64));
        }
    }

    fn core_status(&self, core: CoreId) -> StatusWord {
        let Some(c) = self.cfg.cores.core(core.0 as usize) else {
            return StatusWord::NONE;
        };
        if self.manual() {
            let (a, l) = c.status_range();
            arch::clean_invalidate(a, l);
        }
        let w = c.status();
        arch::device_acquire();
        StatusWord::from_bits(w)
    }

    fn result(&self, core: CoreId, token: Token) -> ResultWord {
        // The status line (results included) was made fresh by the `core_status` read that
        // named this token or a later one.
        self.cfg
            .cores
            .core(core.0 as usize)
            .map_or(ResultWord::default(), |c| {
                ResultWord::from_bits(c.result(parity(token)))
            })
    }

    fn lane_times(&self, core: CoreId, token: Token) -> Option<(u64, u64)> {
        let c = self.cfg.cores.core(core.0 as usize)?;
        // The payload's shape says whether times were asked for.
        if c.shape(parity(token)) >> 24 & 1 == 0 {
            return None;
        }
        let [start, end] = c.times(parity(token));
        Some((start, end))
    }

    fn conditions(&self, core: CoreId, token: Token) -> usize {
        let Some(c) = self.cfg.cores.core(core.0 as usize) else {
            return 0;
        };
        if self.manual() {
            let (a, l) = c.conditions_range(parity(token));
            arch::clean_invalidate(a, l);
        }
        c.condition_count(parity(token)) as usize
    }

    fn condition(&self, core: CoreId, token: Token, i: usize) -> Option<RawCondition> {
        let c = self.cfg.cores.core(core.0 as usize)?;
        if i >= c.condition_count(parity(token)) as usize {
            return None;
        }
        c.condition(parity(token), i)
    }

    fn read_watch(&self, watch: Watch) -> Option<u64> {
        crate::watched::read_watch(&self.cfg.memory, &self.cfg.engines, watch)
    }

    fn invalidate(&self, addr: u64, len: usize) {
        if self.manual() {
            arch::clean_invalidate(addr as usize, len);
        }
    }

    fn heap(&self) -> (u64, u64) {
        self.cfg.heap
    }

    fn spin_hint(&self) {
        core::hint::spin_loop();
    }
}
