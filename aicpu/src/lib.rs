//! libpto_aicpu.so: the AICPU side of the PTO runtime as CANN's AICPU process loads it.
//!
//! CANN `dlopen`s the SO and calls its entry points as `uint32_t (*)(void *)`:
//! `pto_aicpu_init` once per launch sequence, with [`pto_device_sys::abi::PtoAicpuInitArgs`]
//! (timeouts, the clock), then `pto_aicpu_exec` per run on N threads, each with a copy of
//! [`pto_device_sys::abi::PtoAicpuExecArgs`]. The threads take roles by ticket (`run.rs`):
//! the first formats the run and opens the AICore cores through the chip's handshake, the
//! last orchestrates (calls the run's orchestration function, then watches the run's
//! deadline), the one before it pumps task records to the host when the run streams them
//! (`pump.rs`), the others schedule; the last one out sends every core the exit, writes the
//! report to device memory and resets the SO's state, so the next run starts clean.
//!
//! Principles:
//! - The SO stays loaded between runs: nothing of a run survives it but the run counter.
//! - Every wait is bounded; every return path sends the exit handshake to every opened core.
//! - No std, no allocator, panics abort; the only libc symbol is `sched_getcpu`.
//! - One static (`state::SO`), and unsafe code only behind one fence (`raw`): the entry
//!   points, the run's shared cell, the ABI's device memory, the orchestration's C table and
//!   libc.
#![cfg_attr(not(test), no_std)]
#![deny(missing_docs)]
#![deny(unsafe_code)]

mod entry;
#[cfg(feature = "fault-injection")]
mod fault;
mod orch;
mod problem;
mod pump;
#[allow(unsafe_code)]
mod raw;
mod run;
mod settings;
mod setup;
mod state;

/// A panic stops the process at once (CANN reports the AICPU exception): nothing unwinds
/// through CANN's frames.
#[cfg(not(test))]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    raw::cpu::trap()
}
