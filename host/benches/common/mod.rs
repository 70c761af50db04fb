//! The platform the single-thread benches run against: cores that finish every token the
//! moment its doorbell rings, and a monotonic clock.

use std::sync::atomic::{AtomicU32, Ordering};

use pto_runtime_core::{CoreId, KernelId, Payload, Platform, ResultWord, StatusWord, Token};

/// Cores that finish every token the moment its doorbell rings; a monotonic clock.
pub struct Loopback {
    last: Vec<AtomicU32>,
    clock: quanta::Clock,
    heap: (u64, u64),
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
    fn core_status(&self, core: CoreId) -> StatusWord {
        match self.last[core.0 as usize].load(Ordering::Relaxed) {
            0 => StatusWord::NONE,
            t => StatusWord::fin(Token::new(t)),
        }
    }
    fn result(&self, _: CoreId, token: Token) -> ResultWord {
        ResultWord::done(token)
    }
    fn spin_hint(&self, _idle: u32) {}
    fn heap(&self) -> (u64, u64) {
        self.heap
    }
}

impl Loopback {
    /// `cores` cores, all idle.
    pub fn new(cores: u16) -> Self {
        Loopback {
            last: (0..cores).map(|_| AtomicU32::new(0)).collect(),
            clock: quanta::Clock::new(),
            heap: (0, 0),
        }
    }

    /// The same cores with an output heap of `len` bytes at `base` (addresses only: no
    /// kernel runs to touch them).
    #[allow(dead_code)] // not every bench allocates
    pub fn with_heap(mut self, base: u64, len: u64) -> Self {
        self.heap = (base, len);
        self
    }
}
