//! pto-device-sys: the real device under `pto-runtime-core`.
//!
//! - [`chip`]: the chip's AICPU <-> AICore handshake (handshake blocks, register windows at
//!   `regs[physical_core_id]`, two payload slots per core, `DATA_MAIN_BASE` and `COND`) and
//!   [`chip::ChipPlatform`], the `Platform` of `libpto_aicpu.so` (`aicpu/`). The executor
//!   that answers it on each AICore is C (`device-sys/aicore/`).
//! - [`handoff`]: how the AICPU threads of a run of `libpto_aicpu.so` take their tickets,
//!   wait for the setup and depart, and which of them is the last out.
//! - [`abi`]: the C ABI of `libpto_aicpu.so` (init and exec arguments, the orchestration's
//!   operations, the run's report with its stall summary).
//! - [`orch_ops`]: the operations table over an orchestrator, the one set of trampolines
//!   behind `libpto_aicpu.so` and the host's simulator backend.
//! - [`raw`]: volatile register and device-memory access, the CPU's counter, barriers and
//!   cache instructions (`core::arch::asm!` on aarch64).
//! - [`log`]: the logging facade (`pto_info!` and friends): defmt frames with feature
//!   `defmt`, `log` on host builds.
//! - [`cann`] (feature `cann`, host side, `std`): ACL and HCCL loaded at run time, with the
//!   bindings generated from our own header `cann/pto_cann.h`.
//!
//! `no_std`, no allocator: it builds for `aarch64-unknown-none` and
//! `aarch64-unknown-linux-gnu` (`libpto_aicpu.so`); on x86_64 it builds for tests, with a
//! fence for each barrier and no cache maintenance.
#![no_std]
#![deny(unsafe_code)]
#![deny(missing_docs)]

#[cfg(any(feature = "cann", test))]
extern crate std;

pub mod abi;
#[cfg(feature = "cann")]
pub mod cann;
pub mod chip;
pub mod handoff;
pub mod log;
pub mod orch_ops;
pub mod raw;
mod watched;

/// Whether the AICPU's caches see what the cores write without maintenance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Coherence {
    /// Hardware keeps them coherent: no cache maintenance.
    Coherent,
    /// Write payload slots (and their tensor descriptors) back before dispatching, and
    /// discard the cached lines of handshake blocks, slots and watched words before
    /// reading them.
    Manual,
}

/// The system counter of a2a3 AICPUs ticks at 50 MHz: 50 ticks per microsecond.
pub const A2A3_TICKS_PER_US: u64 = 50;
