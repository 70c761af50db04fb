//! Task records as a Chrome trace that Perfetto can draw: every track well nested.
//!
//! - One track per simulated core: the kernel slices it ran (a core runs one token at a
//!   time, so they follow each other).
//! - The scheduler process: per task, an async slice from dispatch to complete (ready to
//!   complete for DUMMY tasks), and for a deferred task an async slice from its FIN to its
//!   conditions holding. Thousands of these overlap; async slices may, so Perfetto stacks
//!   them instead of dropping them.
//! - A kernel slice that would overlap another on its core without nesting (a MIX task's
//!   record spans its lanes, but names only its first lane's core) becomes an async slice
//!   of the cores process instead.
//!
//! Timestamps are whole nanoseconds, written in µs with three decimals, so what a reader
//! computes from `ts` and `dur` nests exactly as the writer checked it.

use crate::names::{KernelNames, Unnamed};
use pto_runtime_core::{KernelId, QueueReport, TaskId, TaskRecord, WorkerClass};
use serde_json::{Value, json};

const CORES_PID: u32 = 1;
const SCHEDULERS_PID: u32 = 2;

/// The Chrome trace JSON of `records`, whose timestamps count `ticks_per_us` per µs; kernel
/// slices are named `kernel N` (see [`chrome_trace_named`] for the kernels' names).
pub fn chrome_trace(records: &[TaskRecord], ticks_per_us: u64) -> Value {
    chrome_trace_named(records, ticks_per_us, &Unnamed)
}

/// A kernel slice before it becomes JSON: its core, when (ns from the trace's origin), and
/// the record it draws (its name and arguments are made as it is written).
struct KernelSlice {
    tid: u32,
    start: u64,
    end: u64,
    record: usize,
}

/// A slice as it becomes JSON.
struct Slice {
    pid: u32,
    tid: u32,
    start: u64,
    end: u64,
    name: String,
    args: Value,
}

/// Like [`chrome_trace`], with each kernel slice named as `kernels` names its kernel (`kernel
/// N` for an id it does not name), and the id in the slice's arguments. The whole trace is
/// built in memory: to write a large run, [`stream_chrome_trace`] writes event by event.
pub fn chrome_trace_named(
    records: &[TaskRecord],
    ticks_per_us: u64,
    kernels: &(impl KernelNames + ?Sized),
) -> Value {
    let mut events = Vec::new();
    let never = events_of(records, ticks_per_us, kernels, &mut |e| {
        events.push(e);
        Ok::<(), std::convert::Infallible>(())
    });
    let Ok(_) = never;
    json!({"traceEvents": events, "displayTimeUnit": "ns"})
}

/// Every task in submission order with its producers ([`add_dependencies`]).
pub type Producers = [(TaskId, Vec<TaskId>)];

/// What a streamed trace carries beside its records ([`stream_chrome_trace`]): what
/// [`add_queue_counters`] and [`add_dependencies`] add to a trace built in memory.
#[derive(Clone, Copy, Debug, Default)]
pub struct TraceExtras<'a> {
    /// Each scheduler's completion-queue counters.
    pub queues: &'a [QueueReport],
    /// Every task in submission order with its producers, and the AIC and AIV cores.
    pub dependencies: Option<(&'a Producers, (u16, u16))>,
}

/// Writes the Chrome trace of `records` to `out` event by event, as [`chrome_trace_named`]
/// and then [`add_queue_counters`] and [`add_dependencies`] (with `extras`) would build it:
/// no more than one event is JSON at a time, so a trace of a million tasks never sits whole
/// in memory (the kernel slices wait, a few words each, to be laid out per core).
pub fn stream_chrome_trace(
    out: &mut impl std::io::Write,
    records: &[TaskRecord],
    ticks_per_us: u64,
    kernels: &(impl KernelNames + ?Sized),
    extras: TraceExtras<'_>,
) -> Result<(), TraceError> {
    out.write_all(br#"{"displayTimeUnit":"ns","traceEvents":["#)
        .map_err(TraceError::Io)?;
    let mut first = true;
    let last_end = std::cell::Cell::new(0.0f64);
    let mut emit = |e: Value| -> Result<(), TraceError> {
        if let Some(ts) = e["ts"].as_f64() {
            last_end.set(last_end.get().max(ts + e["dur"].as_f64().unwrap_or(0.0)));
        }
        if !first {
            out.write_all(b",").map_err(TraceError::Io)?;
        }
        first = false;
        serde_json::to_writer(&mut *out, &e)?;
        Ok(())
    };
    events_of(records, ticks_per_us, kernels, &mut emit)?;
    for e in queue_events(extras.queues, last_end.get()) {
        emit(e)?;
    }
    out.write_all(b"]").map_err(TraceError::Io)?;
    if let Some((tasks, cores)) = extras.dependencies {
        write!(
            out,
            r#","otherData":{{"aic_cores":{},"aiv_cores":{},"tasks":["#,
            cores.0, cores.1
        )
        .map_err(TraceError::Io)?;
        for (i, (t, p)) in tasks.iter().enumerate() {
            let sep = if i == 0 { "" } else { "," };
            let producers: Vec<u64> = p.iter().map(|p| p.raw()).collect();
            write!(out, "{sep}[{},", t.raw()).map_err(TraceError::Io)?;
            serde_json::to_writer(&mut *out, &producers)?;
            out.write_all(b"]").map_err(TraceError::Io)?;
        }
        out.write_all(b"]}").map_err(TraceError::Io)?;
    }
    out.write_all(b"}").map_err(TraceError::Io)?;
    out.flush().map_err(TraceError::Io)
}

/// The trace's clock for `records`: whole ns from the earliest submit stamp.
fn ns_clock(records: &[TaskRecord], ticks_per_us: u64) -> impl Fn(u64) -> u64 {
    let origin = records
        .iter()
        .map(|r| r.submit)
        .filter(|&t| t > 0)
        .min()
        .unwrap_or(0);
    let tpu = u128::from(ticks_per_us.max(1));
    move |t: u64| (u128::from(t.saturating_sub(origin)) * 1000 / tpu).min(u64::MAX as u128) as u64
}

/// `records` with their stamps in the whole ns a trace of them shows (a stamp of 0, never
/// taken, stays 0), so what is computed from a run's records and from its trace agrees.
pub fn records_in_ns(records: &[TaskRecord], ticks_per_us: u64) -> Vec<TaskRecord> {
    let ns = ns_clock(records, ticks_per_us);
    let at = |t: u64| if t == 0 { 0 } else { ns(t) };
    records
        .iter()
        .map(|r| TaskRecord {
            submit: at(r.submit),
            ready: at(r.ready),
            dispatch: at(r.dispatch),
            start: at(r.start),
            end: at(r.end),
            fin: at(r.fin),
            deferred_done: at(r.deferred_done),
            complete: at(r.complete),
            ..*r
        })
        .collect()
}

/// Hands every event of the trace of `records` to `emit`, in the order a trace built in
/// memory lists them.
fn events_of<E>(
    records: &[TaskRecord],
    ticks_per_us: u64,
    kernels: &(impl KernelNames + ?Sized),
    emit: &mut impl FnMut(Value) -> Result<(), E>,
) -> Result<(), E> {
    let ns = ns_clock(records, ticks_per_us);
    let name = |k: KernelId| {
        kernels
            .kernel_name(k)
            .map_or_else(|| format!("kernel {}", k.0), str::to_owned)
    };
    let args = |r: &TaskRecord| {
        let mut args = json!({
            "task": format!("{}", r.task),
            "id": r.task.raw(),
            "kernel": r.kernel.0,
            "class": format!("{:?}", r.class),
            "ready_us": us(ns(r.ready)),
            "submit_us": us(ns(r.submit)),
            "dispatch_us": us(ns(r.dispatch)),
            "fin_us": us(ns(r.fin)),
            "cancelled": r.cancelled,
            "skipped": r.skipped,
        });
        if r.blocks > 1 {
            args["block"] = json!(r.block);
            args["blocks"] = json!(r.blocks);
        }
        args
    };
    emit(
        json!({"ph": "M", "pid": CORES_PID, "name": "process_name", "args": {"name": "AICore cores"}}),
    )?;
    emit(
        json!({"ph": "M", "pid": SCHEDULERS_PID, "name": "process_name", "args": {"name": "AICPU schedulers"}}),
    )?;
    let mut kernel_slices = Vec::new();
    let mut cores = std::collections::BTreeSet::new();
    let mut scheds = std::collections::BTreeSet::new();
    for (i, r) in records.iter().enumerate() {
        // A task of several blocks has a record per block: each block is a slice on its own
        // core, named with its block; the task's life on its scheduler is drawn once.
        if let Some(core) = r.core.filter(|_| r.end >= r.start && r.start > 0) {
            cores.insert(core.0);
            kernel_slices.push(KernelSlice {
                tid: u32::from(core.0),
                start: ns(r.start),
                end: ns(r.end),
                record: i,
            });
        }
        scheds.insert(r.scheduler);
        if r.block > 0 {
            continue;
        }
        let (from, what) = match r.class {
            // Cancelled without running: from ready (it was never dispatched).
            _ if r.cancelled && r.fin == 0 => (r.ready, "cancelled"),
            // Its predicate was false at dispatch: from ready to the skip.
            _ if r.skipped => (r.ready, "skipped"),
            WorkerClass::Dummy => (r.ready, "dummy"),
            _ if r.cancelled => (r.dispatch, "dispatch→cancelled"),
            _ => (r.dispatch, "dispatch→complete"),
        };
        let tid = u32::from(r.scheduler);
        if r.cancelled && r.fin > 0 {
            // It ran, so a transfer it waited on failed: the moment the scheduler found out.
            emit(json!({
                "ph": "i", "s": "t", "pid": SCHEDULERS_PID, "tid": tid,
                "name": "transfer failed", "ts": us(ns(r.complete)),
                "args": {"task": format!("{}", r.task)},
            }))?;
        }
        let span = Slice {
            pid: SCHEDULERS_PID,
            tid,
            start: ns(from),
            end: ns(r.complete).max(ns(from)),
            name: what.into(),
            args: args(r),
        };
        emit_async(emit, "task", r.task.raw(), span)?;
        if r.deferred_done > 0 {
            let s = Slice {
                pid: SCHEDULERS_PID,
                tid,
                start: ns(r.fin),
                end: ns(r.deferred_done).max(ns(r.fin)),
                name: "deferred wait".into(),
                args: json!({"task": format!("{}", r.task)}),
            };
            emit_async(emit, "deferred", r.task.raw(), s)?;
        }
    }
    let slice = |k: &KernelSlice| {
        let r = &records[k.record];
        Slice {
            pid: CORES_PID,
            tid: k.tid,
            start: k.start,
            end: k.end,
            name: if r.blocks > 1 {
                format!("{} [{}/{}]", name(r.kernel), r.block, r.blocks)
            } else {
                name(r.kernel)
            },
            args: args(r),
        }
    };
    lay_out(emit, kernel_slices, |k| records[k.record].task.raw(), slice)?;
    for c in cores {
        emit(
            json!({"ph": "M", "pid": CORES_PID, "tid": c, "name": "thread_name",
            "args": {"name": format!("core {c}")}}),
        )?;
    }
    for s in scheds {
        emit(
            json!({"ph": "M", "pid": SCHEDULERS_PID, "tid": s as u32, "name": "thread_name",
            "args": {"name": format!("scheduler {s}")}}),
        )?;
    }
    Ok(())
}

/// Adds each scheduler's completion-queue counters to `trace` (a [`chrome_trace`]): an
/// instant event per scheduler, after the last task, whose arguments are the records its
/// queues carried (cores' completion ring and engine queues: drains, entries, largest
/// batch, depth high-water) and the transfer failures and cancellations it saw.
pub fn add_queue_counters(trace: &mut Value, queues: &[QueueReport]) {
    let Some(events) = trace["traceEvents"].as_array_mut() else {
        return;
    };
    let end = events
        .iter()
        .filter_map(|e| {
            e["ts"]
                .as_f64()
                .map(|t| t + e["dur"].as_f64().unwrap_or(0.0))
        })
        .fold(0.0, f64::max);
    events.extend(queue_events(queues, end));
}

/// The completion-queue counters' events ([`add_queue_counters`]), at `end` µs.
fn queue_events(queues: &[QueueReport], end: f64) -> impl Iterator<Item = Value> + '_ {
    let q = |c: &pto_runtime_core::QueueCounters| {
        json!({"drains": c.drains, "entries": c.entries, "max_batch": c.max_batch,
            "high_water": c.high_water})
    };
    queues.iter().enumerate().map(move |(i, r)| {
        json!({
            "ph": "i", "s": "t", "pid": SCHEDULERS_PID, "tid": i as u32,
            "name": "completion queues", "ts": end,
            "args": {"cores": q(&r.cores), "engines": q(&r.engines),
                "transfer_failures": r.transfer_failures, "cancelled": r.cancelled},
        })
    })
}

/// Adds the run's shape to `trace` (a [`chrome_trace`]), for a reader that computes the
/// overhead shares ([`crate::summarize`]): every task in submission order with its
/// producers (raw ids, as the slices' `id`), and the AIC and AIV cores the run had, under
/// the trace's `otherData` (which trace viewers keep and do not draw).
pub fn add_dependencies(trace: &mut Value, tasks: &[(TaskId, Vec<TaskId>)], cores: (u16, u16)) {
    let tasks: Vec<Value> = tasks
        .iter()
        .map(|(t, p)| json!([t.raw(), p.iter().map(|p| p.raw()).collect::<Vec<_>>()]))
        .collect();
    trace["otherData"] = json!({"aic_cores": cores.0, "aiv_cores": cores.1, "tasks": tasks});
}

/// Whole nanoseconds as the trace's µs.
fn us(ns: u64) -> f64 {
    ns as f64 / 1000.0
}

/// Emits `s` as a complete (`X`) slice.
fn emit_complete<E>(emit: &mut impl FnMut(Value) -> Result<(), E>, s: Slice) -> Result<(), E> {
    emit(json!({
        "ph": "X", "pid": s.pid, "tid": s.tid, "name": s.name,
        "ts": us(s.start), "dur": us(s.end - s.start), "args": s.args,
    }))
}

/// Emits `s` as an async slice (`b` and `e`) of category `cat`, id `cat:task`.
fn emit_async<E>(
    emit: &mut impl FnMut(Value) -> Result<(), E>,
    cat: &str,
    task: u64,
    s: Slice,
) -> Result<(), E> {
    let id = format!("{cat}:{task:x}");
    let end = us(s.end.max(s.start));
    emit(json!({
        "ph": "b", "cat": cat, "id": id, "pid": s.pid, "tid": s.tid, "name": s.name,
        "ts": us(s.start), "args": s.args,
    }))?;
    emit(json!({
        "ph": "e", "cat": cat, "id": id, "pid": s.pid, "tid": s.tid, "name": s.name,
        "ts": end,
    }))
}

/// Emits each core's kernel slices as complete slices where they nest, and as async slices
/// where one would overlap another without nesting (`task` names a slice's task, `slice`
/// makes its JSON).
fn lay_out<E>(
    emit: &mut impl FnMut(Value) -> Result<(), E>,
    mut slices: Vec<KernelSlice>,
    task: impl Fn(&KernelSlice) -> u64,
    slice: impl Fn(&KernelSlice) -> Slice,
) -> Result<(), E> {
    // By core; earlier first; of two starting together, the longer (the outer) first.
    slices.sort_by_key(|k| (k.tid, k.start, std::cmp::Reverse(k.end)));
    let mut open: Vec<u64> = Vec::new();
    let mut track = None;
    for k in &slices {
        if track != Some(k.tid) {
            track = Some(k.tid);
            open.clear();
        }
        while open.last().is_some_and(|&end| end <= k.start) {
            open.pop();
        }
        if open.last().is_some_and(|&end| k.end > end) {
            emit_async(emit, "kernel", task(k), slice(k))?;
        } else {
            open.push(k.end);
            emit_complete(emit, slice(k))?;
        }
    }
    Ok(())
}

/// Why a trace could not be written.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The trace could not be encoded as JSON.
    #[error("cannot encode the trace: {0}")]
    Encode(#[from] serde_json::Error),
    /// The trace's destination refused a write.
    #[error("cannot write the trace: {0}")]
    Io(std::io::Error),
    /// The file could not be written.
    #[error("cannot write the trace to {}: {source}", path.display())]
    Write {
        /// The file.
        path: std::path::PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
}

/// Writes the Chrome trace of `records` ([`chrome_trace_named`], kernel slices named as
/// `kernels` names them) to `path`; open it in Perfetto.
///
/// ```no_run
/// # use pto_runtime_core::{KernelId, TaskRecord};
/// # fn demo(records: &[TaskRecord]) -> Result<(), pto_trace::TraceError> {
/// // `records` from a run with `Config::profile = ProfileLevel::Tasks`, whose ticks count
/// // 1000 per µs; on the simulator, `&out.kernels` names the kernels.
/// let names: &[(KernelId, &str)] = &[(KernelId(0), "gemm")];
/// pto_trace::write_chrome_trace("run.json".as_ref(), records, 1000, names)?;
/// # Ok(())
/// # }
/// ```
pub fn write_chrome_trace(
    path: &std::path::Path,
    records: &[TaskRecord],
    ticks_per_us: u64,
    kernels: &(impl KernelNames + ?Sized),
) -> Result<(), TraceError> {
    write_chrome_trace_with(path, records, ticks_per_us, kernels, TraceExtras::default())
}

/// [`write_chrome_trace`] with the queue counters and dependencies of `extras`, streamed to
/// the file event by event ([`stream_chrome_trace`]).
pub fn write_chrome_trace_with(
    path: &std::path::Path,
    records: &[TaskRecord],
    ticks_per_us: u64,
    kernels: &(impl KernelNames + ?Sized),
    extras: TraceExtras<'_>,
) -> Result<(), TraceError> {
    let at = |source| TraceError::Write {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::create(path).map_err(at)?;
    let mut out = std::io::BufWriter::new(file);
    match stream_chrome_trace(&mut out, records, ticks_per_us, kernels, extras) {
        Err(TraceError::Io(source)) => Err(at(source)),
        other => other,
    }
}

/// Writes a Chrome trace built by [`chrome_trace_named`] (and perhaps extended, e.g. by
/// [`add_queue_counters`]) to `path`.
pub fn write_trace(path: &std::path::Path, trace: &Value) -> Result<(), TraceError> {
    let text = serde_json::to_string(trace)?;
    std::fs::write(path, text).map_err(|source| TraceError::Write {
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{TraceDefect, check_chrome_trace};
    use pto_runtime_core::{CoreId, TaskId};

    fn record(core: Option<u16>, class: WorkerClass, deferred: u64) -> TaskRecord {
        TaskRecord {
            task: TaskId::from_raw(7),
            kernel: KernelId(3),
            class,
            core: core.map(CoreId),
            scheduler: 1,
            submit: 1000,
            ready: 2000,
            dispatch: 3000,
            start: 4000,
            end: 6000,
            fin: 7000,
            deferred_done: deferred,
            complete: 9000,
            cancelled: false,
            skipped: false,
            block: 0,
            blocks: 1,
        }
    }

    #[test]
    fn records_in_ns_are_the_stamps_a_trace_shows() {
        // 3 ticks a ns, from the earliest submit; a stamp never taken stays 0.
        let r = record(Some(0), WorkerClass::Aiv, 0);
        let [ns] = records_in_ns(&[r], 3_000)[..] else {
            panic!("one record in, one out")
        };
        let stamps = [ns.submit, ns.ready, ns.dispatch, ns.start, ns.end, ns.fin];
        assert_eq!(stamps, [0, 333, 666, 1000, 1666, 2000]);
        assert_eq!((ns.deferred_done, ns.complete), (0, 2666));
        let v = chrome_trace(&[r], 3_000);
        let slice = v["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["ph"] == "X")
            .unwrap();
        assert_eq!(slice["ts"].as_f64(), Some(1.0));
        assert_eq!(slice["dur"].as_f64(), Some(0.666));
    }

    #[test]
    fn kernels_on_core_tracks_and_task_spans_as_async_slices_in_microseconds() {
        let recs = [
            record(Some(2), WorkerClass::Aiv, 0),
            record(None, WorkerClass::Dummy, 0),
            record(Some(0), WorkerClass::Aic, 8000),
        ];
        let v = chrome_trace(&recs, 1000);
        check_chrome_trace(&v).unwrap();
        let ev = v["traceEvents"].as_array().unwrap();
        let kernel = ev
            .iter()
            .find(|e| e["name"] == "kernel 3" && e["tid"] == 2)
            .unwrap();
        assert_eq!(
            (
                kernel["ph"].as_str(),
                kernel["ts"].as_f64(),
                kernel["dur"].as_f64()
            ),
            (Some("X"), Some(3.0), Some(2.0))
        );
        let dummy = ev.iter().find(|e| e["name"] == "dummy").unwrap();
        assert_eq!(
            (&dummy["pid"], &dummy["ph"]),
            (&json!(SCHEDULERS_PID), &json!("b"))
        );
        let wait = ev.iter().filter(|e| e["name"] == "deferred wait");
        let ts: Vec<_> = wait.map(|e| (e["ph"].clone(), e["ts"].as_f64())).collect();
        assert_eq!(ts, [(json!("b"), Some(6.0)), (json!("e"), Some(7.0))]);
        let count = |ph: &str| ev.iter().filter(|e| e["ph"] == ph).count();
        assert_eq!(count("X"), 2, "2 kernels");
        assert_eq!((count("b"), count("e")), (4, 4), "3 task spans, 1 wait");
    }

    #[test]
    fn cancelled_tasks_and_transfer_failures_and_queue_counters_show_in_the_trace() {
        let mut failed = record(Some(1), WorkerClass::Aiv, 8000);
        failed.cancelled = true;
        let mut consumer = record(None, WorkerClass::Aic, 0);
        consumer.task = TaskId::from_raw(8);
        (consumer.fin, consumer.dispatch, consumer.cancelled) = (0, 0, true);
        let mut v = chrome_trace(&[failed, consumer], 1000);
        let queues = [QueueReport {
            transfer_failures: 1,
            cancelled: 2,
            ..QueueReport::default()
        }];
        add_queue_counters(&mut v, &queues);
        check_chrome_trace(&v).unwrap();
        let ev = v["traceEvents"].as_array().unwrap();
        let named = |n: &str| ev.iter().filter(|e| e["name"] == n).count();
        assert_eq!(named("transfer failed"), 1, "only the task that ran");
        assert_eq!(named("dispatch→cancelled"), 2, "its span begins and ends");
        assert_eq!(named("cancelled"), 2, "the consumer's span, from ready");
        let q = ev
            .iter()
            .find(|e| e["name"] == "completion queues")
            .unwrap();
        assert_eq!(q["args"]["transfer_failures"], 1);
        assert_eq!(q["ts"].as_f64(), Some(8.0), "at the last task's end");
    }

    #[test]
    fn a_skipped_task_is_a_span_of_its_own_on_its_scheduler_and_no_kernel_slice() {
        let mut skipped = record(None, WorkerClass::Aiv, 0);
        skipped.task = TaskId::from_raw(8);
        (skipped.fin, skipped.dispatch, skipped.skipped) = (0, 0, true);
        let ran = record(Some(1), WorkerClass::Aiv, 8000);
        let v = chrome_trace(&[skipped, ran], 1000);
        check_chrome_trace(&v).unwrap();
        let ev = v["traceEvents"].as_array().unwrap();
        let named = |n: &str| ev.iter().filter(|e| e["name"] == n).collect::<Vec<_>>();
        let span = named("skipped");
        assert_eq!(span.len(), 2, "its span begins and ends");
        assert_eq!(span[0]["pid"], json!(SCHEDULERS_PID));
        assert_eq!(span[0]["args"]["skipped"], json!(true));
        assert_eq!(named("dispatch→complete").len(), 2, "the task that ran");
        let slices = ev.iter().filter(|e| e["ph"] == "X").count();
        assert_eq!(slices, 1, "a kernel slice only for the task that ran");
    }

    #[test]
    fn a_kernel_slice_that_would_overlap_its_neighbour_becomes_async() {
        let mut mix = record(Some(0), WorkerClass::Mix, 0);
        mix.end = 9000; // its other lanes ran on, while core 0 took the next task
        let mut next = record(Some(0), WorkerClass::Aic, 0);
        next.task = TaskId::from_raw(8);
        (next.start, next.end) = (7000, 10_000);
        let v = chrome_trace(&[mix, next], 1000);
        check_chrome_trace(&v).unwrap();
        let ev = v["traceEvents"].as_array().unwrap();
        let on_core: Vec<_> = ev
            .iter()
            .filter(|e| e["pid"] == CORES_PID && e["ph"] != "M")
            .map(|e| e["ph"].as_str().unwrap())
            .collect();
        assert_eq!(
            on_core,
            ["X", "b", "e"],
            "the later one moves off the track"
        );
    }

    #[test]
    fn the_check_finds_overlaps_and_missing_fields() {
        let bad = json!({"traceEvents": [
            {"ph": "X", "pid": 1, "tid": 0, "name": "a", "ts": 0.0, "dur": 2.0},
            {"ph": "X", "pid": 1, "tid": 0, "name": "b", "ts": 1.0, "dur": 2.0},
        ]});
        assert!(matches!(
            check_chrome_trace(&bad),
            Err(TraceDefect::Overlap { .. })
        ));
        let nested = json!({"traceEvents": [
            {"ph": "X", "pid": 1, "tid": 0, "name": "a", "ts": 0.0, "dur": 3.0},
            {"ph": "X", "pid": 1, "tid": 0, "name": "b", "ts": 1.0, "dur": 2.0},
            {"ph": "X", "pid": 1, "tid": 0, "name": "c", "ts": 3.0, "dur": 0.0},
        ]});
        check_chrome_trace(&nested).unwrap();
        let no_dur =
            json!({"traceEvents": [{"ph": "X", "pid": 1, "tid": 0, "name": "a", "ts": 0.0}]});
        assert!(matches!(
            check_chrome_trace(&no_dur),
            Err(TraceDefect::Field { field: "dur", .. })
        ));
        let open = json!({"traceEvents": [
            {"ph": "b", "cat": "t", "id": "1", "pid": 1, "tid": 0, "name": "a", "ts": 0.0},
        ]});
        assert!(matches!(
            check_chrome_trace(&open),
            Err(TraceDefect::Unmatched { .. })
        ));
        assert!(check_chrome_trace(&json!([1])).is_err());
    }

    #[test]
    fn a_streamed_trace_is_the_trace_built_in_memory_with_its_extras() {
        let mut mix = record(Some(0), WorkerClass::Mix, 0);
        mix.end = 9000;
        let mut next = record(Some(0), WorkerClass::Aic, 0);
        next.task = TaskId::from_raw(8);
        (next.start, next.end) = (7000, 10_000);
        let mut block = record(Some(3), WorkerClass::Aiv, 8000);
        (block.task, block.blocks, block.block) = (TaskId::from_raw(9), 2, 1);
        let recs = [mix, next, record(None, WorkerClass::Dummy, 0), block];
        let queues = [QueueReport {
            cancelled: 3,
            ..QueueReport::default()
        }];
        let tasks = vec![
            (TaskId::from_raw(7), vec![]),
            (TaskId::from_raw(8), vec![TaskId::from_raw(7)]),
        ];
        let names: &[(KernelId, &str)] = &[(KernelId(3), "gemm")];
        let mut built = chrome_trace_named(&recs, 1000, names);
        add_queue_counters(&mut built, &queues);
        add_dependencies(&mut built, &tasks, (2, 4));
        let mut bytes = Vec::new();
        let extras = TraceExtras {
            queues: &queues,
            dependencies: Some((&tasks, (2, 4))),
        };
        stream_chrome_trace(&mut bytes, &recs, 1000, names, extras).unwrap();
        let streamed: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(streamed, built);
        check_chrome_trace(&streamed).unwrap();
        // And without extras: no otherData, no counters.
        let mut bytes = Vec::new();
        stream_chrome_trace(&mut bytes, &recs, 1000, names, TraceExtras::default()).unwrap();
        let plain: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(plain, chrome_trace_named(&recs, 1000, names));
    }

    #[test]
    fn a_trace_that_cannot_be_written_says_where() {
        let dir = std::env::temp_dir().join("pto-trace-no-such-dir").join("x");
        let e = write_chrome_trace(&dir.join("t.json"), &[], 1, &Unnamed).unwrap_err();
        assert!(e.to_string().contains("pto-trace-no-such-dir"), "{e}");
    }

    #[test]
    fn kernel_slices_carry_the_kernels_names() {
        let recs = [record(Some(2), WorkerClass::Aiv, 0)];
        let table: &[(KernelId, &str)] = &[(KernelId(3), "softmax")];
        let v = chrome_trace_named(&recs, 1000, table);
        let ev = v["traceEvents"].as_array().unwrap();
        let k = ev.iter().find(|e| e["tid"] == 2 && e["ph"] == "X").unwrap();
        assert_eq!(
            (&k["name"], &k["args"]["kernel"]),
            (&json!("softmax"), &json!(3))
        );
        let v = chrome_trace_named(&recs, 1000, &Unnamed);
        assert!(v.to_string().contains("\"kernel 3\""), "no name: the id");
    }
}
