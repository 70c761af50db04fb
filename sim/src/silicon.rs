//! A cost model of the chip for the simulator: what a status-register read, a doorbell, a
//! dispatch, a FIN and a completion record cost on silicon, and how long each kernel runs,
//! so the scheduler's figures on the simulator mean what they would on the chip.
//!
//! The default figures are the published a2a3 ones (see `docs/performance-log.md`):
//! a `COND` read ~100 ns with one outstanding per AICPU thread, a posted MMIO store ~20 ns,
//! a dispatch seen by the AICore ~140 ns after the doorbell, a FIN seen by the AICPU ~600 ns
//! on average (180 ns at best) after the kernel ends, and a record in device memory seen
//! ~1 040 ns on average after it is written (GM plus cache invalidation).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use pto_runtime_core::KernelId;

/// What the simulated chip charges. Every figure is wall time on the host clock: a status
/// read spins the reading thread; the other delays are when a core sees or shows something.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Silicon {
    /// A read of a core's status register, charged to the reading thread.
    pub status_read: Duration,
    /// Ringing a doorbell (a posted MMIO store), charged to the ringing thread.
    pub doorbell: Duration,
    /// From the doorbell to the core starting the kernel.
    pub dispatch: Duration,
    /// From the kernel's end to its FIN showing in the status register: at least
    /// `fin_min`, on average `fin_avg` (uniformly spread).
    pub fin_min: Duration,
    /// See `fin_min`.
    pub fin_avg: Duration,
    /// From the kernel's end to its completion record showing in the scheduler's queue, on
    /// average (uniform from half to one and a half of it); never before the FIN shows.
    pub record_avg: Duration,
    /// How long each kernel runs (the kernel's function itself runs at the start, at once).
    pub kernel: HashMap<KernelId, Duration>,
    /// How long kernels not in `kernel` run.
    pub default_kernel: Duration,
}

impl Silicon {
    /// The published a2a3 figures, with kernels that take no time.
    pub fn a2a3() -> Self {
        Silicon {
            status_read: Duration::from_nanos(100),
            doorbell: Duration::from_nanos(20),
            dispatch: Duration::from_nanos(140),
            fin_min: Duration::from_nanos(180),
            fin_avg: Duration::from_nanos(600),
            record_avg: Duration::from_nanos(1_040),
            kernel: HashMap::new(),
            default_kernel: Duration::ZERO,
        }
    }

    /// The same model, with kernel `id` running for `d`.
    pub fn with_kernel(mut self, id: KernelId, d: Duration) -> Self {
        self.kernel.insert(id, d);
        self
    }
}

/// How many ticks longer than asked a [`spin_for`] of `ticks` takes on this host (its clock
/// reads): the median mean of 9 batches of 32 spins, so a preempted batch does not count.
fn spin_excess(ticks: u64) -> u64 {
    let clock = quanta::Clock::new();
    let now = || clock.raw();
    let mut batches: Vec<u64> = (0..9)
        .map(|_| {
            let t0 = now();
            for _ in 0..32 {
                spin_for(now, ticks);
            }
            (now().wrapping_sub(t0) / 32).saturating_sub(ticks)
        })
        .collect();
    batches.sort_unstable();
    batches[batches.len() / 2]
}

/// How late the host may show a modelled event before it counts as late in
/// [`Lateness::late_share`]: above the model's own latencies (a FIN shows 600 ns after its
/// kernel ends, on average), below the shortest kernel a scene runs for long.
pub const LATE_NS: u64 = 1_000;

/// How late the host showed the modelled chip's events (a kernel starting, a FIN or a
/// completion record showing) against the times the model gave them. The model keeps its
/// own times for what it records, but a scheduler sees a FIN only once a core thread has
/// shown it: on a host with fewer CPUs than the run has busy threads the core threads run
/// late, and a run's overhead shares then measure the host as much as the runtime.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct Lateness {
    /// Events shown.
    pub events: u64,
    /// Their mean lateness, ns.
    pub mean_ns: f64,
    /// The share of them shown more than [`LATE_NS`] late.
    pub late_share: f64,
}

impl Lateness {
    /// Whether the host kept the modelled chip so far behind that a run's overhead shares
    /// cannot be read as the chip's: more than 1 % of its events shown over [`LATE_NS`]
    /// late, or a mean lateness over half of it.
    pub fn distorts(&self) -> bool {
        self.late_share > 0.01 || self.mean_ns > LATE_NS as f64 / 2.0
    }
}

/// What the modelled cores really took, added up by the core threads (clock ticks).
#[derive(Default)]
pub(crate) struct SiliconSums {
    /// Doorbell to kernel start, summed, and how many.
    pub(crate) dispatch: (AtomicU64, AtomicU64),
    /// Kernel end to FIN shown, summed, and how many.
    pub(crate) fin: (AtomicU64, AtomicU64),
    /// How late the host showed each event, summed, and how many.
    pub(crate) late: (AtomicU64, AtomicU64),
    /// Events shown more than [`LATE_NS`] late.
    pub(crate) late_over: AtomicU64,
}

impl SiliconSums {
    pub(crate) fn add(sum: &(AtomicU64, AtomicU64), ticks: u64) {
        sum.0.fetch_add(ticks, Ordering::Relaxed);
        sum.1.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts an event the host showed `ticks` late; `over` is [`LATE_NS`] in ticks.
    pub(crate) fn late(&self, ticks: u64, over: u64) {
        Self::add(&self.late, ticks);
        if ticks > over {
            self.late_over.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The lateness so far, with `ns` converting ticks.
    pub(crate) fn lateness(&self, ns: impl Fn(f64) -> f64) -> Lateness {
        let events = self.late.1.load(Ordering::Relaxed);
        let over = self.late_over.load(Ordering::Relaxed);
        Lateness {
            events,
            mean_ns: ns(Self::mean(&self.late)),
            late_share: over as f64 / events.max(1) as f64,
        }
    }

    /// The mean of `sum`, in ticks.
    pub(crate) fn mean(sum: &(AtomicU64, AtomicU64)) -> f64 {
        let n = sum.1.load(Ordering::Relaxed).max(1);
        sum.0.load(Ordering::Relaxed) as f64 / n as f64
    }
}

/// The model in clock ticks, as the core threads and the platform use it: the charges spun
/// by the charged thread (`status_read`, `doorbell`) less the spin's own overhead, so the
/// thread pays the model's figure.
#[derive(Clone, Debug)]
pub(crate) struct SiliconTicks {
    pub(crate) status_read: u64,
    pub(crate) doorbell: u64,
    pub(crate) dispatch: u64,
    fin_min: u64,
    fin_spread: u64,
    record_min: u64,
    record_spread: u64,
    kernel: HashMap<KernelId, u64>,
    default_kernel: u64,
    /// [`LATE_NS`] in ticks.
    pub(crate) late: u64,
}

impl SiliconTicks {
    pub(crate) fn new(s: &Silicon, ticks_per_us: u64) -> Self {
        let t = |d: Duration| (d.as_nanos() as u64).saturating_mul(ticks_per_us) / 1_000;
        let fin_min = t(s.fin_min).min(t(s.fin_avg));
        let record = t(s.record_avg);
        // A spin that charges `x` costs `x` plus its own clock reads (the read before it,
        // the overshoot of the last): spin that much less, so the thread pays `x`. The
        // overhead is measured once, on a machine that may be busy then; at most a quarter
        // of the charge is taken off, so a read never costs less than three quarters of it.
        let excess = spin_excess(t(s.status_read)).min(t(s.status_read) / 4);
        SiliconTicks {
            status_read: t(s.status_read).saturating_sub(excess),
            doorbell: t(s.doorbell).saturating_sub(excess),
            dispatch: t(s.dispatch),
            fin_min,
            // Uniform on [min, 2 avg - min]: its mean is avg.
            fin_spread: 2 * (t(s.fin_avg) - fin_min),
            record_min: record / 2,
            record_spread: record,
            kernel: s.kernel.iter().map(|(&k, &d)| (k, t(d))).collect(),
            default_kernel: t(s.default_kernel),
            late: t(Duration::from_nanos(LATE_NS)),
        }
    }

    /// How long `kernel` runs.
    pub(crate) fn kernel(&self, kernel: KernelId) -> u64 {
        self.kernel
            .get(&kernel)
            .copied()
            .unwrap_or(self.default_kernel)
    }

    /// The FIN delay of draw `seed`.
    pub(crate) fn fin(&self, seed: u64) -> u64 {
        self.fin_min + spread(seed, self.fin_spread)
    }

    /// The completion record delay of draw `seed`.
    pub(crate) fn record(&self, seed: u64) -> u64 {
        self.record_min + spread(seed ^ 0x5bd1_e995, self.record_spread)
    }
}

/// A value in `0..=width` from `seed` (a fixed mix, so runs repeat).
fn spread(seed: u64, width: u64) -> u64 {
    if width == 0 {
        return 0;
    }
    let mut x = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^= x >> 31;
    x % (width + 1)
}

/// Spins the calling thread until `ticks` have passed on `now`.
pub(crate) fn spin_for(now: impl Fn() -> u64, ticks: u64) {
    if ticks == 0 {
        return;
    }
    let until = now().saturating_add(ticks);
    while now() < until {
        std::hint::spin_loop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lateness_distorts_past_one_percent_over_a_microsecond_or_half_of_it_on_average() {
        let l = |mean_ns, late_share| Lateness {
            events: 1_000,
            mean_ns,
            late_share,
        };
        assert!(!l(0.0, 0.0).distorts());
        assert!(!l(499.0, 0.01).distorts());
        assert!(l(501.0, 0.0).distorts());
        assert!(l(100.0, 0.011).distorts());
        let sums = SiliconSums::default();
        for ticks in [0, 1_000, 1_001, 3_000] {
            sums.late(ticks, 1_000);
        }
        let got = sums.lateness(|t| t / 2.0);
        assert_eq!(got.events, 4);
        assert_eq!(got.mean_ns, 5_001.0 / 4.0 / 2.0);
        assert_eq!(got.late_share, 0.5, "over, not at, the bound");
    }

    #[test]
    fn draws_average_what_the_model_says() {
        let m = SiliconTicks::new(&Silicon::a2a3(), 1_000); // 1 tick = 1 ns
        let n = 100_000u64;
        let fin: u64 = (0..n).map(|i| m.fin(i)).sum::<u64>() / n;
        let rec: u64 = (0..n).map(|i| m.record(i)).sum::<u64>() / n;
        assert!((570..=630).contains(&fin), "FIN average {fin} ns");
        assert!((0..n).all(|i| m.fin(i) >= 180), "FIN at best 180 ns");
        assert!((990..=1090).contains(&rec), "record average {rec} ns");
        assert_eq!(m.dispatch, 140);
        // The spins are shortened by their own overhead, never lengthened.
        assert!(m.status_read <= 100 && m.doorbell <= 20, "{m:?}");
    }
}
