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
//!   (`scheduler::completion::finish`), so profiling and accounting cannot miss a path.
//! - Nothing is lost: queues are sized so that they cannot overflow, windows push back, and a
//!   task id names its generation so a stale id is never taken for the slot's next tenant.
//! - Simple and verified over fast and clever: every lock-free structure has a loom model.
#![no_std]
#![deny(unsafe_code, unsafe_op_in_unsafe_fn, missing_docs)]

#[cfg(test)]
extern crate std;

mod comm;
mod condition;
mod error;
pub mod ffi;
mod ids;
mod index;
pub mod knob;
mod layout;
mod observe;
mod orchestrator;
mod platform;
mod predicate;
pub mod protocol;
mod queues;
mod region;
mod runtime;
mod scheduler;
pub mod sync;
mod tables;
mod task_spec;
mod tensor;
pub mod transfer_status;

#[cfg(test)]
mod testing;

pub use comm::barrier::{BarrierError, BarrierWords, PoisonReason};
pub use comm::context::{CommContext, CommError, MAX_RANKS};
pub use condition::{Condition, MAX_CONDITIONS, Watch};
pub use error::{ClaimError, FatalCause, FatalError, FatalKind, GraphError, SubmitError};
pub use ids::{CoreId, KernelId, Seq, TaskId, Token, WorkerClass};
pub use knob::Knob;
pub use layout::RegionLayout;
pub use observe::profile::{PHASES, Phase, PhaseCounters, ProfileLevel};
pub use observe::record::TaskRecord;
pub use observe::record_flags::RecordFlags;
pub use observe::stall::Stall;
pub use observe::stall_class::{StallClass, StallKind};
pub use observe::stats::{LatencyHistogram, QueueCounters, QueueReport};
#[cfg(feature = "fault-injection")]
pub use orchestrator::Fault;
pub use orchestrator::{
    Bindings, DepReason, Dependency, Graph, GraphRecordedArg, GraphRecordedTask, GraphRecorder,
    GraphStorage, Instance, MAX_GRAPH_BOUNDARIES, MAX_GRAPH_INTERNALS, MAX_GRAPH_PATCHES,
    MAX_GRAPH_SCALARS, MAX_SCOPE_DEPTH, Node, Orchestrator, TaskSpec,
};
pub use platform::{CoreKind, Payload, Platform};
pub use predicate::{CmpOp, Predicate, PredicateError};
pub use protocol::{Outcome, RawCondition, ResultWord, StatusWord};
pub use queues::completion_queue::{
    Completion, CompletionCell, CompletionEnds, CompletionQueue, MAX_ENGINE_QUEUES,
};
pub use region::config::{
    CompletionMode, Config, ConfigError, MAX_ARGS, MAX_CORES, MAX_DEPS, MAX_RINGS, MAX_SCHEDULERS,
    MAX_TENSORS,
};
pub use runtime::{RunReport, Runtime};
pub use scheduler::Scheduler;
pub use tables::drain::RecordDrain;
pub use tensor::arg::{Buffer, KernelTensor, TensorArg, TensorCell};
pub use tensor::dtype::{Dtype, UnknownDtype};
pub use tensor::tile::{Access, MAX_RANK, Tile, TileError, overlaps, touches};
