//! Profile export: Chrome trace JSON (opens in Perfetto) and a text summary. The trace writer
//! and its checker are the crate `pto-trace`, re-exported here: the simulator's runs and an
//! NPU's records go through the same writer, and the NPU path needs nothing of `pto-sim`.

#[cfg(test)]
mod bench_traces;
mod summary;

pub use pto_trace::{
    KernelNames, TraceDefect, TraceError, TraceExtras, Unnamed, add_dependencies,
    add_queue_counters, check_chrome_trace, chrome_trace, chrome_trace_named, stream_chrome_trace,
    write_chrome_trace, write_chrome_trace_with, write_trace,
};
pub use summary::ProfileSummary;
