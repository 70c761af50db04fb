//! Profile export: Chrome trace JSON (opens in Perfetto) and a text summary. The trace writer
//! and its checker live in `pto-sim` (so a simulator-only program needs no host crate) and
//! are re-exported here.

#[cfg(test)]
mod bench_traces;
mod summary;

pub use pto_sim::{
    TraceDefect, TraceError, add_queue_counters, check_chrome_trace, chrome_trace,
    chrome_trace_named, write_chrome_trace, write_trace,
};
pub use summary::ProfileSummary;
