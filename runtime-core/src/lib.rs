//! pto-runtime-core: the task scheduler that runs on the AICPU.
//!
//! An orchestration function submits tasks through an [`Orchestrator`]; the core wires their
//! dependencies, keeps lock-free ready queues per [`WorkerClass`], and [`Scheduler`] threads
//! dispatch ready tasks to AICore cores through the [`Platform`] trait and complete them when
//! the cores report FIN, or later, once the deferred [`Condition`]s their kernels registered
//! hold (a DMA or RDMA transfer landed, a peer's notification arrived).
//!
//! Principles:
//! - No allocation, ever: every structure lives in one caller-provided region whose layout is
//!   computed and validated from a [`Config`] ([`RegionLayout`]).
//! - No panics on the scheduling path: errors are values, and the first fatal one
//!   ([`FatalError`]) stops the run on every thread.
//! - One door to hardware: the [`Platform`] trait. Nothing else reads a register or a clock.
//! - One funnel: every task, whatever its kind, finishes through one function
//!   (`completion::finish`), so profiling and accounting cannot miss a path.
//! - Nothing is lost: queues are sized so that they cannot overflow, windows push back, and a
//!   task id names its generation so a stale id is never taken for the slot's next tenant.
//! - Simple and verified over fast and clever: every lock-free structure has a loom model.
#![no_std]
#![deny(unsafe_code, unsafe_op_in_unsafe_fn, missing_docs)]

#[cfg(test)]
extern crate std;

mod barrier;
mod comm_context;
mod completion;
mod completion_queue;
mod condition;
mod config;
mod deferred;
mod error;
pub mod ffi;
mod ids;
mod layout;
mod platform;
mod profile;
pub mod protocol;
mod raw;
mod ready_queue;
mod reclaim;
mod runtime;
mod scheduler;
mod seq_ring;
mod slot;
mod stats;
mod status;
mod submit;
mod sync;
mod tables;
mod tensor;
mod tensor_arg;
mod tensor_map;
mod wire;

#[cfg(all(test, not(loom)))]
mod deferred_tests;
#[cfg(all(test, loom))]
mod loom_deferred;
#[cfg(all(test, loom))]
mod loom_machine;
#[cfg(all(test, loom))]
mod loom_models;
#[cfg(all(test, loom))]
mod loom_protocol;
#[cfg(test)]
mod owned;
#[cfg(all(test, not(loom)))]
mod protocol_tests;
#[cfg(all(test, not(loom)))]
mod scheduler_tests;
#[cfg(all(test, not(loom)))]
mod scope_heap_tests;
#[cfg(all(test, not(loom)))]
mod test_rig;

pub use barrier::{BarrierError, BarrierWords, PoisonReason};
pub use comm_context::{CommContext, CommError, MAX_RANKS};
pub use completion_queue::{Completion, CompletionCell, CompletionEnds, CompletionQueue};
pub use condition::{Condition, MAX_CONDITIONS, Watch};
pub use config::{
    CompletionMode, Config, ConfigError, MAX_ARGS, MAX_CORES, MAX_DEPS, MAX_RINGS, MAX_SCHEDULERS,
    MAX_TENSORS,
};
pub use error::{ClaimError, FatalError, FatalKind, SubmitError};
pub use ids::{CoreId, KernelId, Seq, TaskId, Token, WorkerClass};
pub use layout::RegionLayout;
pub use platform::{CoreKind, Payload, Platform};
pub use profile::{PHASES, Phase, PhaseCounters, ProfileLevel, TaskRecord};
pub use protocol::{Outcome, RawCondition, ResultWord, StatusWord};
pub use runtime::{RunReport, Runtime};
pub use scheduler::Scheduler;
pub use stats::LatencyHistogram;
pub use submit::{DepReason, Dependency, MAX_SCOPE_DEPTH, Orchestrator, TaskSpec};
pub use tensor::{Access, MAX_RANK, Tile, TileError, overlaps, touches};
pub use tensor_arg::{Buffer, KernelTensor, TensorArg, TensorCell};
