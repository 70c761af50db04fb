//! pto-trace: a run's task records as a Chrome trace that Perfetto draws, and its check.
//!
//! The records are the core's [`TaskRecord`](pto_runtime_core::TaskRecord)s, whoever ran
//! the tasks: the simulator (`pto-sim` re-exports this crate's items and names kernels from
//! its kernel table) or an NPU (`pto-host` reads the records back from device memory). So
//! both paths draw their runs with the one writer here ([`chrome_trace`],
//! [`write_chrome_trace`]), and [`check_chrome_trace`] checks what it wrote; [`summarize`]
//! reads a run back from its trace (per-kernel durations, per-core and per-class busy
//! shares, skips), as `pto-launch trace` prints it; [`RunTrace::from_reader`] reads a trace
//! file event by event, so a large one never sits whole in memory.
//!
//! Principles:
//! - Every track nests: what cannot nest becomes an async slice, never a dropped one.
//! - Timestamps are whole nanoseconds, so a reader computes what the writer checked.
//! - No unsafe code; the runtime's records are read, never changed.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod at_no_cost;
mod check;
mod chrome;
mod critical;
mod names;
mod overhead;
mod read;
mod summary;
mod svg;

pub use at_no_cost::{ChipLatencies, overhead_at_no_cost};
pub use check::{TraceDefect, check_chrome_trace};
pub use chrome::{
    Producers, TraceError, TraceExtras, add_dependencies, add_queue_counters, chrome_trace,
    chrome_trace_named, records_in_ns, stream_chrome_trace, write_chrome_trace,
    write_chrome_trace_with, write_trace,
};
pub use critical::{Blame, ChainTask, CriticalPath, critical_path};
pub use names::{KernelNames, Unnamed};
pub use overhead::{OverheadShares, overhead_shares};
pub use read::RunTrace;
pub use summary::{
    ClassSummary, CoreSummary, KernelSummary, SummaryError, TraceSummary, summarize,
};
pub use svg::swimlane_svg;
