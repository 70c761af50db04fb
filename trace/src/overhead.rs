//! The scheduler's overhead share of a run's makespan, as the C++ runtime's docs define it
//! (its `sched_overhead_analysis` tool), from the profile's task records and the dependency
//! graph.
//!
//! - The window (makespan) is `[first kernel start, last kernel end]`.
//! - A task is ready when the last of its producers' kernels ended (a task without producers:
//!   at its own dispatch), and waits undispatched from then until its dispatch.
//! - An engine class (AIC, AIV) is in overhead at an instant when one of its cores is idle
//!   (fewer of its tasks are between start and end than it has cores) and one of its tasks
//!   is ready and undispatched. A dispatched task that has not started is not overhead (it
//!   is placed; its wait is the dispatch latency, the head overhead).
//! - `all_engines`: every engine class present is in overhead at once; `has_overhead`: some
//!   class has ready undispatched work, and every class that has is in overhead.
//!
//! Every share is a fraction of the window. Head overhead is dispatch to kernel start, tail
//! overhead kernel end to the scheduler seeing the FIN, both averaged over the tasks. MIX
//! tasks count on both classes; DUMMY tasks run on no core and are ready when their
//! producers end, which is when their consumers may be.

use std::collections::HashMap;

use pto_runtime_core::{TaskId, TaskRecord, WorkerClass};

/// The overhead figures of one run, times in ns.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct OverheadShares {
    /// First kernel start to last kernel end.
    pub makespan_ns: f64,
    /// Share of the makespan the AIC class was in overhead.
    pub aic: f64,
    /// The same for AIV.
    pub aiv: f64,
    /// Share in which every class present was in overhead.
    pub all_engines: f64,
    /// Share in which every class with ready undispatched work was in overhead.
    pub has_overhead: f64,
    /// Mean dispatch to kernel start.
    pub head_ns: f64,
    /// Mean kernel end to FIN seen.
    pub tail_ns: f64,
}

/// One change of a class's counts at an instant.
#[derive(Clone, Copy)]
struct Event {
    at: u64,
    class: usize,
    running: i64,
    ready: i64,
}

/// The engine classes (0 AIC, 1 AIV) whose cores a record's task took: none for a task no
/// core ran (DUMMY, skipped, cancelled before dispatch), both for a MIX task.
pub(crate) fn engines_of(r: &TaskRecord) -> &'static [usize] {
    match r.class {
        _ if r.core.is_none() => &[],
        WorkerClass::Aic => &[0],
        WorkerClass::Aiv => &[1],
        WorkerClass::Mix => &[0, 1],
        _ => &[],
    }
}

/// The shares of `records` (one run's) for `tasks` (every task of the run in submission
/// order, with its producers) on `cores` = (AIC, AIV) cores;
/// `ticks_per_us` converts the stamps. `None` if a task has no record or none ran on a core.
pub fn overhead_shares(
    records: &[TaskRecord],
    tasks: &[(TaskId, Vec<TaskId>)],
    cores: (u16, u16),
    ticks_per_us: u64,
) -> Option<OverheadShares> {
    let rec: HashMap<TaskId, &TaskRecord> = records.iter().map(|r| (r.task, r)).collect();
    // Kernel end of each task in submission order (a DUMMY's: when it became ready).
    let mut end: HashMap<TaskId, u64> = HashMap::with_capacity(records.len());
    let mut events = Vec::with_capacity(records.len() * 4);
    let (mut head, mut tail, mut timed) = (0u64, 0u64, 0u64);
    let (mut w0, mut w1) = (u64::MAX, 0u64);
    for (id, deps) in tasks {
        let r = rec.get(id)?;
        let producers = deps.iter().filter_map(|p| end.get(p).copied()).max();
        let ready = producers.unwrap_or(r.dispatch);
        let classes = engines_of(r);
        if classes.is_empty() {
            end.insert(*id, ready);
            continue;
        }
        end.insert(*id, r.end);
        w0 = w0.min(r.start);
        w1 = w1.max(r.end);
        head += r.start.saturating_sub(r.dispatch);
        tail += r.fin.saturating_sub(r.end);
        timed += 1;
        for &class in classes {
            events.push(Event {
                at: r.start,
                class,
                running: 1,
                ready: 0,
            });
            events.push(Event {
                at: r.end.max(r.start),
                class,
                running: -1,
                ready: 0,
            });
            if ready < r.dispatch {
                events.push(Event {
                    at: ready,
                    class,
                    running: 0,
                    ready: 1,
                });
                events.push(Event {
                    at: r.dispatch,
                    class,
                    running: 0,
                    ready: -1,
                });
            }
        }
    }
    if timed == 0 || w1 <= w0 {
        return None;
    }
    events.sort_by_key(|e| e.at);
    let k = [i64::from(cores.0), i64::from(cores.1)];
    let present = [0, 1].map(|c| events.iter().any(|e| e.class == c && e.running > 0));
    let (mut running, mut ready) = ([0i64; 2], [0i64; 2]);
    let mut span = [0u64; 4]; // aic, aiv, all, has
    let mut prev = w0;
    let mut i = 0;
    while i < events.len() {
        let at = events[i].at;
        let (from, to) = (prev.max(w0), at.min(w1));
        if to > from {
            let over = [0, 1].map(|c| k[c] > running[c] && ready[c] > 0);
            let d = to - from;
            for c in 0..2 {
                span[c] += d * u64::from(over[c]);
            }
            let all = (0..2).filter(|&c| present[c]).all(|c| over[c]);
            let some_ready = (0..2).any(|c| ready[c] > 0);
            let has = some_ready && (0..2).filter(|&c| ready[c] > 0).all(|c| over[c]);
            span[2] += d * u64::from(all);
            span[3] += d * u64::from(has);
        }
        prev = prev.max(at);
        while i < events.len() && events[i].at == at {
            running[events[i].class] += events[i].running;
            ready[events[i].class] += events[i].ready;
            i += 1;
        }
    }
    let window = (w1 - w0) as f64;
    let ns = |ticks: f64| ticks * 1_000.0 / ticks_per_us.max(1) as f64;
    Some(OverheadShares {
        makespan_ns: ns(window),
        aic: span[0] as f64 / window,
        aiv: span[1] as f64 / window,
        all_engines: span[2] as f64 / window,
        has_overhead: span[3] as f64 / window,
        head_ns: ns(head as f64 / timed as f64),
        tail_ns: ns(tail as f64 / timed as f64),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pto_runtime_core::{CoreId, KernelId};

    fn record(seq: u64, class: WorkerClass, [dispatch, start, end, fin]: [u64; 4]) -> TaskRecord {
        TaskRecord {
            task: TaskId::new(1, 0, pto_runtime_core::Seq(seq)),
            kernel: KernelId(0),
            class,
            core: Some(CoreId(0)),
            scheduler: 0,
            submit: 0,
            ready: 0,
            dispatch,
            start,
            end,
            fin,
            deferred_done: 0,
            complete: fin,
            cancelled: false,
            skipped: false,
            block: 0,
            blocks: 1,
        }
    }

    #[test]
    fn shares_follow_the_definition_on_a_hand_made_run() {
        // One AIC and one AIV core, 1 tick = 1 ns. A (AIC) runs 100..1100; B (AIV) and C
        // (AIC) need A; C is dispatched at 1400, B at 1500.
        let a = record(0, WorkerClass::Aic, [0, 100, 1100, 1300]);
        let c = record(1, WorkerClass::Aic, [1400, 1500, 2000, 2100]);
        let b = record(2, WorkerClass::Aiv, [1500, 1600, 2600, 2700]);
        let tasks = vec![
            (a.task, vec![]),
            (c.task, vec![a.task]),
            (b.task, vec![a.task]),
        ];
        let s = overhead_shares(&[a, b, c], &tasks, (1, 1), 1_000).unwrap();
        assert_eq!(s.makespan_ns, 2500.0);
        // 1100..1400 both classes wait with an idle core; 1400..1500 AIV alone.
        assert!((s.aic - 300.0 / 2500.0).abs() < 1e-9, "{s:?}");
        assert!((s.aiv - 400.0 / 2500.0).abs() < 1e-9, "{s:?}");
        assert!((s.all_engines - 300.0 / 2500.0).abs() < 1e-9, "{s:?}");
        assert!((s.has_overhead - 400.0 / 2500.0).abs() < 1e-9, "{s:?}");
        assert_eq!((s.head_ns, s.tail_ns), (100.0, 400.0 / 3.0));
    }

    #[test]
    fn a_busy_core_is_not_overhead_and_a_missing_record_gives_none() {
        // One AIV core: B is ready at 1000 but the core runs C until 2000.
        let a = record(0, WorkerClass::Aiv, [0, 0, 1000, 1000]);
        let c = record(1, WorkerClass::Aiv, [0, 1000, 2000, 2000]);
        let b = record(2, WorkerClass::Aiv, [2000, 2000, 3000, 3000]);
        let tasks = vec![(a.task, vec![]), (c.task, vec![]), (b.task, vec![a.task])];
        let s = overhead_shares(&[a, b, c], &tasks, (0, 1), 1_000).unwrap();
        assert_eq!((s.aiv, s.all_engines, s.has_overhead), (0.0, 0.0, 0.0));
        assert_eq!(overhead_shares(&[a, c], &tasks, (0, 1), 1_000), None);
    }
}
