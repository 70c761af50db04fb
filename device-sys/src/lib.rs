//! pto-device-sys: the real device under `pto-runtime-core`.
//!
//! - [`chip`]: the chip's AICPU <-> AICore handshake (handshake blocks, register windows at
//!   `regs[physical_core_id]`, two payload slots per core, `DATA_MAIN_BASE` and `COND`) and
//!   [`chip::ChipPlatform`], the `Platform` of `libpto_aicpu.so` (`aicpu/`). The executor
//!   that answers it on each AICore is C (`device-sys/aicore/`).
//! - [`abi`]: the C ABI of `libpto_aicpu.so` (init and exec arguments, the orchestration's
//!   operations, the run's report).
//! - [`block`]: the register block each AICore core shares with the AICPU (payload slots
//!   with their doorbells, the status line, deferred-condition slabs), layout pinned.
//! - [`platform::AicpuPlatform`]: the scheduler core's `Platform` over those blocks, the
//!   system counter, barriers and cache maintenance.
//! - [`aicore`]: the core's side of the protocol (tests play cores with it).
//! - [`raw`]: volatile register access, the CPU's counter, barriers and cache instructions
//!   (`core::arch::asm!` on aarch64).
//! - [`log`]: the logging facade (`pto_info!` and friends): defmt on the device image, `log`
//!   on host builds.
//! - [`cann`] (feature `cann`, host side, `std`): ACL and HCCL loaded at run time, with the
//!   bindings generated from our own header `cann/pto_cann.h`.
//!
//! `no_std`, no allocator: it builds for `aarch64-unknown-none` (the device image) and
//! `aarch64-unknown-linux-gnu`; on x86_64 it builds for tests, with a fence for each barrier
//! and no cache maintenance.
#![no_std]
#![deny(unsafe_code)]
#![deny(missing_docs)]

#[cfg(feature = "cann")]
extern crate std;

pub mod abi;
pub mod aicore;
pub mod block;
#[cfg(feature = "cann")]
pub mod cann;
pub mod chip;
pub mod log;
pub mod platform;
pub mod raw;
mod watched;

pub use platform::{AicpuConfig, AicpuPlatform, Coherence, PlatformError};

/// The system counter of a2a3 AICPUs ticks at 50 MHz: 50 ticks per microsecond.
pub const A2A3_TICKS_PER_US: u64 = 50;
