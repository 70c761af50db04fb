//! The start and the end of a run on one core: [`open_core`] waits (bounded) for the core's
//! executor to announce itself in its handshake block, checks its physical id and type,
//! refuses a `COND` that an earlier run left behind, opens the register window and hands the
//! core its payload slots; [`close_core`] sends the exit and waits (bounded) for the core's
//! acknowledgement. Every wait is bounded by a deadline on the system counter.
#![forbid(unsafe_code)]

use core::sync::atomic::AtomicU32;

use pto_runtime_core::Token;

use super::layout::{
    COND_EXIT_ACK, DMB_EXIT, DMB_IDLE, FAST_PATH_CLOSED, FAST_PATH_OPEN, MAX_PHYSICAL_CORES,
    REG_COND, REG_DATA_MAIN_BASE, REG_FAST_PATH,
};
use super::platform::ChipCore;
use crate::Coherence;
use crate::raw::arch;
use crate::raw::chip::{HandshakeRef, HsField, RegTable, SlotPair};

/// Why a core could not be opened or closed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChipError {
    /// Core `core`'s executor did not write its handshake within `waited_us`: it was not
    /// launched, or launched with fewer blocks than the run has cores.
    CoreNotUp {
        /// The logical core.
        core: u16,
        /// How long the AICPU waited, µs.
        waited_us: u64,
    },
    /// Core `core` reported physical id `id`, which the register table has no window for.
    BadCoreId {
        /// The logical core.
        core: u16,
        /// The id it reported.
        id: u32,
    },
    /// Core `core` reported type `got` where the run expects `want` (0: AIC, 1: AIV).
    WrongCoreType {
        /// The logical core.
        core: u16,
        /// What it reported.
        got: u32,
        /// What the configuration says.
        want: u32,
    },
    /// Core `core`'s `COND` holds `value`, a report no token of this run explains: an
    /// earlier run ended without the core acknowledging its exit.
    StaleCond {
        /// The logical core.
        core: u16,
        /// The register's value.
        value: u32,
    },
    /// Core `core` did not acknowledge the exit within `waited_us`; `COND` holds `cond`
    /// (its kernel may still be running).
    ExitNotAcked {
        /// The logical core.
        core: u16,
        /// The register's value at the deadline.
        cond: u32,
        /// How long the AICPU waited, µs.
        waited_us: u64,
    },
}

impl core::fmt::Display for ChipError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            ChipError::CoreNotUp { core, waited_us } => write!(
                f,
                "core {core}: its AICore executor did not answer the handshake in {waited_us} us \
                 (launch the executor with a block per core, before the AICPU)"
            ),
            ChipError::BadCoreId { core, id } => write!(
                f,
                "core {core}: physical core id {id} has no register window in the table"
            ),
            ChipError::WrongCoreType { core, got, want } => write!(
                f,
                "core {core}: the executor is of type {got}, the configuration wants {want} \
                 (0: AIC, 1: AIV; AIC cores come first)"
            ),
            ChipError::StaleCond { core, value } => write!(
                f,
                "core {core}: COND holds {value:#010x} from an earlier run that never \
                 acknowledged its exit"
            ),
            ChipError::ExitNotAcked {
                core,
                cond,
                waited_us,
            } => write!(
                f,
                "core {core}: no exit acknowledgement in {waited_us} us (COND {cond:#010x}); \
                 its kernel may still run"
            ),
        }
    }
}

/// Waits until `done` holds or `limit_us` passed; whether it held.
fn wait_for(ticks_per_us: u64, limit_us: u64, mut done: impl FnMut() -> bool) -> bool {
    let start = arch::counter();
    let limit = limit_us.saturating_mul(ticks_per_us);
    loop {
        if done() {
            return true;
        }
        if arch::counter().wrapping_sub(start) > limit {
            return done();
        }
        core::hint::spin_loop();
    }
}

/// What [`open_core`] needs for one core.
#[derive(Clone, Copy, Debug)]
pub struct OpenArgs<'a> {
    /// The logical core (AIC first, then AIV).
    pub core: u16,
    /// Its handshake block.
    pub hs: HandshakeRef<'a>,
    /// Its two payload slots.
    pub slots: SlotPair<'a>,
    /// The register windows, by physical core id.
    pub regs: RegTable<'a>,
    /// The core type the configuration expects.
    pub want_type: u32,
    /// Counter ticks per µs.
    pub ticks_per_us: u64,
    /// How long to wait for the executor, µs.
    pub timeout_us: u64,
    /// Cache maintenance towards the cores.
    pub coherence: Coherence,
}

/// Opens one core for a run. On `Err(StaleCond)` the core is returned too, opened, so the
/// run can still send it the exit handshake (which clears `COND` for the next run).
pub fn open_core<'a>(a: OpenArgs<'a>) -> Result<ChipCore<'a>, (ChipError, Option<ChipCore<'a>>)> {
    let manual = a.coherence == Coherence::Manual;
    let (hs_addr, hs_len) = a.hs.range();
    let up = wait_for(a.ticks_per_us, a.timeout_us, || {
        if manual {
            arch::clean_invalidate(hs_addr, hs_len);
        }
        a.hs.get(HsField::AicoreDone) != 0
    });
    if !up {
        let e = ChipError::CoreNotUp {
            core: a.core,
            waited_us: a.timeout_us,
        };
        return Err((e, None));
    }
    arch::device_acquire();
    let id = a.hs.get(HsField::PhysicalCoreId);
    let Some(regs) = a.regs.window(id).filter(|_| id < MAX_PHYSICAL_CORES) else {
        return Err((ChipError::BadCoreId { core: a.core, id }, None));
    };
    let got = a.hs.get(HsField::CoreType);
    if got != a.want_type {
        let e = ChipError::WrongCoreType {
            core: a.core,
            got,
            want: a.want_type,
        };
        return Err((e, None));
    }
    let cond = regs.read(REG_COND);
    // The token before this run's first: where the last run left off.
    let base_token = Token::new(a.hs.get(HsField::BaseToken));
    let base_token = if base_token.bits() > Token::LAST.bits() {
        Token::new(0)
    } else {
        base_token
    };
    // The window first, so the executor never reads a control value of an earlier run.
    regs.write(REG_FAST_PATH, FAST_PATH_OPEN);
    regs.write(REG_DATA_MAIN_BASE, DMB_IDLE);
    a.hs.set_task(a.slots.addr());
    a.hs.set(HsField::BaseToken, base_token.bits());
    a.hs.set(HsField::AicoreExited, 0);
    arch::device_barrier();
    a.hs.set(HsField::AicpuReady, 1);
    if manual {
        arch::clean(hs_addr, hs_len);
    }
    let core = ChipCore {
        id: a.core,
        coherence: a.coherence,
        hs: a.hs,
        slots: a.slots,
        regs,
        base: base_token,
        last: AtomicU32::new(base_token.bits()),
    };
    if cond != 0 && cond != COND_EXIT_ACK {
        return Err((
            ChipError::StaleCond {
                core: a.core,
                value: cond,
            },
            Some(core),
        ));
    }
    Ok(core)
}

/// Sends `core` the exit and waits up to `timeout_us` for its acknowledgement (its
/// handshake's `aicore_exited`, then `COND`); then closes the window and records the last token given, so the next run's tokens continue after it.
/// On a timeout `DATA_MAIN_BASE` keeps the exit, so a core that frees itself later still
/// leaves and acknowledges.
pub fn close_core(
    core: &ChipCore<'_>,
    ticks_per_us: u64,
    timeout_us: u64,
) -> Result<(), ChipError> {
    let last = core.last.load(core::sync::atomic::Ordering::Acquire);
    // `aicpu_ready` stays set: an executor that has not seen it yet still enters its loop
    // and finds the exit. The host zeroes it before the next launch.
    core.hs.set(HsField::BaseToken, last);
    arch::device_barrier();
    core.regs.write(REG_DATA_MAIN_BASE, DMB_EXIT);
    // `COND` may still hold an earlier run's acknowledgement (a run that dispatched
    // nothing to the core): the core's own flag says this run's executor left.
    let manual = core.coherence == Coherence::Manual;
    let (hs_addr, hs_len) = core.hs.range();
    let acked = wait_for(ticks_per_us, timeout_us, || {
        if manual {
            arch::clean_invalidate(hs_addr, hs_len);
        }
        core.hs.get(HsField::AicoreExited) == 1 && core.regs.read(REG_COND) == COND_EXIT_ACK
    });
    arch::device_acquire();
    if !acked {
        return Err(ChipError::ExitNotAcked {
            core: core.id,
            cond: core.regs.read(REG_COND),
            waited_us: timeout_us,
        });
    }
    core.regs.write(REG_DATA_MAIN_BASE, DMB_IDLE);
    core.regs.write(REG_FAST_PATH, FAST_PATH_CLOSED);
    Ok(())
}
