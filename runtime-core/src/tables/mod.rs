//! The runtime's tables in the region, and how ids map onto them; what every thread does on
//! them: make a task ready ([`ready`]), drop holds and reclaim slots ([`reclaim`]), list the
//! live tasks of a stopped run (`live`), stream the task records out ([`drain`]); and the views that say which role touches what
//! ([`views`]).
#![forbid(unsafe_code)]

pub(crate) mod drain;
mod live;
pub(crate) mod ready;
pub(crate) mod reclaim;
pub(crate) mod views;

#[cfg(all(test, not(loom)))]
mod drain_tests;
#[cfg(all(test, loom))]
mod loom_drain;
#[cfg(all(test, loom))]
mod loom_reclaim;

use crate::ids::{Seq, TaskId, WorkerClass};
use crate::observe::profile::{ProfCtl, ProfParts, ProfRow};
use crate::observe::record::RecordCell;
use crate::observe::stats::SchedCtl;
use crate::observe::status::RunStatus;
use crate::predicate::PredicateCell;
use crate::queues::ready_queue::ReadyQueue;
use crate::region::carve::Carve;
use crate::region::config::{Config, ConfigError};
pub(crate) use crate::region::edge::{EDGE_CLOSED, Edge, EdgeRef};
use crate::region::slot::TaskSlot;
use crate::sync::{AtomicU32, AtomicU64, CachePadded, Ordering};
use crate::tensor::arg::TensorCell;

/// A task slot's place in the slot table, ring-major (ring `r` holds `r * window ..
/// (r + 1) * window`). It indexes the slot table and every per-slot row (arguments, tensors,
/// edges, profile rows) through [`Tables`]' accessors, and nothing else.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct SlotIndex(usize);

impl SlotIndex {
    /// Slot `g` of the table (`g` below the slot count).
    #[cfg(all(test, not(loom)))]
    #[inline]
    pub(crate) const fn at(g: usize) -> Self {
        SlotIndex(g)
    }
    /// The position in the slot table.
    #[inline]
    pub(crate) const fn get(self) -> usize {
        self.0
    }
}

/// Per-ring positions: `next` (orchestrator) and `retired` (watermark, any scheduler).
pub(crate) struct RingCtl {
    /// Sequence number the ring hands out next.
    pub(crate) next: CachePadded<AtomicU64>,
    /// Every task below this sequence number is consumed; its slot may be reused.
    pub(crate) retired: CachePadded<AtomicU64>,
}

impl RingCtl {
    pub(crate) fn new() -> Self {
        RingCtl {
            next: CachePadded(AtomicU64::new(0)),
            retired: CachePadded(AtomicU64::new(0)),
        }
    }

    /// The watermark (Acquire): every task below it is consumed, so what it held is free
    /// and its slot may have a new tenant.
    #[inline]
    pub(crate) fn retired(&self) -> u64 {
        self.retired.0.load(Ordering::Acquire)
    }
}

/// Run-wide words, each read and written through the method that says what it means (and
/// who writes it).
pub(crate) struct Shared {
    status: RunStatus,
    /// The first failed transfer ([`crate::FatalKind::TransferFailed`]): recorded at once,
    /// but the run goes on (its consumers are cancelled, the other tasks run) and ends with
    /// it once every task finished.
    task_failure: RunStatus,
    /// Tasks submitted so far (orchestrator).
    submitted: CachePadded<AtomicU64>,
    /// 1 once the orchestrator will submit nothing more.
    orch_done: CachePadded<AtomicU32>,
    /// Profiling level and record ring position.
    prof: ProfCtl,
}

impl Shared {
    pub(crate) fn new(cfg: &Config) -> Self {
        Shared {
            prof: ProfCtl::new(cfg.profile),
            status: RunStatus::new(),
            task_failure: RunStatus::new(),
            submitted: CachePadded(AtomicU64::new(0)),
            orch_done: CachePadded(AtomicU32::new(0)),
        }
    }

    /// The run's status, its first fatal error: every thread reads it, whoever fails the run
    /// sets it.
    #[inline(always)]
    pub(crate) fn status(&self) -> &RunStatus {
        &self.status
    }

    /// The first failed transfer: the scheduler that sees it records it, and every scheduler
    /// ends the run with it once every task finished.
    #[inline(always)]
    pub(crate) fn task_failure(&self) -> &RunStatus {
        &self.task_failure
    }

    /// The profiling level and the record ring's position: the orchestrator claims cells,
    /// the schedulers close them, the runtime reads them back.
    #[inline(always)]
    pub(crate) fn prof(&self) -> &ProfCtl {
        &self.prof
    }

    /// The orchestrator: `n` tasks are submitted, each published before this.
    #[inline(always)]
    pub(crate) fn publish_submitted(&self, n: u64) {
        self.submitted.0.store(n, Ordering::Release);
    }

    /// Tasks submitted so far, and every one of them published.
    #[inline(always)]
    pub(crate) fn submitted(&self) -> u64 {
        self.submitted.0.load(Ordering::Acquire)
    }

    /// The orchestrator: it will submit nothing more.
    pub(crate) fn close_submissions(&self) {
        self.orch_done.0.store(1, Ordering::Release);
    }

    /// Whether the orchestrator closed its submissions.
    #[inline(always)]
    pub(crate) fn submissions_closed(&self) -> bool {
        self.orch_done.0.load(Ordering::Acquire) == 1
    }
}

/// Views of every table; cheap to copy into each thread's handle.
#[derive(Clone, Copy)]
pub(crate) struct Tables<'r> {
    cfg: Config,
    shift: u32,
    /// `window - 1`: a sequence number's slot in its ring is `seq & seq_mask` (the window is
    /// a power of two), computed once here rather than from `shift` at every lookup.
    seq_mask: u64,
    window: usize,
    max_deps: usize,
    max_args: usize,
    max_tensors: usize,
    shared: &'r Shared,
    rings: &'r [RingCtl],
    slots: &'r [TaskSlot],
    args: &'r [AtomicU64],
    /// Each slot's tensor arguments, for the kernel.
    tensors: &'r [TensorCell],
    /// Each slot's predicate, when its meta says it has one.
    predicates: &'r [PredicateCell],
    edges: &'r [Edge],
    queues: [ReadyQueue<'r>; WorkerClass::COUNT],
    sched: &'r [SchedCtl],
    /// Each slot's profiling row: its tenant's record cell and ready stamp.
    prof_rows: &'r [ProfRow],
    /// The profile ring.
    records: &'r [RecordCell],
}

/// The fields are private: other modules read the config and the run-wide words through
/// these accessors, the per-slot rows through the indexed ones below, and what one role
/// alone touches through its view ([`views`]).
impl<'r> Tables<'r> {
    /// The config the region was laid out from.
    #[inline(always)]
    pub(crate) fn cfg(&self) -> &Config {
        &self.cfg
    }
    /// The run-wide words: run status, submitted count, profiling control.
    #[inline(always)]
    pub(crate) fn shared(&self) -> &'r Shared {
        self.shared
    }
}

impl<'r> Tables<'r> {
    /// Global slot index of `id` (ring-major).
    #[inline]
    pub(crate) fn gslot(&self, id: TaskId) -> SlotIndex {
        // The sequence number is the id's low `SEQ_BITS` bits and the window mask is below
        // 2^32 (the window is a `u32`): masking the raw id gives the sequence number's slot
        // without extracting the sequence number first.
        const _: () = assert!(TaskId::SEQ_BITS >= u32::BITS);
        SlotIndex(id.ring() as usize * self.window + (id.raw() & self.seq_mask) as usize)
    }

    /// The slot of sequence number `seq` in ring `ring`.
    #[inline]
    pub(crate) fn slot_of(&self, ring: usize, seq: Seq) -> SlotIndex {
        SlotIndex(ring * self.window + (seq.0 & self.seq_mask) as usize)
    }

    /// The slot of the task of raw id `raw` in the ring whose sequence number 0 has slot
    /// `ring_first` ([`Tables::slot_of`]): [`Tables::gslot`] with the ring's part known.
    #[inline(always)]
    pub(crate) fn slot_in(&self, ring_first: SlotIndex, raw: u64) -> SlotIndex {
        SlotIndex(ring_first.0 + (raw & self.seq_mask) as usize)
    }

    /// Slot `g`.
    #[inline]
    pub(crate) fn slot(&self, g: SlotIndex) -> &'r TaskSlot {
        &self.slots[g.0]
    }

    /// The profile row of slot `g`.
    #[inline]
    pub(crate) fn prof_row(&self, g: SlotIndex) -> &'r ProfRow {
        &self.prof_rows[g.0]
    }

    /// The record cell of slot `g`'s tenant, if it keeps a record (it was submitted at
    /// `Tasks` and found room in the ring).
    #[inline]
    pub(crate) fn record_of(&self, g: SlotIndex) -> Option<&'r RecordCell> {
        self.record_in(self.slot(g))
    }

    /// The record of block `block` of the task in `slot` (a task of several blocks keeps
    /// one per block, in consecutive cells from its slot's `cell`).
    #[inline]
    pub(crate) fn record_block(&self, slot: &TaskSlot, block: u16) -> Option<&'r RecordCell> {
        self.record_at(slot.cell.load(Ordering::Relaxed), block)
    }

    /// The record `block` cells after `cell` (a claim's first; a claim's cells never wrap
    /// past the ring's end); `None` for `NO_CELL`, which is past the end of any ring.
    #[inline(always)]
    pub(crate) fn record_at(&self, cell: u32, block: u16) -> Option<&'r RecordCell> {
        self.records
            .get((cell as usize).saturating_add(block as usize))
    }

    /// [`Tables::record_of`] for a caller that holds the slot already.
    #[inline]
    pub(crate) fn record_in(&self, slot: &TaskSlot) -> Option<&'r RecordCell> {
        // `NO_CELL` is past the end of any ring (its length is a `u32`).
        let cell = slot.cell.load(Ordering::Relaxed);
        self.records.get(cell as usize)
    }

    /// The ring slot `g` belongs to.
    #[inline]
    pub(crate) fn ring_of(&self, g: SlotIndex) -> usize {
        g.0 >> self.shift
    }

    /// The id of the current tenant of slot `g`.
    #[inline]
    pub(crate) fn task_at(&self, g: SlotIndex) -> TaskId {
        let seq = self.slots[g.0].seq.load(Ordering::Relaxed);
        TaskId::new(self.cfg.epoch, self.ring_of(g) as u8, Seq(seq))
    }

    /// Reference of edge `k` of slot `g`.
    #[inline]
    pub(crate) fn edge_ref(&self, g: SlotIndex, k: usize) -> EdgeRef {
        EdgeRef::at((g.0 * self.max_deps + k) as u32)
    }

    /// The edges of slot `g` (its tenant's, one per dependency it waits for), and the
    /// reference of the first.
    #[inline]
    pub(crate) fn edge_row(&self, g: SlotIndex) -> (&'r [Edge], EdgeRef) {
        let first = g.0 * self.max_deps;
        (
            &self.edges[first..first + self.max_deps],
            EdgeRef::at(first as u32),
        )
    }

    /// Edge `e`.
    #[inline]
    pub(crate) fn edge(&self, e: EdgeRef) -> &'r Edge {
        &self.edges[e.word() as usize]
    }

    /// The slot whose row holds edge `e`.
    #[inline]
    pub(crate) fn edge_owner(&self, e: EdgeRef) -> SlotIndex {
        SlotIndex(e.word() as usize / self.max_deps)
    }

    /// The argument row of slot `g`.
    #[inline]
    pub(crate) fn args_of(&self, g: SlotIndex) -> &'r [AtomicU64] {
        &self.args[g.0 * self.max_args..(g.0 + 1) * self.max_args]
    }

    /// Slot `g`'s predicate cell.
    #[inline]
    pub(crate) fn predicate_of(&self, g: SlotIndex) -> &'r PredicateCell {
        &self.predicates[g.0]
    }

    /// The tensor argument row of slot `g`.
    #[inline]
    pub(crate) fn tensors_of(&self, g: SlotIndex) -> &'r [TensorCell] {
        &self.tensors[g.0 * self.max_tensors..(g.0 + 1) * self.max_tensors]
    }

    #[inline]
    pub(crate) fn queue(&self, class: WorkerClass) -> &ReadyQueue<'r> {
        &self.queues[class.index()]
    }

    /// Tasks finished by every scheduler so far.
    pub(crate) fn finished(&self) -> u64 {
        self.sched
            .iter()
            .map(|s| s.finished.load(Ordering::Acquire))
            .sum()
    }
}

/// The run-wide tables: shared words, rings, schedulers' blocks, task slots with their
/// argument and edge rows.
pub(crate) struct CoreParts<'r> {
    pub(crate) shared: &'r mut [Shared],
    pub(crate) rings: &'r mut [RingCtl],
    pub(crate) sched: &'r mut [SchedCtl],
    pub(crate) slots: &'r mut [TaskSlot],
    pub(crate) args: &'r mut [AtomicU64],
    pub(crate) tensors: &'r mut [TensorCell],
    pub(crate) predicates: &'r mut [PredicateCell],
    pub(crate) edges: &'r mut [Edge],
}

impl<'r> CoreParts<'r> {
    /// Takes the run-wide tables of `cfg` from `c`.
    pub(crate) fn carve(cfg: &Config, c: &mut impl Carve<'r>) -> Result<Self, ConfigError> {
        let slots = cfg.rings as usize * cfg.task_window as usize;
        Ok(CoreParts {
            shared: c.table(1, |_| Shared::new(cfg))?,
            rings: c.table(cfg.rings as usize, |_| RingCtl::new())?,
            sched: c.table(cfg.schedulers as usize, |_| SchedCtl::new())?,
            slots: c.table(slots, |_| TaskSlot::new())?,
            args: c.table(slots * cfg.max_args as usize, |_| AtomicU64::new(0))?,
            tensors: c.table(slots * cfg.max_tensors as usize, |_| TensorCell::new())?,
            predicates: c.table(slots, |_| PredicateCell::new())?,
            edges: c.table(slots * cfg.max_deps as usize, |_| Edge::new())?,
        })
    }
}

impl<'r> CoreParts<'r> {
    /// Views over these freshly formatted tables, the ready `queues` and the profile's
    /// tables.
    pub(crate) fn into_tables(
        self,
        cfg: Config,
        queues: [ReadyQueue<'r>; WorkerClass::COUNT],
        prof: ProfParts<'r>,
    ) -> Tables<'r> {
        let CoreParts {
            shared,
            rings,
            sched,
            slots,
            args,
            tensors,
            predicates,
            edges,
        } = self;
        Tables {
            cfg,
            shift: cfg.window_shift(),
            seq_mask: (1u64 << cfg.window_shift()) - 1,
            window: cfg.task_window as usize,
            max_deps: cfg.max_deps as usize,
            max_args: cfg.max_args as usize,
            max_tensors: cfg.max_tensors as usize,
            shared: &shared[0],
            rings,
            slots,
            args,
            tensors,
            predicates,
            edges,
            queues,
            sched,
            prof_rows: prof.rows,
            records: prof.records,
        }
    }
}
