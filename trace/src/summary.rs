//! What a trace says about its run, read back from the Chrome trace this crate writes
//! ([`crate::chrome_trace`]): each kernel's count and durations, each core's and each
//! class's busy share of the makespan, and the tasks skipped or cancelled. Any run's trace
//! serves, from the simulator or an NPU. A trace that carries the run's dependencies
//! ([`crate::add_dependencies`], as `pto-launch bench --trace` of a scene writes) also gives
//! the overhead shares, computed as `bench` computes them ([`crate::overhead_shares`]) from
//! the records read back.

use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;
use serde_json::Value;

use crate::at_no_cost::{ChipLatencies, overhead_at_no_cost};
use crate::critical::{CriticalPath, critical_path};
use crate::overhead::{OverheadShares, overhead_shares};
use crate::read::{RunTrace, Slice};

/// One kernel's slices: how many, and how long they ran.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KernelSummary {
    /// The kernel's name in the trace (an SPMD task's blocks count as its kernel's).
    pub name: String,
    /// Slices (executions: a task of several blocks has one per block).
    pub count: usize,
    /// Their summed duration, in ns.
    pub total_ns: u64,
    /// Median duration, in ns.
    pub median_ns: u64,
    /// 99th percentile (nearest rank), in ns.
    pub p99_ns: u64,
}

/// One core's slices and its busy share of the makespan.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CoreSummary {
    /// The core's id.
    pub core: u32,
    /// The worker class of its slices (`Aic`, `Aiv`, `Mix`).
    pub class: String,
    /// Slices it ran.
    pub slices: usize,
    /// Their summed duration, in ns.
    pub busy_ns: u64,
    /// `busy_ns` over the makespan.
    pub utilisation: f64,
}

/// One worker class's cores taken together.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClassSummary {
    /// The class (`Aic`, `Aiv`, `Mix`).
    pub class: String,
    /// Cores that ran a slice of it.
    pub cores: usize,
    /// Their summed busy time, in ns.
    pub busy_ns: u64,
    /// `busy_ns` over `cores` times the makespan.
    pub utilisation: f64,
}

/// A run as its trace shows it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TraceSummary {
    /// First kernel start to last kernel end, in ns.
    pub makespan_ns: u64,
    /// Kernel slices.
    pub slices: usize,
    /// Tasks skipped (a false predicate at dispatch).
    pub skipped: usize,
    /// Tasks finished cancelled.
    pub cancelled: usize,
    /// Per kernel, by total duration (longest first).
    pub kernels: Vec<KernelSummary>,
    /// Per core, by id.
    pub cores: Vec<CoreSummary>,
    /// Per class, by name.
    pub classes: Vec<ClassSummary>,
    /// The overhead shares, when the trace carries the run's dependencies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overhead: Option<OverheadShares>,
    /// The same DAG on the same cores at no cost under the a2a3 chip's latencies (FINs
    /// polled; [`crate::overhead_at_no_cost`]), when the trace carries the run's
    /// dependencies: the part of `overhead` no scheduler removes on that chip.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overhead_at_no_cost: Option<OverheadShares>,
    /// The critical path and its blame, when the trace carries the run's dependencies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub critical_path: Option<CriticalPath>,
}

/// Why a file is not a trace this crate can read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SummaryError {
    /// No `traceEvents` array: not a Chrome trace.
    #[error("not a Chrome trace: it has no `traceEvents` array")]
    NotATrace,
    /// An event lacks what the writer always puts in it.
    #[error("event {index} of the trace is malformed: {what}")]
    Malformed {
        /// The event's index in `traceEvents`.
        index: usize,
        /// What is wrong with it.
        what: &'static str,
    },
    /// No kernel ran: nothing to summarise.
    #[error("the trace holds no kernel slice (no task ran on a core, or it kept no records)")]
    NoSlices,
    /// The file is not JSON, or not a Chrome trace's shape (the parser's words).
    #[error("not a trace this reader understands: {0}")]
    Unreadable(String),
}

/// Summarises the run `trace` (a Chrome trace this crate wrote, held as JSON) shows; see
/// [`RunTrace::from_reader`] for a file read as it is parsed.
pub fn summarize(trace: &Value) -> Result<TraceSummary, SummaryError> {
    Ok(RunTrace::from_value(trace)?.summary())
}

impl RunTrace {
    /// What the run shows: the summary, and with its dependencies the overhead shares and
    /// the critical path.
    pub fn summary(&self) -> TraceSummary {
        let mut s = summary_of(&self.slices, self.skipped, self.cancelled);
        if let Some((tasks, cores)) = &self.dependencies {
            s.overhead = overhead_shares(&self.records, tasks, *cores, 1000);
            s.overhead_at_no_cost = overhead_at_no_cost(
                &self.records,
                tasks,
                *cores,
                1000,
                ChipLatencies::A2A3_POLL_NS,
            );
            s.critical_path = critical_path(&self.records, tasks, *cores, 1000);
        }
        s
    }
}

fn summary_of(slices: &[Slice], skipped: usize, cancelled: usize) -> TraceSummary {
    let t0 = slices.iter().map(|s| s.start).min().unwrap_or(0);
    let t1 = slices.iter().map(|s| s.end).max().unwrap_or(0);
    let makespan = t1.saturating_sub(t0);
    let share = |busy: u64, cores: usize| {
        if makespan == 0 || cores == 0 {
            0.0
        } else {
            busy as f64 / (makespan as f64 * cores as f64)
        }
    };
    let mut by_kernel: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    let mut by_core: BTreeMap<u32, (&str, usize, u64)> = BTreeMap::new();
    for s in slices {
        let d = s.end - s.start;
        by_kernel.entry(&s.name).or_default().push(d);
        let c = by_core.entry(s.core).or_insert((&s.class, 0, 0));
        c.1 += 1;
        c.2 += d;
    }
    let mut kernels: Vec<KernelSummary> = by_kernel
        .into_iter()
        .map(|(name, mut d)| {
            d.sort_unstable();
            KernelSummary {
                name: name.to_owned(),
                count: d.len(),
                total_ns: d.iter().sum(),
                median_ns: nearest_rank(&d, 0.5),
                p99_ns: nearest_rank(&d, 0.99),
            }
        })
        .collect();
    kernels.sort_by(|a, b| b.total_ns.cmp(&a.total_ns).then(a.name.cmp(&b.name)));
    let cores: Vec<CoreSummary> = by_core
        .iter()
        .map(|(&core, &(class, n, busy))| CoreSummary {
            core,
            class: class.to_owned(),
            slices: n,
            busy_ns: busy,
            utilisation: share(busy, 1),
        })
        .collect();
    let mut by_class: BTreeMap<&str, (usize, u64)> = BTreeMap::new();
    for c in &cores {
        let e = by_class.entry(&c.class).or_default();
        e.0 += 1;
        e.1 += c.busy_ns;
    }
    let classes = by_class
        .into_iter()
        .map(|(class, (n, busy))| ClassSummary {
            class: class.to_owned(),
            cores: n,
            busy_ns: busy,
            utilisation: share(busy, n),
        })
        .collect();
    TraceSummary {
        makespan_ns: makespan,
        slices: slices.len(),
        skipped,
        cancelled,
        kernels,
        cores,
        classes,
        overhead: None,
        overhead_at_no_cost: None,
        critical_path: None,
    }
}

/// The nearest-rank `p` quantile of sorted, non-empty `v`.
fn nearest_rank(v: &[u64], p: f64) -> u64 {
    let rank = (p * v.len() as f64).ceil() as usize;
    v[rank.clamp(1, v.len()) - 1]
}

impl fmt::Display for TraceSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} kernel slices over {:.3} µs (first start to last end); {} tasks skipped, {} \
             cancelled",
            self.slices,
            self.makespan_ns as f64 / 1000.0,
            self.skipped,
            self.cancelled
        )?;
        writeln!(f, "kernels (by total time):")?;
        writeln!(
            f,
            "  {:<24} {:>8} {:>14} {:>12} {:>12}",
            "kernel", "count", "total µs", "median µs", "p99 µs"
        )?;
        for k in &self.kernels {
            writeln!(
                f,
                "  {:<24} {:>8} {:>14.3} {:>12.3} {:>12.3}",
                k.name,
                k.count,
                k.total_ns as f64 / 1000.0,
                k.median_ns as f64 / 1000.0,
                k.p99_ns as f64 / 1000.0
            )?;
        }
        writeln!(f, "classes (busy share of cores x makespan):")?;
        for c in &self.classes {
            writeln!(
                f,
                "  {:<6} {:>3} cores  {:>6.1} %",
                c.class,
                c.cores,
                100.0 * c.utilisation
            )?;
        }
        if let Some(o) = &self.overhead {
            writeln!(
                f,
                "overhead (as bench computes it): all engines {:.2} %, has overhead {:.2} %, \
                 AIC {:.2} %, AIV {:.2} %; head {:.0} ns, tail {:.0} ns",
                100.0 * o.all_engines,
                100.0 * o.has_overhead,
                100.0 * o.aic,
                100.0 * o.aiv,
                o.head_ns,
                o.tail_ns
            )?;
        }
        if let Some(o) = &self.overhead_at_no_cost {
            writeln!(
                f,
                "  at no cost (the a2a3 chip's latencies, FINs polled): makespan {:.3} µs, \
                 all engines {:.2} %, has overhead {:.2} %",
                o.makespan_ns / 1_000.0,
                100.0 * o.all_engines,
                100.0 * o.has_overhead,
            )?;
        }
        if let Some(p) = &self.critical_path {
            let b = &p.blame;
            let of = |x: u64| 100.0 * x as f64 / p.observed_ns.max(1) as f64;
            writeln!(
                f,
                "critical path: {:.3} µs of kernels along the longest chain, against {:.3} µs \
                 observed (first submit to last end)",
                p.dependency_limited_ns as f64 / 1000.0,
                p.observed_ns as f64 / 1000.0
            )?;
            writeln!(
                f,
                "  the chain the run waited on, {} tasks: kernels {:.1} %, waiting for the \
                 orchestrator {:.1} %, for a free core {:.1} %, for the scheduler {:.1} %, \
                 front {:.1} %",
                p.chain.len(),
                of(b.kernels),
                of(b.orchestrator),
                of(b.core),
                of(b.scheduler),
                of(b.front)
            )?;
        }
        write!(f, "cores (busy share of the makespan):")?;
        for c in &self.cores {
            write!(
                f,
                "\n  core {:<4} {:<4} {:>6} slices  {:>6.1} %",
                c.core,
                c.class,
                c.slices,
                100.0 * c.utilisation
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "summary_tests.rs"]
mod tests;
