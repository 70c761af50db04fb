//! What a run tells: the run status (the first fatal error), profiling records and phase
//! counters, and per-scheduler statistics.
#![forbid(unsafe_code)]

pub(crate) mod profile;
pub(crate) mod record;
pub(crate) mod record_flags;
pub(crate) mod stall;
pub(crate) mod stall_class;
pub(crate) mod stamp_offset;
pub(crate) mod stats;
pub(crate) mod status;
