//! What `pto_aicpu_init` sets for the runs that follow: the device, the clock and the
//! timeouts.

use core::sync::atomic::{AtomicU64, Ordering};

use pto_device_sys::abi::PtoAicpuInitArgs;
use pto_device_sys::raw::arch;

/// Counter ticks per µs (0: `init` has not run).
static TICKS_PER_US: AtomicU64 = AtomicU64::new(0);
static WATCHDOG_US: AtomicU64 = AtomicU64::new(0);
static HANDSHAKE_US: AtomicU64 = AtomicU64::new(0);
static EXIT_US: AtomicU64 = AtomicU64::new(0);
static DEVICE: AtomicU64 = AtomicU64::new(0);

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

/// Takes `a`; false if the clock is unknown (no frequency given, none readable).
pub(crate) fn set(a: &PtoAicpuInitArgs) -> bool {
    let ticks = match a.ticks_per_us {
        0 => arch::counter_frequency().map_or(0, |hz| hz / 1_000_000),
        t => t,
    };
    if ticks == 0 {
        return false;
    }
    WATCHDOG_US.store(or(a.watchdog_us, 10_000_000), Ordering::Relaxed);
    HANDSHAKE_US.store(or(a.handshake_timeout_us, 1_000_000), Ordering::Relaxed);
    EXIT_US.store(or(a.exit_timeout_us, 1_000_000), Ordering::Relaxed);
    DEVICE.store(a.device_id as u64, Ordering::Relaxed);
    TICKS_PER_US.store(ticks, Ordering::Release);
    true
}

/// The settings, if `init` ran.
pub(crate) fn get() -> Option<Settings> {
    let ticks_per_us = TICKS_PER_US.load(Ordering::Acquire);
    (ticks_per_us > 0).then(|| Settings {
        ticks_per_us,
        watchdog_us: WATCHDOG_US.load(Ordering::Relaxed),
        handshake_us: HANDSHAKE_US.load(Ordering::Relaxed),
        exit_us: EXIT_US.load(Ordering::Relaxed),
        device: DEVICE.load(Ordering::Relaxed) as u32,
    })
}
