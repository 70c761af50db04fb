//! Profiling as a run-time flag: per-task records and per-scheduler phase counters.
//!
//! The level lives in the region and is read with one relaxed load per check, so `Off` costs
//! that load and nothing else. Timestamps come from the scheduler's lap clock (one read per
//! loop phase, shared by every task the phase handles) and from the cores (kernel start and
//! end); every task reaches its record through the one completion funnel.
#![forbid(unsafe_code)]

use super::record::{RecordCell, TaskRecord};
use crate::region::carve::Carve;
pub use crate::region::config::ProfileLevel;
use crate::region::config::{Config, ConfigError};
pub(crate) use crate::region::slot::NO_CELL;
use crate::sync::{AtomicU32, AtomicU64, CachePadded, Ordering};

/// Scheduler loop phases, in [`PhaseCounters::ticks`] order.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Phase {
    /// Reading status words and finishing tasks (normal and DUMMY).
    Complete = 0,
    /// Popping ready tasks and ringing doorbells.
    Dispatch = 1,
    /// Polling deferred completion conditions, and draining the engines' completion queues.
    DeferredPoll = 2,
    /// Iterations that found nothing to do, and the spin hint after them.
    Idle = 3,
}

/// Phases a scheduler's time is split into.
pub const PHASES: usize = 4;

/// One scheduler's time by phase, in clock ticks. The phases add up to `total` exactly: one
/// lap clock is cut at each phase boundary.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct PhaseCounters {
    /// Ticks per [`Phase`].
    pub ticks: [u64; PHASES],
    /// Ticks from the first to the last lap of the loop.
    pub total: u64,
    /// Loop iterations measured.
    pub loops: u64,
}

/// What a task slot keeps for the latency histogram, beside the slot: its tenant's ready
/// stamp (with `record_latency`).
pub(crate) struct ProfRow {
    /// When the tenant became ready.
    pub(crate) ready: AtomicU64,
}

impl ProfRow {
    pub(crate) fn new() -> Self {
        ProfRow {
            ready: AtomicU64::new(0),
        }
    }
}

/// The profile's tables: a row per task slot (its ready stamp), and the record ring.
pub(crate) struct ProfParts<'r> {
    pub(crate) rows: &'r mut [ProfRow],
    pub(crate) records: &'r mut [RecordCell],
}

impl<'r> ProfParts<'r> {
    /// Takes the profile tables of `cfg` from `c`.
    pub(crate) fn carve(cfg: &Config, c: &mut impl Carve<'r>) -> Result<Self, ConfigError> {
        let slots = cfg.rings as usize * cfg.task_window as usize;
        Ok(ProfParts {
            rows: c.table(slots, |_| ProfRow::new())?,
            records: c.table(cfg.profile_capacity as usize, |_| RecordCell::new())?,
        })
    }
}

/// The profiling words of the region.
pub(crate) struct ProfCtl {
    level: AtomicU32,
    /// Records claimed so far (including dropped ones).
    next: CachePadded<AtomicU64>,
}

impl ProfCtl {
    pub(crate) fn new(level: ProfileLevel) -> Self {
        ProfCtl {
            level: AtomicU32::new(level as u32),
            next: CachePadded(AtomicU64::new(0)),
        }
    }

    /// The current level: one relaxed load.
    #[inline]
    pub(crate) fn level(&self) -> ProfileLevel {
        ProfileLevel::from_code(self.level.load(Ordering::Relaxed))
    }

    pub(crate) fn set_level(&self, level: ProfileLevel) {
        self.level.store(level as u32, Ordering::Relaxed);
    }

    /// Claims the next cell of a ring of `capacity` cells: its index, or [`NO_CELL`] once
    /// the ring is full (the record is counted as dropped). Never waits.
    #[inline]
    pub(crate) fn claim(&self, capacity: usize) -> u32 {
        self.claim_n(capacity, 1)
    }

    /// Claims the next `n` cells (a task's blocks' records): the first one's index, or
    /// [`NO_CELL`] if they do not all fit (they are counted as dropped). Never waits.
    #[inline]
    pub(crate) fn claim_n(&self, capacity: usize, n: u16) -> u32 {
        let i = self.next.0.fetch_add(u64::from(n), Ordering::Relaxed);
        if i + u64::from(n) <= capacity as u64 {
            i as u32
        } else {
            NO_CELL
        }
    }

    /// Records that did not fit.
    pub(crate) fn dropped(&self, capacity: usize) -> u64 {
        self.next
            .0
            .load(Ordering::Acquire)
            .saturating_sub(capacity as u64)
    }

    /// The records written so far, in claim (submit) order.
    pub(crate) fn records<'a>(
        &self,
        cells: &'a [RecordCell],
    ) -> impl Iterator<Item = TaskRecord> + 'a {
        let n = (self.next.0.load(Ordering::Acquire) as usize).min(cells.len());
        cells[..n].iter().filter_map(RecordCell::read)
    }
}
