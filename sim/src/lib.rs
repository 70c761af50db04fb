//! pto-sim: the `Platform` on threads.
//!
//! Each simulated AICore core is a thread that waits for its doorbell, runs the registered
//! kernel of each token in order and reports ACK and FIN in its status word, exactly as the
//! scheduler expects of a real core. Idle cores park (after a short spin), so on a small host
//! the simulator measures the scheduler, not the operating system. Scheduler and orchestrator
//! threads run the real `pto-runtime-core`.
//!
//! A run's task records become a Chrome trace that Perfetto draws ([`write_chrome_trace`],
//! kernel slices named as the [`KernelTable`] names them; [`check_chrome_trace`] checks one:
//! the `pto-trace` crate's writer, re-exported, the one an NPU run's records go through too),
//! and its wiring a dependency graph ([`DepGraph`]).
//!
//! C kernels of the device ABI run here as shared objects built for this host
//! ([`CKernel`]), their entries found by symbol; a crash in user code (a kernel, an
//! orchestration) is named ([`crash`]); a forgotten dependency is found
//! ([`SimOptions::check_accesses`], [`AccessReport`]).
//!
//! Kernels read and write device memory as slices of any [`Element`] (integers, `f16`,
//! `bf16`, `f32`, `f64`), and a run's output is checked against golden data within a
//! [`Tolerance`] ([`compare_bytes`] for bytes of a [`Dtype`], [`expect_close`] for slices).
//!
//! Principles:
//! - The same core: nothing here changes how tasks are scheduled, only what a core is.
//! - Unsafe only where user code is loaded and called (`raw/`): the region is a plain aligned
//!   buffer, cores talk through atomics.
//! - Every failure of the machine (unknown kernel, a kernel that panics) is reported through
//!   the core's status word, so the runtime's own error path handles it; what the kernel said
//!   ([`KernelError`]'s message) stays here and joins the run's error ([`SimError::Run`]).
#![deny(unsafe_code)]
#![deny(missing_docs)]

mod access_check;
mod c_kernel;
mod calibrate;
mod compare;
mod core_thread;
pub mod crash;
mod dep_graph;
mod dtype;
mod element;
mod engine;
mod error;
mod kernel_error;
mod kernel_names;
mod kernel_panic;
mod kernels;
mod machine;
mod memory;
mod memory_bulk;
mod memory_map;
mod missing_records;
mod platform;
mod raw;
mod record_drain;
mod region;
mod run;
mod silicon;
mod slab;
mod stall_report;
mod tensor_view;

pub use access_check::{AccessReport, Race, TaskName, Undeclared};
pub use c_kernel::{ABI_SYMBOL, BUILD_HINT, CKernel, DEFAULT_ENTRY, KernelLoadError};
pub use calibrate::{Calibration, calibrate};
pub use compare::{
    CloseError, CompareError, Comparison, ErrorAt, Mismatch, Tolerance, Value, compare_bytes,
    expect_close,
};
pub use dep_graph::{DepGraph, DepTask};
pub use dtype::{Dtype, UnknownDtype};
pub use element::Element;
pub use engine::{Engine, EngineClock, EngineError, EngineOptions, Signal, Transfer, VirtualClock};
pub use error::{FailedRun, SimError};
/// The `half` crate this one uses for [`half::f16`] and [`half::bf16`] elements, so a
/// workload names the same types.
pub use half;
pub use kernel_error::{KernelError, KernelFailure, error_code};
pub use kernels::{KernelCtx, KernelFn, KernelTable};
pub use machine::{
    CHECK_ACCESSES_VAR, CORE_STACK_BYTES, CoreThreads, CpuPlan, MEMORY_BASE, SimMachine, SimOptions,
};
pub use memory::{DeviceMemory, MemoryError, SharedWords};
pub use memory_map::MemoryMap;
pub use missing_records::MissingRecords;
pub use platform::SimPlatform;
pub use pto_trace::{
    KernelNames, TraceDefect, TraceError, TraceExtras, Unnamed, add_queue_counters,
    check_chrome_trace, chrome_trace, chrome_trace_named, stream_chrome_trace, write_chrome_trace,
    write_chrome_trace_with, write_trace,
};
pub use raw::so::SharedObject;
pub use record_drain::RecordStream;
pub use region::Region;
pub use run::{SimOrchestrator, SimRun, run, run_with};
pub use silicon::{LATE_NS, Lateness, Silicon};
pub use slab::SlabFull;
pub use stall_report::{StallReport, StalledTask};
pub use tensor_view::TensorView;
