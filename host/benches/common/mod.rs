//! The platform the single-thread benches run against: cores that finish every token the
//! moment its doorbell rings, and a monotonic clock.

use std::sync::atomic::{AtomicU32, Ordering};

use pto_runtime_core::{
    Condition, CoreId, CorePhase, CoreStatus, KernelId, Payload, Platform, Token, Watch,
};

/// Cores that finish every token the moment its doorbell rings; a monotonic clock.
pub struct Loopback {
    last: Vec<AtomicU32>,
    clock: quanta::Clock,
}

impl Platform for Loopback {
    fn now(&self) -> u64 {
        self.clock.raw()
    }
    fn ticks_per_us(&self) -> u64 {
        1000
    }
    fn has_kernel(&self, _: KernelId) -> bool {
        true
    }
    fn write_payload(&self, _: CoreId, _: Token, _: &Payload<'_>) {}
    fn ring_doorbell(&self, core: CoreId, token: Token) {
        self.last[core.0 as usize].store(token.bits(), Ordering::Relaxed);
    }
    fn core_status(&self, core: CoreId) -> CoreStatus {
        CoreStatus {
            token: Token::new(self.last[core.0 as usize].load(Ordering::Relaxed)),
            phase: CorePhase::Fin,
        }
    }
    fn lane_times(&self, _: CoreId, _: Token) -> Option<(u64, u64)> {
        None
    }
    fn conditions(&self, _: CoreId, _: Token) -> usize {
        0
    }
    fn condition(&self, _: CoreId, _: Token, _: usize) -> Option<Condition> {
        None
    }
    fn read_watch(&self, _: Watch) -> Option<u64> {
        None
    }
    fn invalidate(&self, _: u64, _: usize) {}
    fn flush(&self, _: u64, _: usize) {}
    fn spin_hint(&self) {}
}

impl Loopback {
    /// `cores` cores, all idle.
    pub fn new(cores: u16) -> Self {
        Loopback {
            last: (0..cores).map(|_| AtomicU32::new(0)).collect(),
            clock: quanta::Clock::new(),
        }
    }
}
