//! Task records as a Chrome trace: one track per simulated core (kernel slices), one per
//! scheduler (dispatch → complete of the tasks it finished, deferred waits on a track of
//! their own).

use pto_runtime_core::{TaskRecord, WorkerClass};
use pto_sim::KernelTable;
use serde_json::{Value, json};

const CORES_PID: u32 = 1;
const SCHEDULERS_PID: u32 = 2;
/// Deferred-wait tracks sit after the scheduler tracks: tid = this + scheduler.
const DEFERRED_TID_BASE: u32 = 1000;

/// The Chrome trace JSON of `records`, whose timestamps count `ticks_per_us` per µs; kernel
/// slices are named `kernel N` (see [`chrome_trace_named`] for the kernels' names).
pub fn chrome_trace(records: &[TaskRecord], ticks_per_us: u64) -> Value {
    chrome_trace_named(records, ticks_per_us, &KernelTable::new())
}

/// Like [`chrome_trace`], with each kernel slice named as `kernels` names its kernel (`kernel
/// N` for an id the table does not have), and the id in the slice's arguments.
pub fn chrome_trace_named(
    records: &[TaskRecord],
    ticks_per_us: u64,
    kernels: &KernelTable,
) -> Value {
    let origin = records
        .iter()
        .map(|r| r.submit)
        .filter(|&t| t > 0)
        .min()
        .unwrap_or(0);
    let us = |t: u64| t.saturating_sub(origin) as f64 / ticks_per_us.max(1) as f64;
    let mut events = vec![
        json!({"ph": "M", "pid": CORES_PID, "name": "process_name", "args": {"name": "AICore cores"}}),
        json!({"ph": "M", "pid": SCHEDULERS_PID, "name": "process_name", "args": {"name": "AICPU schedulers"}}),
    ];
    let mut cores = std::collections::BTreeSet::new();
    let mut scheds = std::collections::BTreeSet::new();
    for r in records {
        let task = format!("{}", r.task);
        let args = json!({
            "task": task,
            "kernel": r.kernel.0,
            "class": format!("{:?}", r.class),
            "ready_us": us(r.ready),
            "submit_us": us(r.submit),
        });
        if let Some(core) = r.core.filter(|_| r.end >= r.start && r.start > 0) {
            cores.insert(core.0);
            events.push(json!({
                "ph": "X", "pid": CORES_PID, "tid": core.0,
                "name": kernels.name(r.kernel).map_or_else(|| format!("kernel {}", r.kernel.0), str::to_owned),
                "ts": us(r.start), "dur": us(r.end) - us(r.start), "args": args,
            }));
        }
        scheds.insert(r.scheduler);
        let (from, name) = match r.class {
            WorkerClass::Dummy => (r.ready, "dummy"),
            _ => (r.dispatch, "dispatch→complete"),
        };
        events.push(json!({
            "ph": "X", "pid": SCHEDULERS_PID, "tid": r.scheduler as u32,
            "name": name, "ts": us(from), "dur": us(r.complete) - us(from), "args": args,
        }));
        if r.deferred_done > 0 {
            events.push(json!({
                "ph": "X", "pid": SCHEDULERS_PID, "tid": DEFERRED_TID_BASE + r.scheduler as u32,
                "name": "deferred wait", "ts": us(r.fin), "dur": us(r.deferred_done) - us(r.fin),
                "args": {"task": format!("{}", r.task)},
            }));
        }
    }
    for c in cores {
        events.push(
            json!({"ph": "M", "pid": CORES_PID, "tid": c, "name": "thread_name",
            "args": {"name": format!("core {c}")}}),
        );
    }
    for s in scheds {
        events.push(
            json!({"ph": "M", "pid": SCHEDULERS_PID, "tid": s as u32, "name": "thread_name",
            "args": {"name": format!("scheduler {s}")}}),
        );
        events.push(
            json!({"ph": "M", "pid": SCHEDULERS_PID, "tid": DEFERRED_TID_BASE + s as u32,
            "name": "thread_name", "args": {"name": format!("scheduler {s} deferred waits")}}),
        );
    }
    json!({"traceEvents": events, "displayTimeUnit": "ns"})
}

/// Why a trace could not be written.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The trace could not be encoded as JSON.
    #[error("cannot encode the trace: {0}")]
    Encode(#[from] serde_json::Error),
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
/// # fn demo(out: pto_sim::SimRun<()>) -> Result<(), pto_host::profile::TraceError> {
/// // after `let out = pto_sim::run(...)?` with `Config::profile = ProfileLevel::Tasks`:
/// pto_host::profile::write_chrome_trace("run.json".as_ref(), &out.records, out.ticks_per_us, &out.kernels)?;
/// # Ok(())
/// # }
/// ```
pub fn write_chrome_trace(
    path: &std::path::Path,
    records: &[TaskRecord],
    ticks_per_us: u64,
    kernels: &KernelTable,
) -> Result<(), TraceError> {
    let text = serde_json::to_string(&chrome_trace_named(records, ticks_per_us, kernels))?;
    std::fs::write(path, text).map_err(|source| TraceError::Write {
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pto_runtime_core::{CoreId, KernelId, TaskId};

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
        }
    }

    #[test]
    fn slices_land_on_core_and_scheduler_tracks_in_microseconds() {
        let recs = [
            record(Some(2), WorkerClass::Aiv, 0),
            record(None, WorkerClass::Dummy, 0),
            record(Some(0), WorkerClass::Aic, 8000),
        ];
        let v = chrome_trace(&recs, 1000);
        let ev = v["traceEvents"].as_array().unwrap();
        let kernel = ev
            .iter()
            .find(|e| e["name"] == "kernel 3" && e["tid"] == 2)
            .unwrap();
        assert_eq!(
            (kernel["ts"].as_f64(), kernel["dur"].as_f64()),
            (Some(3.0), Some(2.0))
        );
        let dummy = ev.iter().find(|e| e["name"] == "dummy").unwrap();
        assert_eq!(dummy["pid"], SCHEDULERS_PID);
        let wait = ev.iter().find(|e| e["name"] == "deferred wait").unwrap();
        assert_eq!(
            (wait["ts"].as_f64(), wait["dur"].as_f64()),
            (Some(6.0), Some(1.0))
        );
        assert_eq!(
            ev.iter().filter(|e| e["ph"] == "X").count(),
            6,
            "2 kernels, 3 scheduler slices, 1 wait"
        );
    }

    #[test]
    fn kernel_slices_carry_the_kernels_names() {
        let recs = [record(Some(2), WorkerClass::Aiv, 0)];
        let table = KernelTable::new().with(KernelId(3), "softmax", |_| Ok(()));
        let v = chrome_trace_named(&recs, 1000, &table);
        let ev = v["traceEvents"].as_array().unwrap();
        let k = ev.iter().find(|e| e["tid"] == 2 && e["ph"] == "X").unwrap();
        assert_eq!(
            (&k["name"], &k["args"]["kernel"]),
            (&json!("softmax"), &json!(3))
        );
        let v = chrome_trace_named(&recs, 1000, &KernelTable::new());
        assert!(v.to_string().contains("\"kernel 3\""), "no name: the id");
    }
}
