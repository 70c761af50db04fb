//! A crash in user code, named: a fatal signal (SIGSEGV, SIGBUS, SIGFPE, SIGILL) raised
//! while a simulated core runs a kernel, or while the orchestration runs, prints one line on
//! stderr naming the kernel (name and id), the task, the core and the faulting address (the
//! instruction's for SIGFPE and SIGILL) (or
//! the orchestration), then ends the process with [`exit_status`] of the signal: 128 + its
//! number, as a shell reports a process the signal killed (139 for SIGSEGV).
//!
//! ```text
//! error: kernel `deref` (id 1) crashed with SIGSEGV (invalid memory access) at address 0x10, running task 0:3@1 on core 2, lane 0; the process exits with status 139
//! ```
//!
//! Each thread that runs user code has an alternate signal stack, so a kernel that overflows
//! its stack is named too ("overflowed its stack"). A fatal signal in any other thread, or
//! outside user code, is left to whatever handled it before (the process dies as it would
//! have). The simulator installs the handler when a machine starts with
//! [`crate::SimOptions::name_crashes`] (the default).

mod context;

pub(crate) use context::{Running, current, kernel, set_stack_low, stack_low};
pub use context::{RunningGuard, orchestration};

use std::sync::OnceLock;

/// The process's exit status after a fatal `signal` in user code: 128 + the signal number.
pub const fn exit_status(signal: i32) -> i32 {
    128 + signal
}

/// Installs the handler of fatal signals that names the user code a thread runs (once per
/// process; later calls return the first one's outcome).
pub fn name_crashes() -> Result<(), String> {
    static INSTALLED: OnceLock<Result<(), String>> = OnceLock::new();
    INSTALLED
        .get_or_init(|| crate::raw::signals::install().map_err(|e| e.to_string()))
        .clone()
}

/// Gives this thread what naming a crash in it needs: an alternate signal stack (for a
/// stack overflow) and its stack's bounds. Lives as long as the thread runs user code.
pub(crate) fn prepare_thread() -> crate::raw::altstack::AltStack {
    crate::raw::altstack::AltStack::ensure()
}
