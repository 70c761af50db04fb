//! What `pto_aicpu_init` sets for the runs that follow: the device, the clock and the
//! timeouts.

use core::sync::atomic::{AtomicU64, Ordering};

use pto_device_sys::abi::PtoAicpuInitArgs;
use pto_device_sys::raw::arch;

/// The settings of the runs.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Settings {
    /// Counter ticks per µs.
    pub ticks_per_us: u64,
    /// The run's deadline, µs.
    pub watchdog_us: u64,
    /// How long to wait for executors and threads, µs.
    pub handshake_us: u64,
    /// How long to wait for each exit acknowledgement, µs.
    pub exit_us: u64,
    /// The device (die) this AICPU serves: it names the run's temporary files, which the
    /// two dies of an A3 chip would otherwise share.
    pub device: u32,
}

fn or(v: u64, default: u64) -> u64 {
    if v == 0 { default } else { v }
}

/// The settings as `init` stored them, shared by every thread of every run.
pub(crate) struct Stored {
    /// Counter ticks per µs (0: `init` has not run).
    ticks_per_us: AtomicU64,
    watchdog_us: AtomicU64,
    handshake_us: AtomicU64,
    exit_us: AtomicU64,
    device: AtomicU64,
}

impl Stored {
    /// None yet.
    pub(crate) const fn new() -> Self {
        Stored {
            ticks_per_us: AtomicU64::new(0),
            watchdog_us: AtomicU64::new(0),
            handshake_us: AtomicU64::new(0),
            exit_us: AtomicU64::new(0),
            device: AtomicU64::new(0),
        }
    }

    /// Takes `a`; false if the clock is unknown (no frequency given, none readable).
    pub(crate) fn set(&self, a: &PtoAicpuInitArgs) -> bool {
        let ticks = match a.ticks_per_us {
            0 => arch::counter_frequency().map_or(0, |hz| hz / 1_000_000),
            t => t,
        };
        if ticks == 0 {
            return false;
        }
        self.watchdog_us
            .store(or(a.watchdog_us, 10_000_000), Ordering::Relaxed);
        self.handshake_us
            .store(or(a.handshake_timeout_us, 1_000_000), Ordering::Relaxed);
        self.exit_us
            .store(or(a.exit_timeout_us, 1_000_000), Ordering::Relaxed);
        self.device.store(a.device_id as u64, Ordering::Relaxed);
        self.ticks_per_us.store(ticks, Ordering::Release);
        true
    }

    /// The settings, if `init` ran.
    pub(crate) fn get(&self) -> Option<Settings> {
        let ticks_per_us = self.ticks_per_us.load(Ordering::Acquire);
        (ticks_per_us > 0).then(|| Settings {
            ticks_per_us,
            watchdog_us: self.watchdog_us.load(Ordering::Relaxed),
            handshake_us: self.handshake_us.load(Ordering::Relaxed),
            exit_us: self.exit_us.load(Ordering::Relaxed),
            device: self.device.load(Ordering::Relaxed) as u32,
        })
    }
}
