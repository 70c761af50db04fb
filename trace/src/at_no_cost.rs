//! A run's overhead at no cost: the figures [`overhead_shares`] would find had the run been
//! scheduled by a scheduler that costs nothing, on the same cores, with the chip's own
//! latencies left in. They are the DAG's and the chip's; what a run's own figures add is
//! the runtime's (and its host's). The shares are of that run's makespan: a run whose
//! makespan is longer may show a smaller share, so compare the overhead's time
//! (share × makespan) as well.
//!
//! The replay keeps each task's class and kernel duration and the DAG, and lays the tasks
//! out as a greedy list scheduler would: a task goes to a free core of its class the moment
//! the completions of all its producers are seen (at once, on a task without producers),
//! the earliest-submitted first; its kernel starts `dispatch` later; its completion is seen
//! a `seen` delay after its kernel ends (drawn uniformly as the silicon model draws a FIN),
//! and only then are its core free and its consumers released. A task no core ran (DUMMY,
//! skipped, cancelled) completes when it is released. A MIX task takes a core of each class.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use pto_runtime_core::{TaskId, TaskRecord};

use crate::overhead::{OverheadShares, engines_of, overhead_shares};

/// The chip's latencies a scheduler that costs nothing still pays, in the records' clock
/// ticks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChipLatencies {
    /// From dispatch to the kernel's start.
    pub dispatch: u64,
    /// From a kernel's end to its completion being seen: at least this.
    pub seen_min: u64,
    /// The same, on average (uniform on `seen_min ..= 2 * seen_avg - seen_min`).
    pub seen_avg: u64,
}

impl ChipLatencies {
    /// The published a2a3 figures (as `pto_sim::Silicon::a2a3` models them), in ns, for a
    /// scheduler polling status words: dispatch 140 ns, a FIN seen 180 ns after its kernel
    /// ends at best and 600 ns on average.
    pub const A2A3_POLL_NS: ChipLatencies = ChipLatencies {
        dispatch: 140,
        seen_min: 180,
        seen_avg: 600,
    };
}

/// A task as the replay lays it out.
struct Planned {
    /// Indices of its consumers.
    consumers: Vec<usize>,
    /// Producers whose completion has not been seen yet.
    waiting: usize,
    /// AIC and AIV cores it takes (none for a task no core ran).
    takes: [u16; 2],
    duration: u64,
    record: TaskRecord,
}

/// The overhead at no cost of the run `records` (one per task, as [`overhead_shares`] takes
/// them) of `tasks` (submission order, with producers) on `cores` = (AIC, AIV) cores, with
/// the chip's `latencies`; `None` where [`overhead_shares`] would give none.
pub fn overhead_at_no_cost(
    records: &[TaskRecord],
    tasks: &[(TaskId, Vec<TaskId>)],
    cores: (u16, u16),
    ticks_per_us: u64,
    latencies: ChipLatencies,
) -> Option<OverheadShares> {
    let rec: HashMap<TaskId, &TaskRecord> = records.iter().map(|r| (r.task, r)).collect();
    let index: HashMap<TaskId, usize> = tasks.iter().enumerate().map(|(i, t)| (t.0, i)).collect();
    let mut plan = Vec::with_capacity(tasks.len());
    for (id, _) in tasks {
        let r = *rec.get(id)?;
        let mut takes = [0, 0];
        for &class in engines_of(r) {
            takes[class] = 1;
        }
        plan.push(Planned {
            consumers: Vec::new(),
            waiting: 0,
            takes,
            duration: r.end.saturating_sub(r.start),
            record: *r,
        });
    }
    for (i, (_, deps)) in tasks.iter().enumerate() {
        let mut deps: Vec<usize> = deps.iter().filter_map(|d| index.get(d).copied()).collect();
        deps.sort_unstable();
        deps.dedup();
        plan[i].waiting = deps.len();
        for d in deps {
            plan[d].consumers.push(i);
        }
    }
    let mut free = [cores.0, cores.1];
    let mut ready = BinaryHeap::new();
    // Completions to be seen: (when, task).
    let mut seen = BinaryHeap::new();
    for (i, p) in plan.iter().enumerate() {
        if p.waiting == 0 {
            ready.push(Reverse(i));
        }
    }
    let mut now = 0u64;
    loop {
        // Place what is ready, the earliest-submitted first; a task whose cores are all
        // busy waits, and later tasks of a class with a free core go ahead of it.
        let mut held = Vec::new();
        while let Some(Reverse(i)) = ready.pop() {
            let p = &mut plan[i];
            if p.takes[0] > free[0] || p.takes[1] > free[1] {
                held.push(Reverse(i));
                continue;
            }
            free[0] -= p.takes[0];
            free[1] -= p.takes[1];
            let r = &mut p.record;
            r.dispatch = now;
            if p.takes == [0, 0] {
                (r.start, r.end, r.fin) = (now, now, now);
                seen.push(Reverse((now, i)));
                continue;
            }
            r.start = now + latencies.dispatch;
            r.end = r.start + p.duration;
            // Drawn for the task, not for its turn: a replay whose ties fall otherwise (the
            // same run in another clock's ticks) still gives each task its delay.
            r.fin = r.end + seen_delay(latencies, i as u64 + 1);
            seen.push(Reverse((r.fin, i)));
        }
        ready.extend(held);
        let Some(Reverse((at, i))) = seen.pop() else {
            break;
        };
        now = at;
        free[0] += plan[i].takes[0];
        free[1] += plan[i].takes[1];
        for c in std::mem::take(&mut plan[i].consumers) {
            plan[c].waiting -= 1;
            if plan[c].waiting == 0 {
                ready.push(Reverse(c));
            }
        }
    }
    // A task left waiting (a cycle: not a run's DAG) or unplaced (it needs a class with no
    // cores) leaves no such run.
    if !ready.is_empty() || plan.iter().any(|p| p.waiting > 0) {
        return None;
    }
    let laid: Vec<TaskRecord> = plan.iter().map(|p| p.record).collect();
    overhead_shares(&laid, tasks, cores, ticks_per_us)
}

/// The `n`th seen delay: uniform on `seen_min ..= 2 * seen_avg - seen_min` (a fixed mix of
/// `n`, so a replay repeats). The draw is a fraction of that width, so the same run in
/// another clock's ticks draws the same delays, to the rounding.
fn seen_delay(l: ChipLatencies, n: u64) -> u64 {
    let min = l.seen_min.min(l.seen_avg);
    let width = 2 * (l.seen_avg - min);
    if width == 0 {
        return min;
    }
    let mut x = n.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^= x >> 31;
    // The top 32 bits as a fraction of 2^32, times the width (at most 2^32 of it counts).
    min + (((x >> 32) * width.min(u64::from(u32::MAX)) + (1 << 31)) >> 32)
}

#[cfg(test)]
#[path = "at_no_cost_tests.rs"]
mod tests;
