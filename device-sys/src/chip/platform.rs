//! `ChipPlatform`: the scheduler core's [`Platform`] over the chip's handshake.
//!
//! Dispatch: the payload goes into the slot the token's parity selects (written back when
//! caches are not coherent with the cores), a barrier, then the token into the core's
//! `DATA_MAIN_BASE`. Completion: `COND` read with one MMIO load, then a read barrier; the
//! token's result word, times and conditions come from its slot. Until the core reports its
//! first token of the run, `COND` holds 0 or the exit acknowledgement of the last run: the
//! platform then reports FIN of the core's base token, so the scheduler's tokens continue
//! after the last run's.
#![forbid(unsafe_code)]

use core::sync::atomic::{AtomicU32, Ordering};

use pto_runtime_core::{
    CoreId, KernelId, Payload, Platform, RawCondition, ResultWord, Stall, StatusWord, Token, Watch,
};

use super::layout::{COND_EXIT_ACK, REG_COND, REG_DATA_MAIN_BASE, SLOT_ARGS};
use super::producer_stream::ProducerStream;
use super::stall_log::StallLog;
use crate::Coherence;
use crate::raw::arch;
use crate::raw::chip::{HandshakeRef, RegWindow, SlotHead, SlotPair};
use crate::raw::memory::{EngineWords, WatchedMemory};

/// One opened core ([`super::open_core`] makes them).
#[derive(Debug)]
pub struct ChipCore<'a> {
    /// The logical core.
    pub id: u16,
    /// Cache maintenance towards it.
    pub coherence: Coherence,
    /// Its handshake block.
    pub hs: HandshakeRef<'a>,
    /// Its payload slots.
    pub slots: SlotPair<'a>,
    /// Its register window.
    pub regs: RegWindow<'a>,
    /// The token before this run's first.
    pub base: Token,
    /// The last token rung (the base until the first).
    pub last: AtomicU32,
}

/// What the chip platform is given.
#[derive(Clone, Copy, Debug)]
pub struct ChipConfig<'a> {
    /// The opened cores, in logical order (AIC first, then AIV).
    pub cores: &'a [ChipCore<'a>],
    /// Device addresses of the kernels (`void (*)(int64_t *)`), by kernel id; 0: none.
    pub kernels: &'a [u64],
    /// Device memory deferred counters may live in.
    pub memory: WatchedMemory<'a>,
    /// The engines' completion watermarks.
    pub engines: EngineWords<'a>,
    /// Counter ticks per µs (at least 1).
    pub ticks_per_us: u64,
    /// Cache maintenance towards the cores.
    pub coherence: Coherence,
    /// The output heap in device memory: base and length (`(0, 0)`: none).
    pub heap: (u64, u64),
    /// Where the schedulers of a failed run tell what their cores ran and their deferred
    /// sets held (`None`: nowhere).
    pub stalls: Option<&'a StallLog>,
    /// What an idle scheduler loop does besides a spin-loop hint: `None` where every AICPU
    /// thread has a CPU of its own (the chip); a yield where threads share CPUs (a host
    /// running the executors on threads), so the threads a scheduler waits for get to run.
    pub idle: Option<fn()>,
    /// Where each submitted task's producers go when the run streams them (`None`:
    /// nowhere).
    pub producers: Option<&'a ProducerStream>,
}

/// The scheduler's view of the chip.
#[derive(Debug)]
pub struct ChipPlatform<'a> {
    cfg: ChipConfig<'a>,
}

impl<'a> ChipPlatform<'a> {
    /// The platform over `cfg`. The runtime it serves must be configured so that it
    /// [`ChipPlatform::fits`]: a task whose argument words would not fit its slot is sent
    /// with no kernel, and fails (`PTO_FAIL_NO_KERNEL`) rather than run with arguments cut.
    pub fn new(cfg: ChipConfig<'a>) -> Self {
        ChipPlatform { cfg }
    }

    /// Whether a run of `cfg` fits the chip's payload slots: a task's tensor addresses and
    /// scalar arguments share the slot's [`SLOT_ARGS`] words, so `max_tensors + max_args`
    /// may not exceed it. The words the configuration asks for, as the error.
    pub fn fits(cfg: &pto_runtime_core::Config) -> Result<(), usize> {
        let words = cfg.max_tensors as usize + cfg.max_args as usize;
        if words > SLOT_ARGS {
            Err(words)
        } else {
            Ok(())
        }
    }

    fn core(&self, c: CoreId) -> Option<&ChipCore<'a>> {
        self.cfg.cores.get(c.0 as usize)
    }

    fn fresh(&self, c: &ChipCore<'_>, parity: usize) {
        if self.cfg.coherence == Coherence::Manual {
            let (a, l) = c.slots.range(parity);
            arch::clean_invalidate(a, l);
        }
    }
}

fn parity(token: Token) -> usize {
    (token.bits() & 1) as usize
}

impl Platform for ChipPlatform<'_> {
    fn now(&self) -> u64 {
        arch::counter()
    }

    const OBSERVES_SUBMITS: bool = true;

    #[inline(always)]
    fn observing(&self) -> bool {
        self.cfg.producers.is_some_and(ProducerStream::is_open)
    }

    fn submitted(
        &self,
        id: pto_runtime_core::TaskId,
        _spec: &pto_runtime_core::TaskSpec<'_>,
        producers: &[pto_runtime_core::TaskId],
    ) {
        if let Some(p) = self.cfg.producers {
            p.push(id, producers);
        }
    }

    fn ticks_per_us(&self) -> u64 {
        self.cfg.ticks_per_us.max(1)
    }

    fn has_kernel(&self, kernel: KernelId) -> bool {
        self.cfg
            .kernels
            .get(kernel.0 as usize)
            .is_some_and(|&a| a != 0)
    }

    fn write_payload(&self, core: CoreId, token: Token, payload: &Payload<'_>) {
        let Some(c) = self.core(core) else { return };
        let fits = payload.tensors.len() + payload.args.len() <= SLOT_ARGS;
        let addr = self
            .cfg
            .kernels
            .get(payload.kernel.0 as usize)
            .copied()
            .filter(|_| fits)
            .unwrap_or(0);
        let head = SlotHead {
            kernel_addr: addr,
            task: payload.task.raw(),
            kernel: payload.kernel.0,
            shape: payload.lane as u32
                | (payload.lanes as u32) << 8
                | (payload.profile as u32) << 24,
            block: u32::from(payload.block) | u32::from(payload.blocks) << 16,
        };
        c.slots
            .write(parity(token), head, payload.tensors, payload.args);
    }

    fn ring_doorbell(&self, core: CoreId, token: Token) {
        let Some(c) = self.core(core) else { return };
        if self.cfg.coherence == Coherence::Manual {
            let (a, l) = c.slots.range(parity(token));
            arch::clean(a, l);
            if let Some((a, l)) = c.slots.tensor_range(parity(token)) {
                arch::clean(a, l);
            }
        }
        arch::device_barrier();
        c.regs.write(REG_DATA_MAIN_BASE, token.bits());
        c.last.store(token.bits(), Ordering::Release);
    }

    fn core_status(&self, core: CoreId) -> StatusWord {
        let Some(c) = self.core(core) else {
            return StatusWord::NONE;
        };
        let w = c.regs.read(REG_COND);
        arch::device_acquire();
        if w == 0 || w == COND_EXIT_ACK {
            StatusWord::fin(c.base)
        } else {
            StatusWord::from_bits(w)
        }
    }

    fn result(&self, core: CoreId, token: Token) -> ResultWord {
        let Some(c) = self.core(core) else {
            return ResultWord::default();
        };
        self.fresh(c, parity(token));
        ResultWord::from_bits(c.slots.result(parity(token)))
    }

    fn lane_times(&self, core: CoreId, token: Token) -> Option<(u64, u64)> {
        let c = self.core(core)?;
        if c.slots.shape(parity(token)) >> 24 & 1 == 0 {
            return None;
        }
        let [start, end] = c.slots.times(parity(token));
        Some((start, end))
    }

    fn conditions(&self, core: CoreId, token: Token) -> usize {
        self.core(core)
            .map_or(0, |c| c.slots.ncond(parity(token)) as usize)
    }

    fn condition(&self, core: CoreId, token: Token, i: usize) -> Option<RawCondition> {
        let c = self.core(core)?;
        if i >= c.slots.ncond(parity(token)) as usize {
            return None;
        }
        c.slots.condition(parity(token), i)
    }

    fn read_watch(&self, watch: Watch) -> Option<u64> {
        crate::watched::read_watch(&self.cfg.memory, &self.cfg.engines, watch)
    }

    fn invalidate(&self, addr: u64, len: usize) {
        if self.cfg.coherence == Coherence::Manual {
            arch::clean_invalidate(addr as usize, len);
        }
    }

    fn clean(&self, addr: u64, len: usize) {
        if self.cfg.coherence == Coherence::Manual {
            arch::clean(addr as usize, len);
        }
    }

    fn heap(&self) -> (u64, u64) {
        self.cfg.heap
    }

    fn stalled(&self, stall: Stall) {
        if let Some(log) = self.cfg.stalls {
            log.push(&stall);
        }
    }

    fn spin_hint(&self, _idle: u32) {
        core::hint::spin_loop();
        if let Some(idle) = self.cfg.idle {
            idle();
        }
    }
}
