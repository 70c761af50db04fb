//! The machine the loom models of the scheduler run on.

use loom::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use loom::thread;

use crate::condition::{Condition, Watch};
use crate::ids::{CoreId, KernelId, Token};
use crate::platform::{Payload, Platform};
use crate::protocol::{RawCondition, ResultWord, StatusWord};
use crate::region::config::Config;

/// The one counter deferred kernels of these models wait on.
pub(crate) const COUNTER: u64 = 0x8;

/// One AIV core (its doorbell, status word and a result word per slot), one counter and one
/// data word, in loom atomics: the machine the loom models of the scheduler run on. Only
/// token 1's kernel registers conditions (`slab` of them: `COUNTER >= 1`).
pub(crate) struct Machine {
    pub(crate) rung: AtomicU32,
    pub(crate) status: AtomicU32,
    /// The result word of each slot, by token parity.
    pub(crate) results: [AtomicU64; 2],
    /// Conditions token 1's kernel registered (the slab's count).
    pub(crate) slab: AtomicU32,
    pub(crate) counter: AtomicU64,
    pub(crate) data: AtomicU64,
}

impl Machine {
    pub(crate) fn new() -> Self {
        Machine {
            rung: AtomicU32::new(0),
            status: AtomicU32::new(0),
            results: [AtomicU64::new(0), AtomicU64::new(0)],
            slab: AtomicU32::new(0),
            counter: AtomicU64::new(0),
            data: AtomicU64::new(0),
        }
    }
}

impl Platform for Machine {
    fn now(&self) -> u64 {
        0
    }
    fn ticks_per_us(&self) -> u64 {
        1
    }
    fn has_kernel(&self, _: KernelId) -> bool {
        true
    }
    fn write_payload(&self, _: CoreId, _: Token, _: &Payload<'_>) {}
    fn ring_doorbell(&self, _: CoreId, token: Token) {
        self.rung.store(token.bits(), Ordering::Release);
    }
    fn core_status(&self, _: CoreId) -> StatusWord {
        StatusWord::from_bits(self.status.load(Ordering::Acquire))
    }
    fn result(&self, _: CoreId, token: Token) -> ResultWord {
        ResultWord::from_bits(self.results[(token.bits() & 1) as usize].load(Ordering::Relaxed))
    }
    fn conditions(&self, _: CoreId, token: Token) -> usize {
        // Only the first token's kernel is deferred.
        if token.bits() == 1 {
            self.slab.load(Ordering::Relaxed) as usize
        } else {
            0
        }
    }
    fn condition(&self, _: CoreId, _: Token, i: usize) -> Option<RawCondition> {
        (i == 0).then_some(Condition::counter64(COUNTER, 1).into())
    }
    fn read_watch(&self, w: Watch) -> Option<u64> {
        (w == Watch::Counter64(COUNTER)).then(|| self.counter.load(Ordering::Acquire))
    }
    fn spin_hint(&self, _idle: u32) {
        thread::yield_now();
    }
}

/// The config of a model on [`Machine`]: one AIV core, a `window`-slot ring, room for one
/// deferred condition, no profile records.
pub(crate) fn one_core(window: u32) -> Config {
    Config {
        rings: 1,
        task_window: window,
        max_deps: 1,
        max_args: 0,
        aic_cores: 0,
        aiv_cores: 1,
        profile_capacity: 0,
        max_conditions: 1,
        deferred_capacity: 1,
        deferred_poll_budget: 1,
        ..Config::tiny()
    }
}

/// A model checker bounded to two preemptions (each model says why that is enough), with
/// room for the scheduler's idle loops.
pub(crate) fn two_preemptions() -> loom::model::Builder {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(2);
    b.max_branches = 100_000;
    b
}

/// A model checker bounded to `preemptions` preemptions per execution (each model says why
/// its bound is enough), with room for the spin loops of full and empty queues.
pub(crate) fn bounded(preemptions: usize) -> loom::model::Builder {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(preemptions);
    b.max_branches = 100_000;
    b
}

/// A one-ring config with a `window`-slot task window, two deps and no profiling: the
/// smallest tables the wiring and reclaim models need.
pub(crate) fn small_cfg(window: u32) -> Config {
    Config {
        rings: 1,
        task_window: window,
        profile_capacity: 0,
        max_deps: 2,
        max_args: 0,
        ..Config::tiny()
    }
}
