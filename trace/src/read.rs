//! Reading a run back from the Chrome trace this crate writes, event by event: its kernel
//! slices, the tasks skipped and cancelled, the task records its events show, and (when the
//! trace carries them, [`crate::add_dependencies`]) each task's producers and the run's
//! cores. [`RunTrace::from_reader`] parses a file as it reads it, so a trace of a million
//! tasks never sits whole in memory as JSON: one event at a time does, and what the readers
//! need of it is kept.

use std::collections::{HashMap, HashSet};
use std::fmt;

use pto_runtime_core::{CoreId, KernelId, TaskId, TaskRecord, WorkerClass};
use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use crate::summary::SummaryError;

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

/// Every task in submission order with its producers, and the (AIC, AIV) cores.
pub(crate) type Dependencies = (Vec<(TaskId, Vec<TaskId>)>, (u16, u16));

/// A run as its trace shows it: what the summary, the overhead shares, the critical path
/// and the swimlanes are computed from.
pub struct RunTrace {
    pub(crate) slices: Vec<Slice>,
    pub(crate) skipped: usize,
    pub(crate) cancelled: usize,
    /// The task records the events show, times in ns (1000 ticks per µs).
    pub(crate) records: Vec<TaskRecord>,
    pub(crate) dependencies: Option<Dependencies>,
}

impl fmt::Debug for RunTrace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunTrace")
            .field("slices", &self.slices.len())
            .field("records", &self.records.len())
            .field("dependencies", &self.dependencies.is_some())
            .finish()
    }
}

impl RunTrace {
    /// Reads a trace held as JSON.
    pub fn from_value(trace: &Value) -> Result<Self, SummaryError> {
        let events = trace["traceEvents"]
            .as_array()
            .ok_or(SummaryError::NotATrace)?;
        let mut pass = Pass::default();
        for e in events {
            pass.event(e.clone())?;
        }
        let other = trace
            .get("otherData")
            .map(|o| Other::deserialize(o).map_err(unreadable))
            .transpose()?;
        pass.finish(other)
    }

    /// Reads a trace from `r` (a file, say) as it parses it: one event at a time is JSON.
    pub fn from_reader(r: impl std::io::Read) -> Result<Self, SummaryError> {
        let mut de = serde_json::Deserializer::from_reader(std::io::BufReader::new(r));
        let mut pass = Pass::default();
        let (seen, other) = (&mut de)
            .deserialize_map(TopLevel { pass: &mut pass })
            .map_err(|e| pass.error.take().unwrap_or_else(|| unreadable(e)))?;
        de.end().map_err(unreadable)?;
        if let Some(e) = pass.error.take() {
            return Err(e);
        }
        if !seen {
            return Err(SummaryError::NotATrace);
        }
        pass.finish(other)
    }
}

fn unreadable(e: impl fmt::Display) -> SummaryError {
    SummaryError::Unreadable(e.to_string())
}

/// What a trace's `otherData` says that the readers use.
#[derive(Deserialize)]
struct Other {
    aic_cores: Option<u16>,
    aiv_cores: Option<u16>,
    tasks: Option<Vec<(u64, Vec<u64>)>>,
}

impl Other {
    fn dependencies(self) -> Option<Dependencies> {
        let tasks = self
            .tasks?
            .into_iter()
            .map(|(t, ps)| {
                (
                    TaskId::from_raw(t),
                    ps.into_iter().map(TaskId::from_raw).collect(),
                )
            })
            .collect();
        Some((tasks, (self.aic_cores?, self.aiv_cores?)))
    }
}

/// One pass over a trace's events.
#[derive(Default)]
struct Pass {
    index: usize,
    slices: Vec<Slice>,
    skipped: usize,
    cancelled: usize,
    /// Async begins on the cores, and the tasks' spans on their schedulers, until their ends.
    core_begins: HashMap<String, (usize, Value)>,
    task_begins: HashMap<String, Value>,
    records: Vec<TaskRecord>,
    spans: Vec<TaskRecord>,
    /// The first malformed event's error, while the parse goes on (streaming).
    error: Option<SummaryError>,
}

impl Pass {
    fn event(&mut self, e: Value) -> Result<(), SummaryError> {
        let index = self.index;
        self.index += 1;
        let bad = |what| SummaryError::Malformed { index, what };
        let on_cores = e["pid"].as_u64() == Some(CORES_PID);
        let ph = e["ph"].as_str().unwrap_or("");
        match ph {
            "X" if on_cores => {
                let ts = ns(e["ts"].as_f64().ok_or(bad("a slice without `ts`"))?);
                let dur = ns(e["dur"].as_f64().ok_or(bad("a slice without `dur`"))?);
                let s = slice(&e, ts, ts + dur).ok_or(bad("a slice without a core"))?;
                self.slices.push(s);
                self.records.extend(record(&e, core_of(&e), ts, ts + dur));
            }
            // A kernel slice that could not nest on its core's track: an async pair.
            "b" if on_cores => {
                let id = e["id"].as_str().ok_or(bad("an async slice without `id`"))?;
                self.core_begins.insert(id.to_owned(), (index, e));
            }
            "e" if on_cores => {
                let id = e["id"].as_str().ok_or(bad("an async slice without `id`"))?;
                let (_, b) = self
                    .core_begins
                    .remove(id)
                    .ok_or(bad("an async end without its begin"))?;
                let start = ns(b["ts"].as_f64().ok_or(bad("a slice without `ts`"))?);
                let end = ns(e["ts"].as_f64().ok_or(bad("a slice without `ts`"))?).max(start);
                let s = slice(&b, start, end).ok_or(bad("a slice without a core"))?;
                self.slices.push(s);
                self.records.extend(record(&b, core_of(&b), start, end));
            }
            "b" => {
                match e["name"].as_str() {
                    Some("skipped") => self.skipped += 1,
                    Some("cancelled" | "dispatch→cancelled") => self.cancelled += 1,
                    _ => {}
                }
                if e["cat"] == "task"
                    && let Some(id) = e["id"].as_str()
                {
                    self.task_begins.insert(id.to_owned(), e);
                }
            }
            "e" => {
                if let Some(b) = e["id"].as_str().and_then(|id| self.task_begins.remove(id)) {
                    self.spans.extend(record(&b, None, 0, 0));
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn finish(mut self, other: Option<Other>) -> Result<RunTrace, SummaryError> {
        if let Some((index, _)) = self.core_begins.values().next() {
            return Err(SummaryError::Malformed {
                index: *index,
                what: "an async begin without its end",
            });
        }
        if self.slices.is_empty() {
            return Err(SummaryError::NoSlices);
        }
        // A task that ran has its slices; one that did not (DUMMY, skipped), its span.
        let ran: HashSet<TaskId> = self.records.iter().map(|r| r.task).collect();
        self.records
            .extend(self.spans.into_iter().filter(|r| !ran.contains(&r.task)));
        // As the runtime hands them back: by task, its blocks in order (the last block's
        // record is the task's for the shares, as for `bench`).
        self.records.sort_by_key(|r| (r.task.raw(), r.block));
        Ok(RunTrace {
            slices: self.slices,
            skipped: self.skipped,
            cancelled: self.cancelled,
            records: self.records,
            dependencies: other.and_then(Other::dependencies),
        })
    }
}

/// Whole ns of a trace's µs (written with three decimals).
fn ns(us: f64) -> u64 {
    (us * 1000.0).round().max(0.0) as u64
}

fn core_of(e: &Value) -> Option<CoreId> {
    e["tid"]
        .as_u64()
        .and_then(|c| u16::try_from(c).ok())
        .map(CoreId)
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

/// The task record event `e` shows, on `core` from `start` to `end` ns.
fn record(e: &Value, core: Option<CoreId>, start: u64, end: u64) -> Option<TaskRecord> {
    let a = &e["args"];
    let at = |key: &str| ns(a[key].as_f64().unwrap_or(0.0));
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
        submit: at("submit_us"),
        ready: at("ready_us"),
        dispatch: at("dispatch_us"),
        start,
        end,
        fin: at("fin_us"),
        deferred_done: 0,
        complete: 0,
        cancelled: a["cancelled"].as_bool().unwrap_or(false),
        skipped: a["skipped"].as_bool().unwrap_or(false),
        block: u16::try_from(a["block"].as_u64().unwrap_or(0)).ok()?,
        blocks: u16::try_from(a["blocks"].as_u64().unwrap_or(1)).ok()?,
    })
}

/// The trace's top-level object: `traceEvents` fed to the pass one by one, `otherData`
/// kept, the rest skipped. Returns whether it had `traceEvents`.
struct TopLevel<'p> {
    pass: &'p mut Pass,
}

impl<'de> Visitor<'de> for TopLevel<'_> {
    type Value = (bool, Option<Other>);

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a Chrome trace object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let (mut seen, mut other) = (false, None);
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "traceEvents" => {
                    map.next_value_seed(Events(&mut *self.pass))?;
                    seen = true;
                }
                "otherData" => other = Some(map.next_value::<Other>()?),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok((seen, other))
    }
}

/// `traceEvents`, each event handed to the pass as it is parsed.
struct Events<'p>(&'p mut Pass);

impl<'de> DeserializeSeed<'de> for Events<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Events<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of trace events")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(e) = seq.next_element::<Value>()? {
            if self.0.error.is_none()
                && let Err(err) = self.0.event(e)
            {
                self.0.error = Some(err);
            }
        }
        Ok(())
    }
}
