//! pto-host: the host side of the PTO runtime.
//!
//! Today it runs the scheduler core on the simulator and measures it (`pto-launch bench`),
//! and reads a rank from a launcher's environment; rank boot, communication windows and the
//! CANN backend come next.
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
pub mod launch;
pub mod profile;
pub mod signals;
pub mod transport;
