//! Profile export: Chrome trace JSON (opens in Perfetto) and a text summary.

mod summary;
mod trace;

pub use summary::ProfileSummary;
pub use trace::chrome_trace;
