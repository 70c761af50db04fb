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
///
/// Records are claimed in submit order, by the orchestrator alone; a claim's position `p`
/// names cell `p % capacity`, and a claim's cells never cross the ring's end (filler cells
/// take the rest of a lap). Without a drain the ring fills once: claims past its end are
/// dropped (counted). With a drain ([`crate::RecordDrain`]) the ring streams: the drain takes
/// closed records in position order and frees their cells, and a claim waits (bounded, by the
/// orchestrator) for its cell to be freed; past the bound it is lost (counted).
pub(crate) struct ProfCtl {
    level: AtomicU32,
    /// Positions claimed so far (including dropped ones without a drain).
    next: CachePadded<AtomicU64>,
    /// Positions the drain has taken and freed; [`UNDRAINED`] while the ring has no drain.
    drained: CachePadded<AtomicU64>,
    /// Records a streamed ring gave up on: claims that found it full past the wait's bound.
    lost: AtomicU64,
}

/// [`ProfCtl`]'s `drained` word while the ring has no drain.
const UNDRAINED: u64 = u64::MAX;

impl ProfCtl {
    pub(crate) fn new(level: ProfileLevel) -> Self {
        ProfCtl {
            level: AtomicU32::new(level as u32),
            next: CachePadded(AtomicU64::new(0)),
            drained: CachePadded(AtomicU64::new(UNDRAINED)),
            lost: AtomicU64::new(0),
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

    /// Makes the ring stream to a drain; false if it has one already or a record was
    /// claimed already (the ring's positions then name cells its own way).
    pub(crate) fn stream(&self) -> bool {
        self.next.0.load(Ordering::Acquire) == 0
            && self
                .drained
                .0
                .compare_exchange(UNDRAINED, 0, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
    }

    /// Whether the ring streams to a drain.
    pub(crate) fn streamed(&self) -> bool {
        self.drained.0.load(Ordering::Relaxed) != UNDRAINED
    }

    /// Makes room for a claim of `n` cells of `cells` if the drain has freed it: whether the
    /// claim will find its cells free (always, without a drain: a claim then never waits).
    /// A claim's cells never wrap past the ring's end: when `n` would, the rest of the lap is
    /// claimed first as filler cells, which the drain passes over. Only the orchestrator
    /// calls it; its wait polls it.
    #[inline]
    pub(crate) fn make_room(&self, cells: &[RecordCell], n: u16) -> bool {
        let drained = self.drained.0.load(Ordering::Acquire);
        if drained == UNDRAINED {
            return true;
        }
        let (cap, n) = (cells.len() as u64, u64::from(n));
        let mut i = self.next.0.load(Ordering::Relaxed);
        let off = i.checked_rem(cap).unwrap_or(0);
        if off + n > cap && n <= cap {
            let pad = cap - off;
            if i + pad > drained + cap {
                return false;
            }
            for c in &cells[off as usize..] {
                c.fill();
            }
            i += pad;
            self.next.0.store(i, Ordering::Release);
        }
        i + n <= drained + cap
    }

    /// Whether a claim of `n` cells could ever find room in a ring of `capacity`.
    pub(crate) fn fits(capacity: usize, n: u16) -> bool {
        usize::from(n) <= capacity
    }

    /// Claims the next cell of `cells`: its index, or [`NO_CELL`] if there is no room (the
    /// record is counted as dropped, or lost). Never waits.
    #[inline]
    pub(crate) fn claim(&self, cells: &[RecordCell]) -> u32 {
        self.claim_n(cells, 1)
    }

    /// Claims the next `n` cells of `cells` (a task's blocks' records, consecutive; with a
    /// drain, after [`ProfCtl::make_room`]): the first one's index, or [`NO_CELL`] if they do
    /// not all fit (counted as dropped, or lost). Never waits.
    #[inline]
    pub(crate) fn claim_n(&self, cells: &[RecordCell], n: u16) -> u32 {
        let capacity = cells.len() as u64;
        let drained = self.drained.0.load(Ordering::Acquire);
        if drained == UNDRAINED {
            let i = self.next.0.fetch_add(u64::from(n), Ordering::Relaxed);
            return if i + u64::from(n) <= capacity {
                i as u32
            } else {
                NO_CELL
            };
        }
        // Streamed: only the orchestrator claims, so a load and a store suffice; the drain
        // reads `next` (Acquire) to know how far records may have been opened.
        let i = self.next.0.load(Ordering::Relaxed);
        let off = i.checked_rem(capacity).unwrap_or(0);
        if i + u64::from(n) <= drained + capacity && off + u64::from(n) <= capacity {
            self.next.0.store(i + u64::from(n), Ordering::Release);
            off as u32
        } else {
            self.lost.fetch_add(u64::from(n), Ordering::Relaxed);
            NO_CELL
        }
    }

    /// Records not kept: claims past the end of a ring without a drain, and claims a
    /// streamed ring gave up on.
    pub(crate) fn dropped(&self, capacity: usize) -> u64 {
        let lost = self.lost.load(Ordering::Acquire);
        if self.streamed() {
            lost
        } else {
            self.next
                .0
                .load(Ordering::Acquire)
                .saturating_sub(capacity as u64)
                + lost
        }
    }

    /// Positions claimed so far.
    pub(crate) fn claimed(&self) -> u64 {
        self.next.0.load(Ordering::Acquire)
    }

    /// Positions the drain has freed (0 without a drain).
    pub(crate) fn drained(&self) -> u64 {
        match self.drained.0.load(Ordering::Acquire) {
            UNDRAINED => 0,
            d => d,
        }
    }

    /// The drain freed every position below `pos`: their cells are reset.
    pub(crate) fn set_drained(&self, pos: u64) {
        self.drained.0.store(pos, Ordering::Release);
    }

    /// The closed records in the ring (not yet taken by a drain), in claim (submit) order.
    pub(crate) fn records<'a>(
        &self,
        cells: &'a [RecordCell],
    ) -> impl Iterator<Item = TaskRecord> + 'a {
        let end = self.claimed();
        let (from, to) = if self.streamed() {
            (self.drained(), end)
        } else {
            (0, end.min(cells.len() as u64))
        };
        let cap = cells.len().max(1) as u64;
        (from..to).filter_map(move |p| cells.get((p % cap) as usize).and_then(RecordCell::read))
    }
}
