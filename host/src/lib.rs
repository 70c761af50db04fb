//! pto-host: the host side of the PTO runtime.
//!
//! It ships `pto-launch`: `allreduce` boots N rank processes (or joins mpirun, a PMI
//! launcher, Slurm or torchrun), forms the job over TCP when asked (`transport`, with a
//! job secret), gives each rank a communication window (`comm`: POSIX shared memory on the
//! simulator, ACL/HCCL windows behind feature `cann`, CANN loaded at run time) and runs the
//! scheduler core on the simulator (`allreduce`); `bench` measures the scheduler on
//! synthetic workloads (`bench`). `profile` exports task records as a Chrome trace
//! (`write_chrome_trace`) and a summary.
//!
//! Principles:
//! - No unsafe but two small modules: POSIX shared memory (`comm/raw_shm.rs`) and signal
//!   handlers (`signals.rs`), every block with its SAFETY comment. The device is reached through `pto-device-sys`, the simulator
//!   through `pto-sim`.
//! - Errors are sentences a user can act on (`thiserror`), never panics.
//! - Benchmarks report medians of repeated runs; nothing here asserts on time.
#![deny(unsafe_code)]
#![deny(missing_docs)]

pub mod allreduce;
pub mod bench;
pub mod comm;
pub mod envelope;
pub mod human;
pub mod launch;
pub mod profile;
pub mod progress;
pub mod signals;
pub mod transport;
