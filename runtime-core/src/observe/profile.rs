//! Profiling as a run-time flag: per-task records and per-scheduler phase counters.
//!
//! The level lives in the region and is read with one relaxed load per check, so `Off` costs
//! that load and nothing else. Timestamps come from the scheduler's lap clock (one read per
//! loop phase, shared by every task the phase handles) and from the cores (kernel start and
//! end); every task reaches its record through the one completion funnel.
#![forbid(unsafe_code)]

use crate::ids::{CoreId, KernelId, TaskId, WorkerClass};
use crate::queues::seq_ring::CachePadded;
use crate::region::config::{Config, ConfigError};
use crate::region::layout::Carve;
use crate::sync::{AtomicU32, AtomicU64, Ordering};

/// How much the runtime measures. Read at run time; changing it needs no rebuild.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug, Default)]
#[repr(u32)]
pub enum ProfileLevel {
    /// Nothing (one relaxed load per check).
    #[default]
    Off = 0,
    /// Per-scheduler phase counters (complete, dispatch, deferred poll, idle).
    Counters = 1,
    /// Counters, plus one record per task in the profile ring.
    Tasks = 2,
}

impl ProfileLevel {
    pub(crate) fn from_code(c: u32) -> Self {
        match c {
            0 => Self::Off,
            1 => Self::Counters,
            _ => Self::Tasks,
        }
    }
}

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

/// Timestamps of one live task (Tasks level), beside its slot.
pub(crate) struct ProfRow {
    pub(crate) submit: AtomicU64,
    pub(crate) ready: AtomicU64,
    pub(crate) dispatch: AtomicU64,
    pub(crate) start: AtomicU64,
    pub(crate) end: AtomicU64,
    pub(crate) fin: AtomicU64,
    pub(crate) deferred: AtomicU64,
    /// First lane's core (`u64::MAX` if none).
    pub(crate) core: AtomicU64,
}

impl ProfRow {
    /// Clears the row for a task submitted at `submit`.
    pub(crate) fn reset(&self, submit: u64) {
        self.submit.store(submit, Ordering::Relaxed);
        for w in [
            &self.ready,
            &self.dispatch,
            &self.start,
            &self.end,
            &self.fin,
            &self.deferred,
        ] {
            w.store(0, Ordering::Relaxed);
        }
        self.core.store(u64::MAX, Ordering::Relaxed);
    }

    pub(crate) fn new() -> Self {
        let z = || AtomicU64::new(0);
        ProfRow {
            submit: z(),
            ready: z(),
            dispatch: z(),
            start: z(),
            end: z(),
            fin: z(),
            deferred: z(),
            core: AtomicU64::new(u64::MAX),
        }
    }
}

/// One finished task, as the host reads it back.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct TaskRecord {
    /// The task.
    pub task: TaskId,
    /// Its kernel.
    pub kernel: KernelId,
    /// Its class.
    pub class: WorkerClass,
    /// The core of its first lane (none for DUMMY).
    pub core: Option<CoreId>,
    /// The scheduler that finished it.
    pub scheduler: u8,
    /// Submitted.
    pub submit: u64,
    /// Became ready.
    pub ready: u64,
    /// Dispatched (first lane).
    pub dispatch: u64,
    /// Kernel started (earliest lane; 0 if the platform does not report it).
    pub start: u64,
    /// Kernel ended (latest lane).
    pub end: u64,
    /// The scheduler saw the last FIN.
    pub fin: u64,
    /// Deferred conditions held (0: the task was not deferred).
    pub deferred_done: u64,
    /// Completed (released its consumers).
    pub complete: u64,
    /// Cancelled: a transfer it waited on failed, or a task it depends on was cancelled, so
    /// it finished without running (or without its result counting).
    pub cancelled: bool,
}

pub(crate) const RECORD_WORDS: usize = 12;

/// Bit of a record's second word that marks a cancelled task.
pub(crate) const CANCELLED_BIT: u32 = 48;

/// A record as stored (every word but the trailing "written" flag): task, `kernel | class <<
/// 32 | scheduler << 40 | cancelled << 48`, core (`u64::MAX`: none), then the stamps in [`TaskRecord`] order.
pub(crate) type RecordWords = [u64; RECORD_WORDS - 1];

/// A record's storage in the region.
pub(crate) struct RecordCell {
    words: [AtomicU64; RECORD_WORDS],
}

impl RecordCell {
    pub(crate) fn new() -> Self {
        RecordCell {
            words: core::array::from_fn(|_| AtomicU64::new(0)),
        }
    }

    fn write(&self, words: &RecordWords) {
        let w = &self.words;
        for (dst, &v) in w.iter().zip(words) {
            dst.store(v, Ordering::Relaxed);
        }
        w[RECORD_WORDS - 1].store(1, Ordering::Release);
    }

    fn read(&self) -> Option<TaskRecord> {
        let w = &self.words;
        if w[RECORD_WORDS - 1].load(Ordering::Acquire) != 1 {
            return None;
        }
        let v = |i: usize| w[i].load(Ordering::Relaxed);
        let meta = v(1);
        let core = v(2);
        Some(TaskRecord {
            task: TaskId::from_raw(v(0)),
            kernel: KernelId(meta as u32),
            class: WorkerClass::from_index(((meta >> 32) & 0xff) as usize)
                .unwrap_or(WorkerClass::Dummy),
            scheduler: (meta >> 40) as u8,
            cancelled: (meta >> CANCELLED_BIT) & 1 != 0,
            core: (core != u64::MAX).then_some(CoreId(core as u16)),
            submit: v(3),
            ready: v(4),
            dispatch: v(5),
            start: v(6),
            end: v(7),
            fin: v(8),
            deferred_done: v(9),
            complete: v(10),
        })
    }
}

/// The profile's tables: a row of stamps per task slot, and the record ring.
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

/// Records one scheduler holds before writing them to the ring.
pub(crate) const RECORD_BATCH: usize = 32;

/// Task records a scheduler keeps until it writes them to the ring in one burst: sequential
/// stores overlap their cache misses, where writing each record as its task completes would
/// stall the completion's next atomic operation on every miss.
pub(crate) struct RecordBatch {
    buf: [RecordWords; RECORD_BATCH],
    len: usize,
}

impl RecordBatch {
    pub(crate) const fn new() -> Self {
        RecordBatch {
            buf: [[0; RECORD_WORDS - 1]; RECORD_BATCH],
            len: 0,
        }
    }

    /// Room for one more record, written in place; the batch goes out first if it is full.
    #[inline]
    pub(crate) fn next(&mut self, prof: &ProfCtl, cells: &[RecordCell]) -> &mut RecordWords {
        if self.len == RECORD_BATCH {
            self.flush(prof, cells);
        }
        self.len += 1;
        &mut self.buf[self.len - 1]
    }

    /// Writes every kept record to the ring.
    pub(crate) fn flush(&mut self, prof: &ProfCtl, cells: &[RecordCell]) {
        if self.len > 0 {
            prof.push_all(cells, &self.buf[..self.len]);
            self.len = 0;
        }
    }

    /// Nothing is kept.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
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

    /// Appends `rs`, counting those past the end of the ring as dropped. Never waits.
    pub(crate) fn push_all(&self, cells: &[RecordCell], rs: &[RecordWords]) {
        let first = self.next.0.fetch_add(rs.len() as u64, Ordering::Relaxed) as usize;
        for (cell, r) in cells.iter().skip(first).zip(rs) {
            cell.write(r);
        }
    }

    /// Records that did not fit.
    pub(crate) fn dropped(&self, capacity: usize) -> u64 {
        self.next
            .0
            .load(Ordering::Acquire)
            .saturating_sub(capacity as u64)
    }

    /// The records written so far, in claim order.
    pub(crate) fn records<'a>(
        &self,
        cells: &'a [RecordCell],
    ) -> impl Iterator<Item = TaskRecord> + 'a {
        let n = (self.next.0.load(Ordering::Acquire) as usize).min(cells.len());
        cells[..n].iter().filter_map(RecordCell::read)
    }
}
