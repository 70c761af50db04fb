//! The text summary of a profiled run: time per phase, deferred waits, dropped records.

use std::fmt;

use pto_runtime_core::{LatencyHistogram, PHASES, PhaseCounters, TaskRecord};

const PHASE_NAMES: [&str; PHASES] = ["complete", "dispatch", "deferred poll", "idle"];

/// What `pto-launch bench --profile` prints after the figures.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ProfileSummary {
    /// Per scheduler: share of the loop time per phase, in percent (complete, dispatch,
    /// deferred poll, idle).
    pub phase_percent: Vec<[f64; PHASES]>,
    /// Per scheduler: loop time in µs.
    pub loop_us: Vec<f64>,
    /// Deferred waits (FIN seen → conditions held): count, p50 and p99 in ns.
    pub deferred_waits: u64,
    /// Median deferred wait, ns.
    pub deferred_p50_ns: Option<u64>,
    /// 99th-percentile deferred wait, ns.
    pub deferred_p99_ns: Option<u64>,
    /// Task records kept.
    pub records: u64,
    /// Task records the ring had no room for.
    pub dropped_records: u64,
}

impl ProfileSummary {
    /// Summarises one run's counters and records.
    pub fn new(
        phases: &[PhaseCounters],
        records: &[TaskRecord],
        dropped: u64,
        ticks_per_us: u64,
    ) -> Self {
        let mut waits = LatencyHistogram::default();
        for r in records.iter().filter(|r| r.deferred_done > 0) {
            waits.record(r.deferred_done.saturating_sub(r.fin));
        }
        let ns = |ticks: u64| ticks * 1000 / ticks_per_us.max(1);
        ProfileSummary {
            phase_percent: phases
                .iter()
                .map(|c| std::array::from_fn(|i| 100.0 * c.ticks[i] as f64 / c.total.max(1) as f64))
                .collect(),
            loop_us: phases
                .iter()
                .map(|c| c.total as f64 / ticks_per_us.max(1) as f64)
                .collect(),
            deferred_waits: waits.count(),
            deferred_p50_ns: waits.quantile(0.5).map(ns),
            deferred_p99_ns: waits.quantile(0.99).map(ns),
            records: records.len() as u64,
            dropped_records: dropped,
        }
    }
}

impl fmt::Display for ProfileSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (p, us)) in self.phase_percent.iter().zip(&self.loop_us).enumerate() {
            write!(
                f,
                "  scheduler {i}: loop {} =",
                crate::human::nanos(us * 1e3)
            )?;
            for (name, pct) in PHASE_NAMES.iter().zip(p) {
                write!(f, " {name} {pct:.1}%")?;
            }
            writeln!(f)?;
        }
        match (self.deferred_p50_ns, self.deferred_p99_ns) {
            (Some(p50), Some(p99)) => writeln!(
                f,
                "  deferred waits: {} (p50 {}, p99 {})",
                self.deferred_waits,
                crate::human::nanos(p50 as f64),
                crate::human::nanos(p99 as f64)
            )?,
            _ => writeln!(f, "  deferred waits: none")?,
        }
        write!(
            f,
            "  task records: {} kept, {} dropped",
            self.records, self.dropped_records
        )
    }
}
