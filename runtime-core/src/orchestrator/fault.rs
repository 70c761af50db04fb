//! Faults the orchestrator injects on purpose (feature `fault-injection`), so tests can
//! produce the stalls a lost signal would leave and check how the run reports them. Nothing
//! else turns a fault on: without the feature this module does not exist.
#![forbid(unsafe_code)]

use super::Orchestrator;
use crate::platform::Platform;

/// A signal the next eligible submit loses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The next task with a producer counts its first one but is never linked into its
    /// fanout: the producer finishes (or had) without releasing it, so it waits on a
    /// producer that is done (a dependency deadlock).
    LoseEdge,
    /// The next task ready at submit is marked ready but never queued: no scheduler ever
    /// sees it (ready work while the cores idle).
    LoseReady,
}

impl<P: Platform> Orchestrator<'_, '_, P> {
    /// Arms `fault` for the next submit it applies to (replacing one still armed). The
    /// simulator's stall tests use it (`tests/tests/stall_report.rs`).
    pub fn inject(&mut self, fault: Fault) {
        self.fault = Some(fault);
    }
}
