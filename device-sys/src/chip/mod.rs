//! The chip's AICPU <-> AICore handshake, as a [`pto_runtime_core::Platform`].
//!
//! - [`layout`]: the handshake block, the payload slots, register offsets, strides and
//!   control values, pinned.
//! - [`session`]: opening a core at the start of a run (its executor is up, its id and type
//!   check out, its `COND` holds nothing stale, its window is opened) and the exit handshake
//!   at the end.
//! - [`platform::ChipPlatform`]: dispatch by token into the slot its parity selects (the
//!   task's tensor addresses and scalars as the kernel's argument words, its tensor
//!   descriptors beside), `DATA_MAIN_BASE` as the doorbell, `COND` as the status word, the
//!   slot's result word.
//! - [`stall_log`]: what a failed run's live tasks waited for, bounded, for the report.
//! - [`record_outlet`]: the writing end of a stream to the host (task records, producers).
//! - [`producer_stream`]: each submitted task's producers, streamed to the host.
//!
//! The executor's side is C++ (`device-sys/aicore/`).

pub mod layout;
pub mod platform;
pub mod producer_stream;
pub mod record_outlet;
pub mod session;
pub mod stall_log;

pub use platform::{ChipConfig, ChipCore, ChipPlatform};
pub use producer_stream::ProducerStream;
pub use record_outlet::{RecordOutlet, RecordWindow};
pub use session::{ChipError, OpenArgs, close_core, open_core};
pub use stall_log::{PtoStallEntry, StallLog};

#[cfg(all(test, loom))]
mod loom_record_outlet;
#[cfg(all(test, loom))]
mod loom_stall_log;
