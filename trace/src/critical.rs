//! The critical path of a run, from its task records and dependencies: the longest chain of
//! kernel time through the DAG (what the run would take with every core it wanted and no
//! overhead), and the chain the run actually waited on, walked back from the last kernel to
//! end, each gap on it blamed.
//!
//! The observed chain: from the task whose kernel ended last, step to the producer that
//! ended last (the one its start waited for), until a task without producers. Between a
//! producer's end and its consumer's start the time goes, in this order, to
//! - `orchestrator`: the consumer was not submitted yet;
//! - `core`: it was ready, and every core of its class was busy;
//! - `scheduler`: it was ready with a core of its class idle, or dispatched and not started
//!   (the dispatch latency);
//!
//! and before the chain's first task, from the first submit to its start, to `front`.
//! Kernel time on the chain is `kernels`. The buckets add up to the chain's span, which
//! ends at the makespan's end.

use std::collections::HashMap;

use pto_runtime_core::{TaskId, TaskRecord, WorkerClass};
use serde::Serialize;

/// Where the time on the observed chain went, in ns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Blame {
    /// Kernels of the chain running.
    pub kernels: u64,
    /// Waiting for the orchestrator to submit the next task of the chain.
    pub orchestrator: u64,
    /// Ready, waiting for a core of its class (all busy).
    pub core: u64,
    /// Ready with a core idle, or dispatched and not started: the scheduler's part.
    pub scheduler: u64,
    /// Before the chain's first task started, from the run's first submit.
    pub front: u64,
}

/// One task of the observed chain.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ChainTask {
    /// The task (its `Display`).
    pub task: String,
    /// Its raw id.
    pub id: u64,
    /// Its kernel's id.
    pub kernel: u32,
    /// Its kernel time, in ns.
    pub kernel_ns: u64,
    /// The gap before it (its critical producer's end, or the first submit, to its start),
    /// in ns.
    pub gap_ns: u64,
}

/// A run's critical path.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CriticalPath {
    /// The longest chain of kernel time through the DAG, in ns.
    pub dependency_limited_ns: u64,
    /// First submit to last kernel end, in ns.
    pub observed_ns: u64,
    /// The chain the run waited on, first task first.
    pub chain: Vec<ChainTask>,
    /// Where the chain's time went.
    pub blame: Blame,
}

/// A task's times: its records merged (an SPMD task's blocks: earliest start, latest end).
#[derive(Clone, Copy)]
struct Times {
    class: WorkerClass,
    kernel: u32,
    ran: bool,
    submit: u64,
    ready: u64,
    dispatch: u64,
    start: u64,
    end: u64,
}

/// The critical path of `records` for `tasks` (submission order, with producers) on
/// `cores` = (AIC, AIV); `None` if a task has no record or no kernel ran. Times are the
/// records' (ticks); the result is in ns at `ticks_per_us`.
pub fn critical_path(
    records: &[TaskRecord],
    tasks: &[(TaskId, Vec<TaskId>)],
    cores: (u16, u16),
    ticks_per_us: u64,
) -> Option<CriticalPath> {
    let mut times: HashMap<TaskId, Times> = HashMap::with_capacity(tasks.len());
    for r in records {
        let ran = r.core.is_some() && r.end >= r.start && r.start > 0;
        let t = times.entry(r.task).or_insert(Times {
            class: r.class,
            kernel: r.kernel.0,
            ran,
            submit: r.submit,
            ready: r.ready,
            dispatch: r.dispatch,
            start: r.start,
            end: r.end,
        });
        if ran && !t.ran {
            (t.start, t.end, t.dispatch, t.ran) = (r.start, r.end, r.dispatch, true);
        } else if ran {
            t.start = t.start.min(r.start);
            t.end = t.end.max(r.end);
            t.dispatch = t.dispatch.min(r.dispatch);
        }
    }
    // When each task let its consumers go: its kernel's end, or (no core) when it was ready.
    let mut done: HashMap<TaskId, u64> = HashMap::with_capacity(tasks.len());
    let mut longest: HashMap<TaskId, u64> = HashMap::with_capacity(tasks.len());
    let mut critical: HashMap<TaskId, TaskId> = HashMap::new();
    let (mut first_submit, mut last) = (u64::MAX, None::<(u64, TaskId)>);
    for (id, producers) in tasks {
        let t = times.get(id)?;
        first_submit = first_submit.min(t.submit);
        let latest = producers
            .iter()
            .filter_map(|p| done.get(p).map(|&d| (d, *p)))
            .max_by_key(|&(d, p)| (d, std::cmp::Reverse(p.raw())));
        if let Some((_, p)) = latest {
            critical.insert(*id, p);
        }
        let kernel = if t.ran { t.end - t.start } else { 0 };
        let before = producers
            .iter()
            .filter_map(|p| longest.get(p))
            .max()
            .copied()
            .unwrap_or(0);
        longest.insert(*id, before + kernel);
        let end = if t.ran {
            t.end
        } else {
            latest.map_or(t.ready, |(d, _)| d.max(t.submit))
        };
        done.insert(*id, end);
        if t.ran && last.is_none_or(|(e, _)| end > e) {
            last = Some((end, *id));
        }
    }
    let (end, mut at) = last?;
    let busy = Busy::of(&times, cores);
    let mut chain = Vec::new();
    let mut blame = Blame::default();
    loop {
        let t = times[&at];
        let kernel_ns = if t.ran { t.end - t.start } else { 0 };
        blame.kernels += kernel_ns;
        let start = if t.ran { t.start } else { done[&at] };
        let from = match critical.get(&at) {
            Some(p) => done[p],
            None => first_submit,
        };
        let gap = start.saturating_sub(from);
        if critical.contains_key(&at) {
            let submitted = t.submit.clamp(from, start);
            blame.orchestrator += submitted - from;
            let dispatched = if t.ran {
                t.dispatch.clamp(submitted, start)
            } else {
                start
            };
            let full = busy.full_within(t.class, submitted, dispatched);
            blame.core += full;
            blame.scheduler += (dispatched - submitted - full) + (start - dispatched);
        } else {
            blame.front += gap;
        }
        chain.push(ChainTask {
            task: at.to_string(),
            id: at.raw(),
            kernel: t.kernel,
            kernel_ns,
            gap_ns: gap,
        });
        match critical.get(&at) {
            Some(&p) => at = p,
            None => break,
        }
    }
    chain.reverse();
    let ns = |ticks: u64| (u128::from(ticks) * 1000 / u128::from(ticks_per_us.max(1))) as u64;
    for c in &mut chain {
        c.kernel_ns = ns(c.kernel_ns);
        c.gap_ns = ns(c.gap_ns);
    }
    let blame = Blame {
        kernels: ns(blame.kernels),
        orchestrator: ns(blame.orchestrator),
        core: ns(blame.core),
        scheduler: ns(blame.scheduler),
        front: ns(blame.front),
    };
    Some(CriticalPath {
        dependency_limited_ns: ns(longest.values().max().copied().unwrap_or(0)),
        observed_ns: ns(end.saturating_sub(first_submit)),
        chain,
        blame,
    })
}

/// Per class, the spans of time every core of it was running, to find when a ready task
/// waited for a core: built once, then each lookup is a binary search and the spans it
/// overlaps (the chain's steps cost O(log n) each, not O(n)).
struct Busy {
    /// Per class index: disjoint `[from, to)` spans, in order.
    full: [Vec<(u64, u64)>; 2],
}

impl Busy {
    fn of(times: &HashMap<TaskId, Times>, cores: (u16, u16)) -> Self {
        let mut steps: [Vec<(u64, i64)>; 2] = [Vec::new(), Vec::new()];
        for t in times.values().filter(|t| t.ran) {
            for &c in class_index(t.class) {
                steps[c].push((t.start, 1));
                steps[c].push((t.end, -1));
            }
        }
        let cores = [i64::from(cores.0), i64::from(cores.1)];
        let full = [0, 1].map(|c| {
            let s = &mut steps[c];
            // Ends before starts at one instant: a core freed and taken at once was not full.
            s.sort_unstable();
            let mut spans: Vec<(u64, u64)> = Vec::new();
            let mut push = |from: u64, to: u64| match spans.last_mut() {
                Some(last) if last.1 == from => last.1 = to,
                _ => spans.push((from, to)),
            };
            let (mut running, mut prev) = (0i64, 0u64);
            for &(at, d) in s.iter() {
                if running >= cores[c] && at > prev {
                    push(prev, at);
                }
                running += d;
                prev = at;
            }
            if running >= cores[c] {
                push(prev, u64::MAX);
            }
            spans
        });
        Busy { full }
    }

    /// How long within `[from, to)` every core of `class` was running (for MIX: of either
    /// class).
    fn full_within(&self, class: WorkerClass, from: u64, to: u64) -> u64 {
        let mut total = 0;
        for &c in class_index(class) {
            let spans = &self.full[c];
            let first = spans.partition_point(|&(_, end)| end <= from);
            for &(start, end) in spans[first..].iter().take_while(|&&(start, _)| start < to) {
                total += end.min(to) - start.max(from);
            }
        }
        total.min(to.saturating_sub(from))
    }
}

fn class_index(c: WorkerClass) -> &'static [usize] {
    match c {
        WorkerClass::Aic => &[0],
        WorkerClass::Aiv => &[1],
        WorkerClass::Mix => &[0, 1],
        _ => &[],
    }
}

#[cfg(test)]
#[path = "critical_tests.rs"]
mod tests;
