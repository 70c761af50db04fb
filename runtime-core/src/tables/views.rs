//! Who may touch what beyond the rows every thread shares. [`Tables`] is the view every role
//! holds: the config, the run-wide words, a slot's rows, the ready queues. Two wider views
//! add what one role alone touches, so a handle's type says what it may reach:
//! - [`OrchTables`], the orchestrator's: the rings' positions it advances, the window its
//!   sequence numbers wrap in, the tensor rows the C layer reads, the profile ring whose
//!   cells it claims.
//! - [`RunTables`], the runtime's (the region's owner): the per-scheduler counters and the
//!   profile ring its report reads, and the two handles' views, which only it hands out.
//!
//! A scheduler holds the plain [`Tables`]: it reaches a ring's positions only through reclaim
//! (`tables::reclaim`), and the counters only through its own block.
#![forbid(unsafe_code)]

use core::ops::Deref;

use super::{RingCtl, Tables};
use crate::observe::record::RecordCell;
use crate::observe::stats::SchedCtl;
use crate::tensor::arg::TensorCell;

/// The orchestrator's view: [`Tables`] and the rings, the window, the tensor rows and the
/// profile ring.
#[derive(Clone, Copy)]
pub(crate) struct OrchTables<'r>(Tables<'r>);

/// The runtime's view: [`Tables`] and the per-scheduler counters, the rings and the profile
/// ring, for its report; it hands out the orchestrator's view.
#[derive(Clone, Copy)]
pub(crate) struct RunTables<'r>(Tables<'r>);

impl<'r> Deref for OrchTables<'r> {
    type Target = Tables<'r>;
    #[inline(always)]
    fn deref(&self) -> &Tables<'r> {
        &self.0
    }
}

impl<'r> Deref for RunTables<'r> {
    type Target = Tables<'r>;
    #[inline(always)]
    fn deref(&self) -> &Tables<'r> {
        &self.0
    }
}

impl<'r> OrchTables<'r> {
    /// Slots per ring.
    #[inline(always)]
    pub(crate) fn window(&self) -> usize {
        self.0.window
    }
    /// Each ring's positions (the orchestrator advances `next`).
    #[inline(always)]
    pub(crate) fn rings(&self) -> &'r [RingCtl] {
        self.0.rings
    }
    /// Every slot's tensor arguments (`max_tensors` per slot), for the C layer's reads.
    #[inline(always)]
    pub(crate) fn tensors(&self) -> &'r [TensorCell] {
        self.0.tensors
    }
    /// The profile ring (the orchestrator claims a task's cell at submit).
    #[inline(always)]
    pub(crate) fn records(&self) -> &'r [RecordCell] {
        self.0.records
    }
}

impl<'r> RunTables<'r> {
    /// The owner's view of freshly formatted tables.
    pub(crate) fn new(t: Tables<'r>) -> Self {
        RunTables(t)
    }
    /// The orchestrator's view.
    #[inline(always)]
    pub(crate) fn orch(&self) -> OrchTables<'r> {
        OrchTables(self.0)
    }
    /// Each scheduler's counters.
    #[inline(always)]
    pub(crate) fn sched(&self) -> &'r [SchedCtl] {
        self.0.sched
    }
    /// Each ring's positions, for the report.
    #[inline(always)]
    pub(crate) fn rings(&self) -> &'r [RingCtl] {
        self.0.rings
    }
    /// The profile ring, for the report.
    #[inline(always)]
    pub(crate) fn records(&self) -> &'r [RecordCell] {
        self.0.records
    }
}
