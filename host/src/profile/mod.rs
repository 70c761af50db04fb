//! Profile export: Chrome trace JSON (opens in Perfetto) and a text summary.

#[cfg(test)]
mod bench_traces;
mod check;
mod summary;
mod trace;

pub use check::{TraceDefect, check_chrome_trace};
pub use summary::ProfileSummary;
pub use trace::{
    TraceError, add_queue_counters, chrome_trace, chrome_trace_named, write_chrome_trace,
    write_trace,
};
