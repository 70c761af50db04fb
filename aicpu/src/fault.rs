//! Faults a test arms before a run (feature `fault-injection`, never in a shipped SO): the
//! next run's orchestrator loses a release or a ready entry on purpose
//! (`pto_runtime_core::Fault`), so the harness can check how the device reports the stall.

use core::sync::atomic::{AtomicU32, Ordering};

use pto_runtime_core::Fault;

/// The armed fault: 0 none, 1 [`Fault::LoseEdge`], 2 [`Fault::LoseReady`].
static ARMED: AtomicU32 = AtomicU32::new(0);

/// Arms fault `kind` (1 lose an edge, 2 lose a ready entry; 0 disarms) for the next run
/// (`pto_aicpu_inject_fault`). 0, or 1 for a kind it does not know.
pub(crate) fn arm(kind: u32) -> u32 {
    if kind > 2 {
        return 1;
    }
    ARMED.store(kind, Ordering::Relaxed);
    0
}

/// Takes the armed fault, if any (once: the run that takes it is the only one it hits).
pub(crate) fn take() -> Option<Fault> {
    match ARMED.swap(0, Ordering::Relaxed) {
        1 => Some(Fault::LoseEdge),
        2 => Some(Fault::LoseReady),
        _ => None,
    }
}
