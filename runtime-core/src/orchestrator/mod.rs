//! The orchestrator: submits tasks, one thread, with back-pressure when a window is full.
#![forbid(unsafe_code)]

use crate::error::SubmitError;
use crate::ids::{Seq, TaskId, WorkerClass};
use crate::observe::profile::{NO_CELL, ProfileLevel};
use crate::orchestrator::store::{OrchestratorStore, Tenants};
use crate::orchestrator::tensor_map::{TensorArg, TensorMap};
use crate::platform::Platform;
use crate::region::config::{MAX_DEPS, MAX_RINGS};
use crate::region::slot::{Meta, TaskSlot};
use crate::sync::Ordering;
use crate::tables::ready::{Ready, make_submitted_ready};
use crate::tables::views::OrchTables;
use crate::tables::{SlotIndex, Tables};

#[cfg(feature = "fault-injection")]
mod fault;
mod graph;
mod heap;
mod record;
mod record_wait;
mod scope;
mod settle;
pub(crate) mod store;
pub(crate) mod tensor_map;
mod validate;
mod wait;
pub(crate) mod wire;

#[cfg(all(test, not(loom)))]
mod refusal_tests;
#[cfg(all(test, not(loom)))]
mod scope_heap_tests;
#[cfg(all(test, not(loom)))]
mod settle_tests;

pub use crate::task_spec::TaskSpec;
#[cfg(feature = "fault-injection")]
pub use fault::Fault;
pub(crate) use graph::Recording;
pub use graph::{
    Bindings, Graph, GraphRecordedArg, GraphRecordedTask, GraphRecorder, GraphStorage, Instance,
    MAX_GRAPH_BOUNDARIES, MAX_GRAPH_INTERNALS, MAX_GRAPH_PATCHES, MAX_GRAPH_SCALARS, Node,
};
use heap::RingHeap;
pub use record::{DepReason, Dependency};
use record::{NoRecord, Recorder};

/// A task's dependencies, explicit and found, each once.
type DepList = heapless::Vec<TaskId, { MAX_DEPS as usize }>;

/// The submitting side of a run. One per runtime; dropping it (or [`Orchestrator::finish`])
/// tells the schedulers that the task list is complete.
pub struct Orchestrator<'r, 'p, P: Platform> {
    t: OrchTables<'r>,
    p: &'p P,
    next: [u64; MAX_RINGS as usize],
    submitted: u64,
    timeout_ticks: u64,
    /// Live tasks' tensor arguments.
    tensors: TensorMap<'r>,
    /// What only the orchestrator keeps about each slot's tenant.
    tenants: Tenants<'r>,
    /// Each ring's watermark when the map last dropped retired tasks.
    forgotten: [u64; MAX_RINGS as usize],
    /// The drain's position when a wait for a record's cell last timed out: until it moves,
    /// submits lose their records without waiting again.
    records_stalled_at: Option<u64>,
    /// Open scopes, outermost first: the next sequence number of each ring when each began.
    scopes: heapless::Vec<[u64; MAX_RINGS as usize], MAX_SCOPE_DEPTH>,
    /// Each ring's share of the platform's output heap.
    heaps: [RingHeap; MAX_RINGS as usize],
    /// Bit `class.index()`: the configuration gives that class cores to run on.
    served: u8,
    /// By class: the most cores (clusters for MIX) one scheduler owns, the widest a
    /// sync-start task may be.
    sync_max: [u16; WorkerClass::COUNT],
    /// The fault armed for the next submit it applies to.
    #[cfg(feature = "fault-injection")]
    fault: Option<fault::Fault>,
}

/// Deepest nesting of scopes.
pub const MAX_SCOPE_DEPTH: usize = 16;

impl<'r, 'p, P: Platform> Orchestrator<'r, 'p, P> {
    pub(crate) fn new(t: OrchTables<'r>, p: &'p P, store: OrchestratorStore<'r>) -> Self {
        let timeout_ticks = t
            .cfg()
            .submit_timeout_us
            .saturating_mul(p.ticks_per_us().max(1));
        Orchestrator {
            t,
            p,
            next: [0; MAX_RINGS as usize],
            submitted: 0,
            timeout_ticks,
            tensors: TensorMap::new(store.tensors, t.cfg().max_tensors as usize, t.tensors()),
            tenants: store.tenants,
            forgotten: [0; MAX_RINGS as usize],
            records_stalled_at: None,
            scopes: heapless::Vec::new(),
            heaps: {
                let (base, len) = p.heap();
                core::array::from_fn(|r| {
                    let (base, len) = t.cfg().ring_heap(r as u8, base, len);
                    RingHeap {
                        base,
                        len,
                        ..RingHeap::default()
                    }
                })
            },
            served: validate::served_classes(t.cfg()),
            sync_max: validate::sync_max(t.cfg()),
            #[cfg(feature = "fault-injection")]
            fault: None,
        }
    }

    /// Tasks submitted so far.
    pub fn submitted(&self) -> u64 {
        self.submitted
    }

    /// Entries in the tensor map (for tests).
    #[cfg(all(test, not(loom)))]
    pub(crate) fn tensor_entries(&self) -> usize {
        self.tensors.linked()
    }

    /// The platform the run drives (to reach its device memory, say).
    pub fn platform(&self) -> &'p P {
        self.p
    }

    /// Submits a task. Waits (bounded by `submit_timeout_us`) while its ring's window is
    /// full; every other problem is reported without waiting (except more dependencies found
    /// through the tensor arguments than `max_deps`, known once the slot is free) and leaves
    /// nothing behind.
    pub fn submit(&mut self, spec: &TaskSpec<'_>) -> Result<TaskId, SubmitError> {
        if spec.tensors.is_empty() {
            self.submit_plain(spec)
        } else {
            self.submit_tensors(spec)
        }
    }

    /// [`Orchestrator::submit`] of a task without tensor arguments: a function of its own,
    /// so that its registers and frame owe nothing to the tensor path.
    #[inline(never)]
    fn submit_plain(&mut self, spec: &TaskSpec<'_>) -> Result<TaskId, SubmitError> {
        // The spec by reference: its fields are read where used (a copy no longer fits the
        // registers, and spilling it cost 17 instructions a task).
        self.submit_inner::<_, false>(spec, &mut NoRecord, None)
    }

    /// [`Orchestrator::submit`] of a task with tensor arguments.
    #[inline(never)]
    fn submit_tensors(&mut self, spec: &TaskSpec<'_>) -> Result<TaskId, SubmitError> {
        self.submit_inner::<_, true>(spec, &mut NoRecord, None)
    }

    /// [`Orchestrator::submit`], telling `rec` how the task was wired (nothing, and no cost,
    /// for [`NoRecord`]). See [`Orchestrator::submit_recorded`]. Without `TENSORS`, the
    /// task's tensor arguments are taken to be none (the caller knows): that copy of the
    /// path carries none of their code. `instance_heap`: where the buffers of the graph
    /// instance the task belongs to start (it holds them), if it belongs to one.
    fn submit_inner<R: Recorder, const TENSORS: bool>(
        &mut self,
        spec: &TaskSpec<'_>,
        rec: &mut R,
        instance_heap: Option<u64>,
    ) -> Result<TaskId, SubmitError> {
        // Read from here on instead of `spec.tensors` (the spec itself is not copied).
        let tensors = if TENSORS { spec.tensors } else { &[] };
        self.check_running()?;
        // Each tile is checked as the map adds it (or before a wait): an error found before
        // that is the first bad tile's if there is one.
        self.validate(spec, tensors)?;
        let (id, g) = self.claim_slot(spec.ring, tensors)?;
        let mut deps = DepList::new();
        self.dependencies(spec, tensors, (g, id), &mut deps, rec)?;
        let wired = (tensors.len(), instance_heap);
        let live = self.file_task::<R>(spec, (g, id), wired, deps.iter().copied());
        if R::ON {
            rec.report(id, &deps, live);
        }
        // A constant: no code at all for a platform that does not ask.
        if P::OBSERVES_SUBMITS && self.p.observing() {
            self.p.submitted(id, spec, &deps);
        }
        Ok(id)
    }

    /// The next task of `ring`: its id and slot, once the slot is free (the task a window
    /// back reclaimed). A task that must wait has its tiles (`tensors`) checked first.
    #[inline(always)]
    fn claim_slot(
        &self,
        ring: u8,
        tensors: &[TensorArg],
    ) -> Result<(TaskId, SlotIndex), SubmitError> {
        let seq = self.next[ring as usize];
        if seq > Seq::MAX.0 {
            let e = SubmitError::SequenceExhausted { ring };
            return Err(validate::tiles_first(tensors, e));
        }
        self.wait_for_slot(ring as usize, seq, tensors)?;
        let id = TaskId::new(self.t.cfg().epoch, ring, Seq(seq));
        Ok((id, self.t.gslot(id)))
    }

    /// Files task `id` of `spec` in its claimed slot `g`, its `ntensors` tensor arguments
    /// already in its kernel's row and wired as `w` says: its slot begun and published, its
    /// record opened, an edge from each of `deps` (each once) that is still live, and the
    /// task made ready if none is. Returns which of `deps` were pinned (bit `i`: the `i`th),
    /// when `R` records (else 0).
    #[inline(always)]
    fn file_task<R: Recorder>(
        &mut self,
        spec: &TaskSpec<'_>,
        (g, id): (SlotIndex, TaskId),
        (ntensors, instance_heap): (usize, Option<u64>),
        deps: impl Iterator<Item = TaskId>,
    ) -> u64 {
        let ring = spec.ring as usize;
        // The task's sequence number (`id`'s): the ring's next.
        let seq = self.next[ring];
        let level = self.t.shared().prof().level();
        if level == ProfileLevel::Tasks {
            // Before the slot is begun: nothing of this task is written yet.
            self.wait_for_records(spec.blocks.max(1));
        }
        let t = &self.t;
        let now = if t.cfg().record_latency || level != ProfileLevel::Off {
            self.p.now()
        } else {
            0
        };

        let slot = t.slot(g);
        // A task in an open scope is also held by the scope, until the scope ends.
        let scoped = !self.scopes.is_empty() as u32;
        let plain = spec.is_plain();
        slot.begin(1 + scoped, spec.class.lanes() as u32);
        let shape = if plain { 0 } else { shape_of(t, g, slot, spec) };
        // The buffers allocated since the last submit to this ring are this task's.
        let heap = &mut self.heaps[ring];
        let row = self.tenants.row_mut(g);
        row.scoped = scoped != 0;
        // A graph's instance's tasks all hold its buffers (allocated before its first).
        row.heap_start = instance_heap.unwrap_or(heap.pending);
        // The map holds this many of its cells (read when the tenant leaves it).
        row.tensors = ntensors as u8;
        heap.pending = heap.head;
        // The row is looked up only for a task that has scalar arguments.
        if !spec.args.is_empty() {
            for (dst, &a) in t.args_of(g).iter().zip(spec.args) {
                dst.store(a, Ordering::Relaxed);
            }
        }
        // At `Tasks`, the task's record: claimed now, stamped in place while it runs.
        let cell = if level == ProfileLevel::Tasks {
            if !plain && spec.blocks > 1 {
                self.open_block_records(id, spec, now)
            } else {
                let cell = t.shared().prof().claim(t.records());
                if let Some(r) = t.records().get(cell as usize) {
                    r.open(id, spec.kernel, spec.class, now);
                }
                cell
            }
        } else {
            NO_CELL
        };
        slot.cell.store(cell, Ordering::Relaxed);
        slot.publish(seq);

        let (pinned, live) = self.wire_deps::<R>(g, deps);
        let meta = Meta::plain(
            (spec.kernel, spec.class),
            (spec.args.len(), ntensors),
            pinned,
        );
        slot.meta.store(meta.pack() | shape, Ordering::Relaxed);

        self.next[ring] = seq + 1;
        let t = &self.t;
        t.rings()[ring].next.0.store(seq + 1, Ordering::Release);
        self.submitted += 1;
        t.shared().publish_submitted(self.submitted);
        if wire::release_wiring_hold(slot) {
            #[cfg(feature = "fault-injection")]
            if self.fault == Some(fault::Fault::LoseReady) {
                self.fault = None;
                return live;
            }
            let ready = Ready {
                id,
                class: spec.class,
            };
            make_submitted_ready(t, g, slot, ready, now, level);
        }
        live
    }

    /// Begins the tenancy of slot `g` (`slot`) for a replayed task of `class` with
    /// `ntensors` tensor arguments (already in its kernel's row) and scalar `args`: its
    /// slot's words, the orchestrator's row for it (in an open scope if `scoped`, holding the
    /// heap from its instance's `heap_start`) and its scalar arguments. The replay's fast
    /// path uses it (and marks the instance's heap taken once); [`Orchestrator::file_task`]
    /// does the same steps inline.
    #[inline(always)]
    fn begin_tenant(
        &mut self,
        (g, slot): (SlotIndex, &TaskSlot),
        (class, ntensors): (WorkerClass, usize),
        (heap_start, scoped): (u64, bool),
        args: &[u64],
    ) {
        // A task in an open scope is also held by the scope, until the scope ends.
        slot.begin(1 + scoped as u32, class.lanes() as u32);
        let row = self.tenants.row_mut(g);
        row.scoped = scoped;
        row.heap_start = heap_start;
        // The map holds this many of its cells (read when the tenant leaves it).
        row.tensors = ntensors as u8;
        // The row is looked up only for a task that has scalar arguments.
        if !args.is_empty() {
            for (dst, &a) in self.t.args_of(g).iter().zip(args) {
                dst.store(a, Ordering::Relaxed);
            }
        }
    }

    /// Wires the task in slot `g` (begun and published) to each of `deps` (each once) that
    /// is still live: how many were (its edges `0..pinned`), and which (bit `i`: the
    /// `i`th), when `R` records (else 0).
    #[inline(always)]
    fn wire_deps<R: Recorder>(
        &mut self,
        g: SlotIndex,
        deps: impl Iterator<Item = TaskId>,
    ) -> (usize, u64) {
        let t = &self.t;
        let mut pinned = 0usize;
        let mut live = 0u64; // bit i: deps[i] was pinned (MAX_DEPS <= 64)
        // The consumer's side found once, unless it has no producer to wire (the lists
        // know their lengths).
        if deps.size_hint().1 != Some(0) {
            let consumer = wire::Consumer::of(t, g);
            for (i, dep) in deps.enumerate() {
                #[cfg(feature = "fault-injection")]
                if self.fault == Some(fault::Fault::LoseEdge) {
                    wire::wire_unlinked(t, dep, &consumer, pinned);
                    self.fault = None;
                    pinned += 1;
                    live |= u64::from(R::ON) << i;
                    continue;
                }
                if wire::wire_producer(t, dep, &consumer, pinned) {
                    pinned += 1;
                    if R::ON {
                        live |= 1 << i;
                    }
                }
            }
        }
        (pinned, live)
    }

    /// Drops the wiring hold of the task `ready` names, filed in slot `g` (`slot`): if no
    /// producer holds it either, it is ready and goes to its queue (stamped `now` at
    /// `level`). The replay's fast path uses it; [`Orchestrator::file_task`] does the same
    /// inline, as with [`Orchestrator::begin_tenant`].
    #[inline(always)]
    fn release_filed(
        &mut self,
        (g, slot): (SlotIndex, &TaskSlot),
        ready: Ready,
        (now, level): (u64, ProfileLevel),
    ) {
        if wire::release_wiring_hold(slot) {
            #[cfg(feature = "fault-injection")]
            if self.fault == Some(fault::Fault::LoseReady) {
                self.fault = None;
                return;
            }
            make_submitted_ready(&self.t, g, slot, ready, now, level);
        }
    }

    /// Claims and opens a record per block of task `id` (of `spec`, several blocks,
    /// submitted at `now`); the first one's cell.
    #[cold]
    fn open_block_records(&self, id: TaskId, spec: &TaskSpec<'_>, now: u64) -> u32 {
        let t = &self.t;
        let cell = t.shared().prof().claim_n(t.records(), spec.blocks);
        if cell != NO_CELL {
            for b in 0..spec.blocks {
                if let Some(r) = t.record_at(cell, b) {
                    r.open_block(id, spec.kernel, spec.class, now, b, spec.blocks);
                }
            }
        }
        cell
    }

    /// Fails the run with [`crate::FatalKind::Aborted`] and `code` (for an orchestration that
    /// cannot go on); every scheduler stops promptly. Returns whether this was the run's first
    /// error.
    pub fn abort(&self, code: u64) -> bool {
        self.t.shared().status().fail(crate::error::FatalError::new(
            crate::error::FatalCause::Aborted { code },
        ))
    }

    /// The run's first fatal error, if it has failed.
    pub fn error(&self) -> Option<crate::error::FatalError> {
        self.t.shared().status().get()
    }

    /// Says that nothing more will be submitted; schedulers stop once every task finished.
    pub fn finish(self) {}

    #[inline]
    fn check_running(&self) -> Result<(), SubmitError> {
        if self.t.shared().status().failed() {
            return Err(match self.t.shared().status().wait_published() {
                Some(e) => SubmitError::RunFailed(e),
                None => SubmitError::RunFailing,
            });
        }
        Ok(())
    }

    /// The dependencies of task `id`, the new tenant of slot `g`, given and found through
    /// its tensor arguments, each once; its arguments go into the tensor map, in place of the
    /// slot's previous tenant's, and into the slot's row for the kernel; a tile that is not
    /// valid or not inside its buffer is refused there. On an error the map is as if the
    /// task had not come.
    #[inline(always)]
    fn dependencies(
        &mut self,
        spec: &TaskSpec<'_>,
        tensors: &[TensorArg],
        (g, id): (SlotIndex, TaskId),
        deps: &mut DepList,
        rec: &mut impl Recorder,
    ) -> Result<(), SubmitError> {
        let max = self.t.cfg().max_deps;
        let too_many = || SubmitError::TooManyDeps {
            given: max as usize + 1,
            max,
        };
        for &d in spec.deps {
            if !deps.contains(&d) {
                deps.push(d).map_err(|_| too_many())?;
            }
        }
        self.drop_previous_tenant(g);
        if tensors.is_empty() {
            return Ok(());
        }
        // A task retiring after this only costs an edge that wiring then finds satisfied.
        self.forget_retired();
        // Each tile is checked as it goes in. The map's error is a unit (a bad tile or too
        // many): the typed error is made here, once, a bad tile's first (as the tiles are
        // checked before anything else).
        self.tensors
            .add_task((g, id), tensors, validate::footprint_inside, |task, k| {
                if deps.contains(&task) {
                    Ok(())
                } else if deps.len() < max as usize {
                    rec.found(k);
                    deps.push(task).map_err(|_| ())
                } else {
                    Err(())
                }
            })
            .map_err(|()| validate::tiles_first(tensors, too_many()))
    }

    /// Drops from the tensor map the entries of slot `g`'s previous tenant, if still there
    /// (it retired: the slot is free).
    #[inline(always)]
    fn drop_previous_tenant(&mut self, g: SlotIndex) {
        let old = self.tenants.row(g).tensors as usize;
        if old != 0 {
            self.tensors.drop_slot(g, old);
        }
    }

    /// Drops from the tensor map the entries of the tasks that retired since the last call:
    /// the map then holds only tasks that were live at this watermark read.
    #[inline(always)]
    fn forget_retired(&mut self) {
        for r in 0..self.t.rings().len() {
            let retired = self.t.rings()[r].retired();
            // Mostly none since the last submit: the watermark read and compared, no more.
            if retired != self.forgotten[r] {
                self.forget_ring(r, retired);
            }
        }
    }

    /// Drops from the tensor map the entries of the tasks of ring `r` below `retired` that
    /// it has not dropped yet.
    #[inline(never)]
    fn forget_ring(&mut self, r: usize, retired: u64) {
        let t = &self.t;
        // A slot a window back from the watermark has had a new tenant since, which
        // dropped its predecessor's entries.
        let from = self.forgotten[r].max(retired.saturating_sub(t.window() as u64));
        for seq in from..retired {
            let id = TaskId::new(t.cfg().epoch, r as u8, Seq(seq));
            let g = t.gslot(id);
            let count = self.tenants.row(g).tensors as usize;
            if count != 0 {
                self.tensors.forget(g, id, count);
            }
        }
        self.forgotten[r] = retired;
    }

    /// Waits until slot `seq` of `ring` is free: everything a window back is reclaimed. A
    /// task that must wait has its tiles (`tensors`) checked first: a bad one is refused
    /// without waiting.
    #[inline(always)]
    fn wait_for_slot(
        &self,
        ring: usize,
        seq: u64,
        tensors: &[TensorArg],
    ) -> Result<(), SubmitError> {
        if self.slot_free(ring, seq) {
            return Ok(());
        }
        self.wait_for_slot_slow(ring, seq, tensors)
    }

    /// Whether task `seq` of `ring` has its slot: the task a window back has retired.
    #[inline(always)]
    fn slot_free(&self, ring: usize, seq: u64) -> bool {
        seq - self.t.rings()[ring].retired() < self.t.window() as u64
    }

    /// [`Orchestrator::wait_for_slot`] once the window is full: out of line, so the common
    /// submit carries none of the wait's code or registers.
    #[cold]
    #[inline(never)]
    fn wait_for_slot_slow(
        &self,
        ring: usize,
        seq: u64,
        tensors: &[TensorArg],
    ) -> Result<(), SubmitError> {
        validate::check_tiles(tensors)?;
        self.wait_bounded(
            |o, slow| {
                if slow {
                    // The watermark may have moved up to a task an open scope holds.
                    o.check_scope_deadlock(ring, seq)?;
                }
                Ok(o.slot_free(ring, seq).then_some(()))
            },
            |waited_us| SubmitError::WindowFull {
                ring: ring as u8,
                window: self.t.window() as u32,
                waited_us,
            },
        )
    }
}

impl<P: Platform> Drop for Orchestrator<'_, '_, P> {
    fn drop(&mut self) {
        // Scopes left open end here, so their tasks can be reclaimed.
        while self.scope_end().is_ok() {}
        self.t.shared().close_submissions();
    }
}

/// Writes what a task that is not plain ([`TaskSpec::is_plain`]) keeps in its slot beyond
/// a plain one's (its blocks and lanes to finish, its lanes' kernels), and returns its
/// meta word's shape bits ([`Meta::shape_bits`]).
#[cold]
#[inline(never)]
fn shape_of(t: &Tables<'_>, g: SlotIndex, slot: &TaskSlot, spec: &TaskSpec<'_>) -> u64 {
    slot.shape(spec.class.lanes() as u32, spec.blocks);
    if let Some([k1, k2]) = spec.aiv_kernels {
        slot.aiv_kernels[0].store(k1.0, Ordering::Relaxed);
        slot.aiv_kernels[1].store(k2.0, Ordering::Relaxed);
    }
    if let Some(p) = &spec.predicate {
        t.predicate_of(g).store(p);
    }
    Meta::shape_bits(
        spec.blocks > 1,
        spec.sync_start,
        spec.aiv_kernels.is_some(),
        spec.predicate.is_some(),
    )
}
