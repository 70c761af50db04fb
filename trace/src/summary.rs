//! What a trace says about its run, read back from the Chrome trace this crate writes
//! ([`crate::chrome_trace`]): each kernel's count and durations, each core's and each
//! class's busy share of the makespan, and the tasks skipped or cancelled. Any run's trace
//! serves, from the simulator or an NPU. A trace that carries the run's dependencies
//! ([`crate::add_dependencies`], as `pto-launch bench --trace` of a scene writes) also gives
//! the overhead shares, computed as `bench` computes them ([`crate::overhead_shares`]) from
//! the records read back.

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use pto_runtime_core::{CoreId, KernelId, TaskId, TaskRecord, WorkerClass};
use serde::Serialize;
use serde_json::Value;

use crate::critical::{CriticalPath, critical_path};
use crate::overhead::{OverheadShares, overhead_shares};

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
}

/// The cores' process in the traces this crate writes.
const CORES_PID: u64 = 1;

/// A kernel slice, read back.
pub(crate) struct Slice {
    /// The core that ran it.
    pub(crate) core: u32,
    /// Start and end, ns from the trace's origin.
    pub(crate) start: u64,
    pub(crate) end: u64,
    /// Its kernel's name (an SPMD block's: its kernel's).
    pub(crate) name: String,
    /// Its worker class.
    pub(crate) class: String,
    /// Its task's raw id, when the writer put it.
    pub(crate) id: Option<u64>,
}

/// Whole ns of a trace's µs (written with three decimals).
fn ns(us: f64) -> u64 {
    (us * 1000.0).round().max(0.0) as u64
}

/// Summarises the run `trace` (a Chrome trace this crate wrote) shows.
pub fn summarize(trace: &Value) -> Result<TraceSummary, SummaryError> {
    let (events, slices, skipped, cancelled) = read(trace)?;
    let mut s = summary_of(&slices, skipped, cancelled);
    if let Some((records, tasks, cores)) = dependencies(trace, events) {
        s.overhead = overhead_shares(&records, &tasks, cores, 1000);
        s.critical_path = critical_path(&records, &tasks, cores, 1000);
    }
    Ok(s)
}

/// What every reader of a trace needs: its events, its kernel slices (at least one), and the
/// tasks skipped and cancelled.
pub(crate) type Read<'a> = (&'a [Value], Vec<Slice>, usize, usize);

/// Reads `trace`'s kernel slices and counts.
pub(crate) fn read(trace: &Value) -> Result<Read<'_>, SummaryError> {
    let events = trace["traceEvents"]
        .as_array()
        .ok_or(SummaryError::NotATrace)?;
    let mut slices = Vec::new();
    let mut open: HashMap<&str, (usize, &Value)> = HashMap::new();
    let (mut skipped, mut cancelled) = (0, 0);
    for (index, e) in events.iter().enumerate() {
        let bad = |what| SummaryError::Malformed { index, what };
        let ph = e["ph"].as_str().unwrap_or("");
        let on_cores = e["pid"].as_u64() == Some(CORES_PID);
        match ph {
            "X" if on_cores => {
                let ts = e["ts"].as_f64().ok_or(bad("a slice without `ts`"))?;
                let dur = e["dur"].as_f64().ok_or(bad("a slice without `dur`"))?;
                slices
                    .push(slice(e, ns(ts), ns(ts) + ns(dur)).ok_or(bad("a slice without a core"))?);
            }
            // A kernel slice that could not nest on its core's track: an async pair.
            "b" if on_cores => {
                let id = e["id"].as_str().ok_or(bad("an async slice without `id`"))?;
                open.insert(id, (index, e));
            }
            "e" if on_cores => {
                let id = e["id"].as_str().ok_or(bad("an async slice without `id`"))?;
                let (_, b) = open
                    .remove(id)
                    .ok_or(bad("an async end without its begin"))?;
                let start = ns(b["ts"].as_f64().ok_or(bad("a slice without `ts`"))?);
                let end = ns(e["ts"].as_f64().ok_or(bad("a slice without `ts`"))?);
                slices.push(slice(b, start, end.max(start)).ok_or(bad("a slice without a core"))?);
            }
            "b" => match e["name"].as_str() {
                Some("skipped") => skipped += 1,
                Some("cancelled" | "dispatch→cancelled") => cancelled += 1,
                _ => {}
            },
            _ => {}
        }
    }
    if let Some((index, _)) = open.values().next() {
        return Err(SummaryError::Malformed {
            index: *index,
            what: "an async begin without its end",
        });
    }
    if slices.is_empty() {
        return Err(SummaryError::NoSlices);
    }
    Ok((events, slices, skipped, cancelled))
}

/// What a run's dependencies (`otherData`, [`crate::add_dependencies`]) and events say: the
/// task records (times in ns, so 1000 ticks per µs), the tasks in submission order with
/// their producers, and the (AIC, AIV) cores.
type Dependencies = (Vec<TaskRecord>, Vec<(TaskId, Vec<TaskId>)>, (u16, u16));

fn dependencies(trace: &Value, events: &[Value]) -> Option<Dependencies> {
    let other = &trace["otherData"];
    let cores = (
        u16::try_from(other["aic_cores"].as_u64()?).ok()?,
        u16::try_from(other["aiv_cores"].as_u64()?).ok()?,
    );
    let tasks: Vec<(TaskId, Vec<TaskId>)> = other["tasks"]
        .as_array()?
        .iter()
        .map(|t| {
            let producers = t[1]
                .as_array()?
                .iter()
                .map(|p| p.as_u64().map(TaskId::from_raw));
            Some((
                TaskId::from_raw(t[0].as_u64()?),
                producers.collect::<Option<_>>()?,
            ))
        })
        .collect::<Option<_>>()?;
    Some((records_of(events), tasks, cores))
}

/// The task records a trace's events show, times in ns: one per kernel slice (an SPMD
/// block's each), and one per task without a slice (DUMMY, skipped), from its scheduler span.
fn records_of(events: &[Value]) -> Vec<TaskRecord> {
    let at = |e: &Value, key: &str| ns(e["args"][key].as_f64().unwrap_or(0.0));
    let record = |e: &Value, core: Option<CoreId>, start: u64, end: u64| {
        let a = &e["args"];
        let class = match a["class"].as_str() {
            Some("Aic") => WorkerClass::Aic,
            Some("Aiv") => WorkerClass::Aiv,
            Some("Mix") => WorkerClass::Mix,
            _ => WorkerClass::Dummy,
        };
        Some(TaskRecord {
            task: TaskId::from_raw(a["id"].as_u64()?),
            kernel: KernelId(u32::try_from(a["kernel"].as_u64()?).ok()?),
            class,
            core,
            scheduler: 0,
            submit: at(e, "submit_us"),
            ready: at(e, "ready_us"),
            dispatch: at(e, "dispatch_us"),
            start,
            end,
            fin: at(e, "fin_us"),
            deferred_done: 0,
            complete: 0,
            cancelled: a["cancelled"].as_bool().unwrap_or(false),
            skipped: a["skipped"].as_bool().unwrap_or(false),
            block: u16::try_from(a["block"].as_u64().unwrap_or(0)).ok()?,
            blocks: u16::try_from(a["blocks"].as_u64().unwrap_or(1)).ok()?,
        })
    };
    let mut begins: HashMap<&str, &Value> = HashMap::new();
    let mut out: Vec<TaskRecord> = Vec::new();
    let mut spans: Vec<TaskRecord> = Vec::new();
    for e in events {
        let on_cores = e["pid"].as_u64() == Some(CORES_PID);
        let ts = ns(e["ts"].as_f64().unwrap_or(0.0));
        match e["ph"].as_str() {
            Some("X") if on_cores => {
                let core = e["tid"]
                    .as_u64()
                    .and_then(|c| u16::try_from(c).ok())
                    .map(CoreId);
                let end = ts + ns(e["dur"].as_f64().unwrap_or(0.0));
                out.extend(record(e, core, ts, end));
            }
            Some("b") => {
                if let Some(id) = e["id"].as_str() {
                    begins.insert(id, e);
                }
            }
            Some("e") => {
                let Some(b) = e["id"].as_str().and_then(|id| begins.remove(id)) else {
                    continue;
                };
                if on_cores {
                    let core = b["tid"]
                        .as_u64()
                        .and_then(|c| u16::try_from(c).ok())
                        .map(CoreId);
                    let start = ns(b["ts"].as_f64().unwrap_or(0.0));
                    out.extend(record(b, core, start, ts.max(start)));
                } else if b["cat"] == "task" {
                    spans.extend(record(b, None, 0, 0));
                }
            }
            _ => {}
        }
    }
    // A task that ran has its slices; one that did not (DUMMY, skipped), its span.
    let ran: std::collections::HashSet<TaskId> = out.iter().map(|r| r.task).collect();
    out.extend(spans.into_iter().filter(|r| !ran.contains(&r.task)));
    // As the runtime hands them back: by task, its blocks in order (the last block's record
    // is the task's for the shares, as for `bench`).
    out.sort_by_key(|r| (r.task.raw(), r.block));
    out
}

/// The kernel slice `e` describes, from `start` to `end` ns.
fn slice(e: &Value, start: u64, end: u64) -> Option<Slice> {
    let name = e["name"].as_str().unwrap_or("kernel");
    // An SPMD block is named `kernel [b/n]`: its kernel's.
    let name = match name.rsplit_once(" [") {
        Some((k, rest)) if rest.ends_with(']') => k,
        _ => name,
    };
    Some(Slice {
        core: u32::try_from(e["tid"].as_u64()?).ok()?,
        start,
        end,
        name: name.to_owned(),
        class: e["args"]["class"].as_str().unwrap_or("?").to_owned(),
        id: e["args"]["id"].as_u64(),
    })
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
