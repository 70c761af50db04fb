//! The fence: the only unsafe code of the SO. Everything past it is safe Rust.
//!
//! What it holds, and why each is sound, block by block (`// SAFETY:`):
//! - [`entry`]: the exported `extern "C"` entry points CANN calls; each copies its argument
//!   block and calls the safe `crate::entry`.
//! - [`run_cell`]: the run's cores and state, shared between the `exec` threads; references
//!   are handed out only against the hand-off's tokens (`pto_device_sys::handoff`), which
//!   say who may read or write them when.
//! - [`abi_memory`]: the device memory the exec arguments name (the ABI's contract), as the
//!   safe views the runtime and the chip platform take, and the report and records written
//!   back.
//! - [`orch_ops`]: the orchestration's table of operations (C trampolines) and the call of
//!   the orchestration function.
//! - [`orch_so`]: writing the orchestration SO to a file and `dlopen`ing it.
//! - [`record_ring`]: the streams of task records and producers to the host, as their
//!   writers take them.
//! - [`cpu`]: libc's CPU calls (the CPU a thread runs on, yield, CPUs online) and a trap.
//! - the unwinding personality the precompiled `core` names (below).

pub(crate) mod abi_memory;
pub(crate) mod cpu;
pub(crate) mod entry;
pub(crate) mod orch_ops;
pub(crate) mod orch_so;
pub(crate) mod record_ring;
pub(crate) mod run_cell;

// The precompiled `core` names an unwinding personality in its unwind tables; with
// `panic = "abort"` it is never called. Defined hidden, so the SO does not export it
// (`linker/pto_aicpu.exports` lists what it exports).
#[cfg(not(test))]
core::arch::global_asm!(
    ".text",
    ".globl rust_eh_personality",
    ".hidden rust_eh_personality",
    ".type rust_eh_personality, %function",
    "rust_eh_personality:",
    "ret",
);
