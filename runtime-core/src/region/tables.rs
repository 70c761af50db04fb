//! The runtime's tables in the region, and how ids map onto them.
#![forbid(unsafe_code)]

use crate::ids::{Seq, TaskId, WorkerClass};
use crate::observe::profile::{ProfCtl, ProfParts, ProfRow};
use crate::observe::record::RecordCell;
use crate::observe::stats::SchedCtl;
use crate::observe::status::RunStatus;
use crate::orchestrator::predicate::PredicateCell;
use crate::orchestrator::tensor_arg::TensorCell;
use crate::queues::ready_queue::ReadyQueue;
use crate::queues::seq_ring::CachePadded;
use crate::region::config::{Config, ConfigError};
use crate::region::layout::Carve;
use crate::region::slot::TaskSlot;
use crate::sync::{AtomicU32, AtomicU64, Ordering};

/// Fanout head of a finished task: no edge can be added any more.
pub(crate) const EDGE_CLOSED: u32 = u32::MAX;
/// Fanout head / end of list: no (more) edges.
pub(crate) const EDGE_EMPTY: u32 = u32::MAX - 1;
/// Edge references are below this value.
pub(crate) const EDGE_SENTINELS: u32 = u32::MAX - 1;

/// An edge's place in the edge table (edge `k` of slot `g` is `g * max_deps + k`), as the
/// fanout lists link it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct EdgeRef(u32);

impl EdgeRef {
    /// The edge a fanout word or link names, or `None` for [`EDGE_CLOSED`] and
    /// [`EDGE_EMPTY`] (the end of the list).
    #[inline]
    pub(crate) const fn listed(word: u32) -> Option<Self> {
        if word < EDGE_SENTINELS {
            Some(EdgeRef(word))
        } else {
            None
        }
    }
    /// The edge as a fanout word or link stores it.
    #[inline]
    pub(crate) const fn word(self) -> u32 {
        self.0
    }
}

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

/// One dependency edge, stored in the consumer's slot row: which producer it holds, and the
/// next edge of that producer's fanout list.
pub(crate) struct Edge {
    pub(crate) producer: AtomicU64,
    pub(crate) next: AtomicU32,
}

impl Edge {
    pub(crate) fn new() -> Self {
        Edge {
            producer: AtomicU64::new(0),
            next: AtomicU32::new(EDGE_EMPTY),
        }
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

/// Run-wide words.
pub(crate) struct Shared {
    pub(crate) status: RunStatus,
    /// The first failed transfer ([`crate::FatalKind::TransferFailed`]): recorded at once,
    /// but the run goes on (its consumers are cancelled, the other tasks run) and ends with
    /// it once every task finished.
    pub(crate) task_failure: RunStatus,
    /// Tasks submitted so far (orchestrator).
    pub(crate) submitted: CachePadded<AtomicU64>,
    /// 1 once the orchestrator will submit nothing more.
    pub(crate) orch_done: CachePadded<AtomicU32>,
    /// Profiling level and record ring position.
    pub(crate) prof: ProfCtl,
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
}

/// Views of every table; cheap to copy into each thread's handle.
#[derive(Clone, Copy)]
pub(crate) struct Tables<'r> {
    pub(crate) cfg: Config,
    pub(crate) shift: u32,
    /// `window - 1`: a sequence number's slot in its ring is `seq & seq_mask` (the window is
    /// a power of two), computed once here rather than from `shift` at every lookup.
    pub(crate) seq_mask: u64,
    pub(crate) window: usize,
    pub(crate) max_deps: usize,
    pub(crate) max_args: usize,
    pub(crate) max_tensors: usize,
    pub(crate) shared: &'r Shared,
    pub(crate) rings: &'r [RingCtl],
    pub(crate) slots: &'r [TaskSlot],
    pub(crate) args: &'r [AtomicU64],
    /// Each slot's tensor arguments, for the kernel.
    pub(crate) tensors: &'r [TensorCell],
    /// Each slot's predicate, when its meta says it has one.
    pub(crate) predicates: &'r [PredicateCell],
    pub(crate) edges: &'r [Edge],
    pub(crate) queues: [ReadyQueue<'r>; WorkerClass::COUNT],
    pub(crate) sched: &'r [SchedCtl],
    /// Each slot's profiling row: its tenant's record cell and ready stamp.
    pub(crate) prof_rows: &'r [ProfRow],
    /// The profile ring.
    pub(crate) records: &'r [RecordCell],
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
        let cell = slot.cell.load(Ordering::Relaxed);
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
        EdgeRef((g.0 * self.max_deps + k) as u32)
    }

    /// Edge `e`.
    #[inline]
    pub(crate) fn edge(&self, e: EdgeRef) -> &'r Edge {
        &self.edges[e.0 as usize]
    }

    /// The slot whose row holds edge `e`.
    #[inline]
    pub(crate) fn edge_owner(&self, e: EdgeRef) -> SlotIndex {
        SlotIndex(e.0 as usize / self.max_deps)
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
