//! The one C layer of the core, shared by every C entry point (the static library of
//! `pto-runtime-capi`, the operations `libpto_aicpu.so` hands an orchestration SO, the
//! device report): `repr(C)` types, conversions, status mapping and pointer checks, one
//! file per job.
//!
//! - [`status`]: [`PtoStatus`], one code per `SubmitError` variant, and [`status_str`].
//! - [`config`]: [`PtoConfig`], the runtime's sizes and limits.
//! - [`task`]: [`PtoTask`] with its [`PtoTensorArg`]s, and [`PtoTensor`], a tensor as a
//!   kernel receives it.
//! - [`report`]: [`PtoReport`] (counters and the error) and [`PtoRecord`] (a task record).
//! - [`graph`]: task graphs as C records and replays them ([`PtoGraph`], [`PtoBuffer`],
//!   [`PtoInstance`]).
//! - [`raw`]: C pointers checked and turned into slices and submits ([`submit_c`],
//!   [`alloc_c`], [`records_c`]), and [`graph_raw`] for graphs: the layer's only unsafe
//!   code.

pub mod config;
pub mod graph;
pub mod graph_raw;
pub mod raw;
pub mod report;
pub mod status;
pub mod task;

pub use config::PtoConfig;
pub use graph::{PtoBuffer, PtoGraph, PtoInstance, PtoReplay, PtoReplayFlags};
pub use raw::{alloc_c, records_c, settle_c, submit_c, wrote_c};
pub use report::{PtoRecord, PtoReport};
pub use status::{PtoStatus, status_str};
pub use task::{PtoAccess, PtoCmpOp, PtoPredicate, PtoTask, PtoTensor, PtoTensorArg};
