//! pto-host: the host side of the PTO runtime, and the `pto-launch` binary over it.
//!
//! What it holds, by module:
//! - `launch`: starting a job. [`launch::spawn_job`] spawns N rank processes of this binary,
//!   watches them (a rank that dies, hangs or is stopped takes the job down, naming it) and
//!   reports how each ended; [`launch::run_as_rank`] runs this process as the rank that
//!   `pto-launch`, mpirun, a PMI launcher, Slurm or torchrun named in the environment, forming
//!   the job over TCP first when a rendezvous is given.
//! - `transport`: the TCP transport (non-blocking connect and accept, registered memory,
//!   isend/irecv/test) and the bootstrap that forms a job over it, with a job secret; the
//!   crate `pto-transport`, re-exported.
//! - `comm`: communication windows every rank can address: POSIX shared memory on the
//!   simulator (`comm::ShmComm`), ACL/HCCL windows behind feature `cann` (CANN loaded at run
//!   time), the same calls with a C ABI; barriers that a dead or stalled rank poisons.
//! - `npu` (feature `cann`): launching on an NPU through CANN: a session per device (the
//!   AICPU SO bootstrapped once per process, registered, `init`), runs of a user's
//!   orchestration SO and kernels, errors that keep the host's CANN code and the device's
//!   run status apart.
//! - `program`: what a run of a user's orchestration SO and kernels executes (the SO, raw
//!   kernels, buffers, arguments), on either backend.
//! - `program_ranks`: such a run by several ranks, one process each, whose kernels reach
//!   each other's windows (shared memory on the simulator, HCCL windows on NPUs).
//! - `sim_backend`: such a run on the simulator, through the same orchestration ABI and the
//!   same raw kernels as on the chip, so a program can be tried before the NPU.
//! - `allreduce`: one rank's sum across ranks on the simulator, through peers' windows and
//!   deferred completion.
//! - `bench`: the scheduler's speed on synthetic DAGs, and the barrier, bootstrap and
//!   transport timed.
//! - `profile`: task records as a Chrome trace (`profile::write_chrome_trace`), its check,
//!   and a text summary.
//! - `envelope`, `progress`, `human`: what `pto-launch` prints: one JSON envelope per
//!   command, progress bars on a terminal only, figures and counts as people read them.
//!
//! Principles:
//! - No unsafe but in a few small files: POSIX shared memory (`comm/raw_shm.rs`), signal
//!   handlers (`signals.rs`) and the simulator backend's C boundary (`sim_backend/`: raw
//!   code mapped and called, the SO loaded, the orchestration's table), every block with
//!   its SAFETY comment. The device is reached
//!   through `pto-device-sys`, the simulator through `pto-sim`.
//! - Errors are typed per subsystem (`thiserror`) and print as sentences a user can act on;
//!   never a panic, never a bare `String` for an error type.
//! - Every wait is bounded, and nothing a job creates (processes, shared objects) outlives it.
//! - Benchmarks report medians of repeated runs; nothing here asserts on time.
#![deny(unsafe_code)]
#![deny(missing_docs)]

pub mod allreduce;
pub mod bench;
pub mod comm;
pub mod envelope;
pub mod golden;
pub mod human;
pub mod launch;
#[cfg(feature = "cann")]
pub mod npu;
pub mod orch_config;
pub mod profile;
pub mod program;
pub mod program_ranks;
pub mod progress;
pub mod signals;
pub mod sim_backend;

/// The transport between hosts and the bootstrap over it: the crate `pto-transport`,
/// re-exported so `pto_host::transport::...` paths keep working.
pub use pto_transport as transport;
