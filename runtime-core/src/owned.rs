//! Test support: the runtime's tables in ordinary heap memory, so unit tests and loom models
//! drive the real wiring, completion and reclaim code without a region.
#![forbid(unsafe_code)]

use std::vec::Vec;

use crate::completion::Finisher;
use crate::config::Config;
use crate::deferred::{DeferredStore, Entry, Waiter, WatchSlot, map_len};
use crate::ids::{KernelId, Seq, TaskId, WorkerClass};
use crate::profile::ProfileLevel;
use crate::profile::{ProfRow, RecordCell};
use crate::ready_queue::{QueueCell, QueueCtl, ReadyQueue};
use crate::slot::{Meta, TaskSlot};
use crate::stats::SchedCtl;
use crate::sync::{AtomicU64, Ordering};
use crate::tables::{Edge, RingCtl, Shared, Tables};
use crate::tensor_arg::TensorCell;
use crate::tensor_map::{EntryInfo, Head, MapEntry, NO_TILE, TensorStore, buckets_len, heads_len};

/// Owned storage for every table of `cfg`.
pub(crate) struct Owned {
    cfg: Config,
    shared: Shared,
    rings: Vec<RingCtl>,
    slots: Vec<TaskSlot>,
    args: Vec<AtomicU64>,
    tensors: Vec<TensorCell>,
    edges: Vec<Edge>,
    qctl: Vec<QueueCtl>,
    cells: Vec<Vec<QueueCell>>,
    sched: Vec<SchedCtl>,
    prof_rows: Vec<ProfRow>,
    records: Vec<RecordCell>,
}

impl Owned {
    pub(crate) fn new(cfg: Config) -> Self {
        let n = cfg.rings as usize * cfg.task_window as usize;
        let cap = cfg.ready_queue_capacity();
        Owned {
            cfg,
            shared: Shared::new(&cfg),
            prof_rows: (0..n).map(|_| ProfRow::new()).collect(),
            records: (0..cfg.profile_capacity)
                .map(|_| RecordCell::new())
                .collect(),
            rings: (0..cfg.rings).map(|_| RingCtl::new()).collect(),
            slots: (0..n).map(|_| TaskSlot::new()).collect(),
            args: (0..n * cfg.max_args as usize)
                .map(|_| AtomicU64::new(0))
                .collect(),
            tensors: (0..n * cfg.max_tensors as usize)
                .map(|_| TensorCell::new())
                .collect(),
            edges: (0..n * cfg.max_deps as usize)
                .map(|_| Edge::new())
                .collect(),
            qctl: (0..WorkerClass::COUNT).map(|_| QueueCtl::new()).collect(),
            cells: (0..WorkerClass::COUNT)
                .map(|_| (0..cap).map(QueueCell::new).collect())
                .collect(),
            sched: (0..cfg.schedulers).map(|_| SchedCtl::new()).collect(),
        }
    }

    pub(crate) fn tables(&self) -> Tables<'_> {
        let queues = core::array::from_fn(|i| ReadyQueue::new(&self.cells[i], &self.qctl[i]));
        Tables::new(
            self.cfg,
            &self.shared,
            &self.rings,
            &self.slots,
            &self.args,
            &self.tensors,
            &self.edges,
            queues,
            &self.sched,
            &self.prof_rows,
            &self.records,
        )
    }
}

/// Owned pools for one scheduler's deferred set.
#[cfg_attr(loom, allow(dead_code))]
pub(crate) struct OwnedDeferred {
    waiters: Vec<Waiter>,
    entries: Vec<Entry>,
    watches: Vec<WatchSlot>,
    active: Vec<u32>,
    map: Vec<u32>,
}

#[cfg_attr(loom, allow(dead_code))]
impl OwnedDeferred {
    /// Pools for `capacity` waiting conditions.
    pub(crate) fn new(capacity: usize) -> Self {
        OwnedDeferred {
            waiters: std::vec![Waiter::new(); capacity],
            entries: std::vec![Entry::new(); capacity],
            watches: std::vec![WatchSlot::new(); capacity],
            active: std::vec![0; capacity],
            map: std::vec![0; map_len(capacity)],
        }
    }

    /// The pools, borrowed.
    pub(crate) fn store(&mut self) -> DeferredStore<'_> {
        DeferredStore {
            waiters: &mut self.waiters,
            entries: &mut self.entries,
            watches: &mut self.watches,
            active: &mut self.active,
            map: &mut self.map,
        }
    }
}

/// Deferred-set pools for a test scheduler, sized by `cfg` and leaked (a test's few
/// kilobytes), so the scheduler may borrow them for as long as it likes.
pub(crate) fn leaked_store(cfg: &Config) -> DeferredStore<'static> {
    std::boxed::Box::leak(std::boxed::Box::new(OwnedDeferred::new(
        cfg.deferred_capacity as usize,
    )))
    .store()
}

/// Tensor-map storage for a test orchestrator, sized by `cfg` and leaked like
/// [`leaked_store`].
pub(crate) fn leaked_tensors(cfg: &Config) -> TensorStore<'static> {
    let cells = cfg.rings as usize * cfg.task_window as usize * cfg.max_tensors as usize;
    TensorStore {
        entries: std::vec![MapEntry::new(); cells].leak(),
        infos: std::vec![EntryInfo::new(); cells].leak(),
        tiles: std::vec![NO_TILE; cells].leak(),
        heads: std::vec![Head::EMPTY; heads_len(cells)].leak(),
        buckets: std::vec![crate::deferred::NIL; buckets_len(cells)].leak(),
    }
}

/// Scheduler 0 finishing with nothing measured (no clock, profiling off).
pub(crate) fn unmeasured<'a>(t: &Tables<'a>) -> Finisher<'a> {
    Finisher {
        ctl: &t.sched[0],
        sched: 0,
        now: 0,
        level: ProfileLevel::Off,
    }
}

/// Puts a task with no dependencies into slot `seq` of ring 0 as if submitted, without making
/// it ready (the caller decides who finishes it).
pub(crate) fn plant(t: &Tables<'_>, seq: u64, class: WorkerClass) -> TaskId {
    let id = TaskId::new(t.cfg.epoch, 0, Seq(seq));
    let slot = t.slot(t.gslot(id));
    slot.begin(1, class.lanes() as u32);
    // Wired already: the caller decides who makes it ready or finishes it.
    slot.pending.store(0, Ordering::Relaxed);
    let meta = Meta {
        kernel: KernelId(0),
        class,
        nargs: 0,
        pinned: 0,
        ntensors: 0,
    };
    slot.meta.store(meta.pack(), Ordering::Relaxed);
    slot.publish(seq);
    t.rings[0].next.0.store(seq + 1, Ordering::Release);
    id
}

#[cfg(not(loom))]
pub(crate) use no_cores::NoCores;

#[cfg(not(loom))]
mod no_cores {
    use crate::ids::{CoreId, KernelId, Token};
    use crate::platform::{Payload, Platform};
    use crate::protocol::{ResultWord, StatusWord};

    /// A platform with a frozen clock and no cores, for code that only reads the clock.
    pub(crate) struct NoCores;

    impl Platform for NoCores {
        fn now(&self) -> u64 {
            0
        }
        fn ticks_per_us(&self) -> u64 {
            1
        }
        fn has_kernel(&self, _: KernelId) -> bool {
            true
        }
        fn write_payload(&self, _: CoreId, _: Token, _: &Payload<'_>) {}
        fn ring_doorbell(&self, _: CoreId, _: Token) {}
        fn core_status(&self, _: CoreId) -> StatusWord {
            StatusWord::NONE
        }
        fn result(&self, _: CoreId, _: Token) -> ResultWord {
            ResultWord::default()
        }
        fn spin_hint(&self) {
            crate::sync::spin_loop();
        }
    }
}
