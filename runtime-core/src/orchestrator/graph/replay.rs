//! Replaying a graph: the bindings checked once, the internal buffers allocated, and the tasks
//! submitted in order into one ring, each with its recorded edges named and only its boundary
//! arguments going through the tensor map.
#![forbid(unsafe_code)]

use super::{BufferRef, Graph, GraphRecordedArg, GraphRecordedTask, Instance};
use crate::error::{GraphError, SubmitError};
use crate::ids::{Seq, TaskId};
use crate::orchestrator::record::{NoRecord, Record, Recorder};
use crate::orchestrator::{DepList, Dependency, Orchestrator, TaskSpec};
use crate::platform::Platform;
use crate::region::config::MAX_TENSORS;
use crate::tensor::arg::{Buffer, TensorArg};
use crate::tensor::tile::Tile;

use super::MAX_GRAPH_BOUNDARIES;
use super::instance::{InstanceBuffers, Patched};
use crate::observe::profile::{NO_CELL, ProfileLevel};
use crate::orchestrator::wire;
use crate::sync::Ordering;
use crate::tables::SlotIndex;
use crate::tables::ready::Ready;

impl<P: Platform> Orchestrator<'_, '_, P> {
    /// Submits an instance of `graph` with `bind`'s buffers: its tasks, in the recording's
    /// order, into `bind.ring`, ordered among themselves as recorded and against every other
    /// task (fresh, or of other instances) by the boundary buffers they share, as if they had
    /// been submitted one by one. Each instance gets its own internal buffers, held until its
    /// last task is reclaimed. Bindings that do not fit the recording (count, length, buffers
    /// that share bytes) are refused before anything is submitted, unless they ask to fall
    /// back ([`super::Bindings::or_submit`]), and so is an instance past its ring's last
    /// sequence number; a task refused later (its ring's window stayed full, say) is
    /// [`GraphError::Submit`], the tasks before it submitted. A run that failed is noticed
    /// within 32 tasks.
    pub fn replay(
        &mut self,
        graph: &Graph<'_>,
        bind: &super::Bindings<'_>,
    ) -> Result<Instance, GraphError> {
        match self.replay_inner(graph, bind, &mut NoRecord) {
            Err(why) if bind.or_submit && why.fits_one_by_one() => {
                self.submit_one_by_one(graph, bind, why, &mut NoRecord)
            }
            done => done,
        }
    }

    /// [`Orchestrator::replay`], telling `record` each dependency of each task as it is
    /// wired (recorded edges as [`crate::DepReason::Explicit`]).
    pub fn replay_recorded(
        &mut self,
        graph: &Graph<'_>,
        bind: &super::Bindings<'_>,
        record: &mut dyn FnMut(Dependency),
    ) -> Result<Instance, GraphError> {
        let rec = &mut Record::new(record);
        match self.replay_inner(graph, bind, rec) {
            Err(why) if bind.or_submit && why.fits_one_by_one() => {
                self.submit_one_by_one(graph, bind, why, rec)
            }
            done => done,
        }
    }

    #[inline(never)]
    fn replay_inner<R: Recorder>(
        &mut self,
        graph: &Graph<'_>,
        bind: &super::Bindings<'_>,
        rec: &mut R,
    ) -> Result<Instance, GraphError> {
        let before = |error| GraphError::Submit { task: 0, error };
        self.check_running().map_err(before)?;
        if graph.stamp != self.stamp() {
            return Err(GraphError::OtherRun);
        }
        let cfg = *self.t.cfg();
        let ring = bind.ring;
        if ring >= cfg.rings {
            return Err(before(SubmitError::BadRing {
                ring,
                rings: cfg.rings,
            }));
        }
        check_bindings(graph, bind.buffers)?;
        check_shifts(graph, bind)?;
        if bind.scalars.len() != graph.scalars {
            return Err(GraphError::WrongScalars {
                given: bind.scalars.len(),
                recorded: graph.scalars,
            });
        }
        self.check_deps(bind.after).map_err(before)?;
        if bind.after.len() > cfg.max_deps as usize {
            return Err(before(SubmitError::TooManyDeps {
                given: bind.after.len(),
                max: cfg.max_deps,
            }));
        }
        let r = ring as usize;
        let bound = |b: u8| bind.buffers[b as usize];
        // What came before the instance, each boundary looked up once, before any of its
        // tasks is filed.
        self.forget_retired();
        let mut found = Found::new();
        let (touched, written) = graph.tasks.iter().fold((0u32, 0u32), |(t, w), task| {
            (t | task.touches, w | task.writes)
        });
        for b in bits(touched) {
            // What wrote it (for the tasks that only read it first); and, if the instance
            // writes it, everything that touched it (for the first to write it).
            for writes in [false, true] {
                if writes && written & 1 << b == 0 {
                    continue;
                }
                let (start, mut full) = (found.ids.len(), false);
                let _ = self.tensors.whole_conflicts(bound(b), writes, |t| {
                    if found.ids[start..].contains(&t) {
                        return Ok(());
                    }
                    found.ids.push(t).map_err(|_| full = true)
                });
                if full {
                    return Err(GraphError::TooManyFound { max: FOUND });
                }
                found.spans[writes as usize][b as usize] = (start as u16, found.ids.len() as u16);
                if found.ids.len() > start {
                    found.any[writes as usize] |= 1 << b;
                }
            }
        }
        // The instance's sequence numbers, all checked at once, before anything is filed.
        let first = self.next[r];
        let last = first.saturating_add((graph.tasks.len() as u64).saturating_sub(1));
        if last > Seq::MAX.0 {
            let n = Seq::MAX.0.saturating_add(1).saturating_sub(first);
            return Err(GraphError::Submit {
                task: n as u32,
                error: SubmitError::SequenceExhausted { ring },
            });
        }
        // The buffers allocated from here on are the instance's: every task of it holds
        // them. Its internal buffers are one block, each at its recorded offset.
        let buffers = self.instance_buffers(graph, bind).map_err(before)?;
        let submitted = self.submitted;
        let mut seq = first;
        let filed = self.file_instance(graph, bind, (&buffers, &found), (&mut seq, rec));
        // The ring's count of filed tasks and the run's of submitted ones, which the fast
        // path leaves to here: only reports, the end of the run (once submissions closed)
        // and the watchdog (which then counts fewer tasks live) read them.
        self.next[r] = seq;
        self.submitted = submitted + (seq - first);
        if seq > first {
            // The instance's buffers are held by its tasks: the ring's next task holds only
            // what is allocated after them (as a submit marks it, which the fast path left).
            let heap = &mut self.heaps[r];
            heap.pending = heap.head;
        }
        let t = &self.t;
        t.rings()[r].next.0.store(seq, Ordering::Release);
        t.shared().publish_submitted(self.submitted);
        filed?;
        Ok(Instance {
            first: TaskId::new(cfg.epoch, ring, Seq(first)),
            tasks: graph.tasks.len() as u32,
            fell_back: None,
        })
    }

    /// Files the tasks of an instance of `graph` (bound by `bind`, its buffers `buffers`,
    /// what came before it `found`) in order, from sequence number `seq` of its ring on,
    /// leaving `seq` past the last filed. Each is refused as a submit would be (the run
    /// failed, the ring's window stayed full); those before it stay filed. The ring's next
    /// number and the run's count of submitted tasks are the caller's to set.
    ///
    /// A plain task, unrecorded and unobserved, below the `Tasks` level and without latency
    /// stamps, takes the fast path: its slot begun, its row and arguments written and its
    /// edges wired as [`Orchestrator::file_task`] does, without a spec, a record or a clock,
    /// and the ring's and run's counts left to the caller.
    #[inline(always)]
    fn file_instance<R: Recorder>(
        &mut self,
        graph: &Graph<'_>,
        bind: &super::Bindings<'_>,
        (buffers, found): (&InstanceBuffers<'_>, &Found),
        (next, rec): (&mut u64, &mut R),
    ) -> Result<(), GraphError> {
        let cfg = *self.t.cfg();
        let (ring, r) = (bind.ring, bind.ring as usize);
        let bound = |b: u8| bind.buffers[b as usize];
        let heap_start = buffers.heap_start;
        let (epoch, first, submitted) = (cfg.epoch, *next, self.submitted);
        let first_id = TaskId::new(epoch, ring, Seq(first)).raw();
        let level = self.t.shared().prof().level();
        let observed = P::OBSERVES_SUBMITS && self.p.observing();
        let fast = !R::ON && !observed && level != ProfileLevel::Tasks && !cfg.record_latency;
        // An armed fault is injected by the general path's wiring.
        #[cfg(feature = "fault-injection")]
        let fast = fast && self.fault.is_none();
        // Past `check_at`, the run's state and the ring's watermark are read again: every
        // CHECK_EVERY tasks, and where the slots known free end.
        let mut check_at = first;
        // Each task's dependencies from outside the instance (most have none).
        let mut outside = DepList::new();
        let mut patched = Patched::new(graph, bind.scalars);
        // Where each boundary's entries went last: the next goes there while it holds.
        let mut sites = [None; MAX_GRAPH_BOUNDARIES];
        // Scopes neither open nor end during a replay.
        let scoped = !self.scopes.is_empty();
        // What the tasks after this one have of the tensor arguments and the words.
        let (mut args_left, mut words_left) = (graph.args, graph.words);
        for (n, task) in graph.tasks.iter().enumerate() {
            let refused = |error| GraphError::Submit {
                task: n as u32,
                error,
            };
            // This task's number, `next` moving past it once it is filed.
            let seq = *next;
            if seq >= check_at {
                self.check_running().map_err(refused)?;
                // Recorded tiles are valid: nothing to check before a wait.
                self.wait_for_slot(r, seq, &[]).map_err(refused)?;
                let room = self.t.rings()[r].retired() + self.t.window() as u64;
                check_at = room.min(seq + CHECK_EVERY as u64);
            }
            let id = TaskId::new(epoch, ring, Seq(seq));
            let g = self.t.gslot(id);
            self.drop_previous_tenant(g);
            // A recording lays each task's arguments and words out after the last one's.
            debug_assert_eq!(
                task.tensors.start as usize,
                graph.args.len() - args_left.len()
            );
            let args;
            (args, args_left) = args_left.split_at(task.tensors.len as usize);
            let (recorded, preds);
            (recorded, words_left) = words_left.split_at(task.args.len as usize);
            debug_assert_eq!(task.preds.start, task.args.start + task.args.len);
            (preds, words_left) = words_left.split_at(task.preds.len as usize);
            for (cell, a) in self.tensors.kernel_row(g).iter().zip(args) {
                cell.store_moved(&a.arg, &a.packed, buffers.bases_of(a));
            }
            // Earlier tasks of the instance (distinct, at most max_deps: checked at record),
            // then those before it that its boundaries found, or that the bindings name.
            // The instance's tasks are consecutive, none past `Seq::MAX` (checked above):
            // an earlier one's id is the first's plus its position.
            let inside = preds.iter().map(|&p| TaskId::from_raw(first_id + p));
            outside.clear();
            if found.entered_by(task) || preds.is_empty() && !bind.after.is_empty() {
                outside_deps(
                    task,
                    preds.len(),
                    bind.after,
                    found,
                    (cfg.max_deps, &mut outside),
                )
                .map_err(refused)?;
            }
            let scalars = patched.args_of(n, task, recorded);
            if fast && task.plain {
                let deps = (preds, first_id, &outside[..]);
                let held = (args.len(), heap_start, scoped);
                self.file_plain(task, (g, id, seq), held, scalars, deps);
            } else {
                // The general path counts the task itself, from the counts so far.
                self.next[r] = seq;
                self.submitted = submitted + (seq - first);
                let deps = inside.chain(outside.iter().copied());
                let spec = buffers.spec(task, scalars);
                let live = self.file_task::<R>(
                    &spec,
                    (g, id),
                    (args.len(), Some(heap_start)),
                    deps.clone(),
                );
                // Constants: no code at all unless asked.
                if R::ON || observed {
                    self.tell_replayed(
                        rec,
                        (id, live),
                        &spec,
                        args.iter().map(|a| rebase(a, buffers.bases_of(a))),
                        deps,
                    );
                }
            }
            // Where the tensor map looks for the instance from now on.
            for k in bits(task.exit_args) {
                let BufferRef::Boundary(b) = args[k as usize].buffer else {
                    continue;
                };
                let writes = task.writes & 1 << b != 0;
                let site = &mut sites[b as usize];
                self.tensors
                    .add_whole((g, id), k as usize, (bound(b), writes), site);
            }
            *next = seq + 1;
        }
        Ok(())
    }

    /// Files plain replayed `task` (id `id`, number `seq` of its ring) in slot `g`, its
    /// `ntensors` tensor arguments in its kernel's row, holding the instance's heap from
    /// `heap_start` (and held by the open scope, if `scoped`), with scalar arguments
    /// `scalars` and producers `deps`: the instance's tasks at the positions `inside` (the
    /// first being `first`), then the tasks `outside`. What [`Orchestrator::file_task`] does
    /// for it below the `Tasks` level, but the ring's and the run's counts and the heap's
    /// mark, which the replay sets once.
    #[inline(always)]
    fn file_plain(
        &mut self,
        task: &GraphRecordedTask,
        (g, id, seq): (SlotIndex, TaskId, u64),
        (ntensors, heap_start, scoped): (usize, u64, bool),
        scalars: &[u64],
        (inside, first, outside): (&[u64], u64, &[TaskId]),
    ) {
        let slot = self.t.slot(g);
        let ring = id.ring();
        self.begin_tenant(
            (g, slot),
            (task.class, ntensors),
            (heap_start, scoped),
            scalars,
        );
        slot.cell.store(NO_CELL, Ordering::Relaxed);
        slot.publish(seq);
        // Two loops, not a chained iterator: most tasks have only inside producers.
        let mut pinned = 0usize;
        if !inside.is_empty() || !outside.is_empty() {
            let t = &self.t;
            let consumer = wire::Consumer::in_slot(t, g, slot);
            // The instance's tasks are in its ring: only their sequence numbers' slots vary.
            let ring_first = t.slot_of(ring as usize, Seq(0));
            for &p in inside {
                let dep = first + p;
                let at = (TaskId::from_raw(dep), t.slot_in(ring_first, dep));
                pinned += wire::wire_producer_at(t, at, &consumer, pinned) as usize;
            }
            for &d in outside {
                pinned += wire::wire_producer(t, d, &consumer, pinned) as usize;
            }
        }
        slot.meta
            .store(task.meta | pinned as u64, Ordering::Relaxed);
        let ready = Ready {
            id,
            class: task.class,
        };
        // No stamp: latency and task records are off (the fast path's condition).
        self.release_filed((g, slot), ready, (0, ProfileLevel::Off));
    }

    /// Tells `rec` (recording) how replayed task `id` was wired (`live`: which of `deps`
    /// were pinned), and the platform (if it observes submits) the task as a submit would
    /// have: `spec` with its `tensors` and `deps`.
    #[cold]
    fn tell_replayed<R: Recorder>(
        &self,
        rec: &mut R,
        (id, live): (TaskId, u64),
        spec: &TaskSpec<'_>,
        tensors: impl Iterator<Item = TensorArg>,
        deps: impl Iterator<Item = TaskId>,
    ) {
        // As many as the task has: fit (checked at record, and by `outside_deps`).
        let deps: DepList = deps.collect();
        if R::ON {
            rec.report(id, &deps, live);
        }
        if P::OBSERVES_SUBMITS && self.p.observing() {
            let tensors: heapless::Vec<TensorArg, { MAX_TENSORS as usize }> = tensors.collect();
            let spec = TaskSpec {
                deps: &deps,
                tensors: &tensors,
                ..*spec
            };
            self.p.submitted(id, &spec, &deps);
        }
    }
}

/// Puts into `deps` (empty) a task's dependencies outside its instance, each once: what its
/// boundaries' lookups found (`found`) as it enters them, and, for a task no earlier task of
/// the instance comes before, the bindings' `after`. With the `inside` ones it has, at most
/// `max`.
#[inline(never)]
fn outside_deps(
    task: &GraphRecordedTask,
    inside: usize,
    after: &[TaskId],
    found: &Found,
    (max, deps): (u16, &mut DepList),
) -> Result<(), SubmitError> {
    let named = if inside == 0 { after } else { &[] };
    let reading = task.enters & !task.enters_writing;
    let entered = (bits(reading).flat_map(|b| found.of(b, false)))
        .chain(bits(task.enters_writing).flat_map(|b| found.of(b, true)));
    for &d in named.iter().chain(entered) {
        if deps.contains(&d) {
            continue;
        }
        if inside + deps.len() == max as usize || deps.push(d).is_err() {
            return Err(SubmitError::TooManyDeps {
                given: inside + deps.len() + 1,
                max,
            });
        }
    }
    Ok(())
}

/// What the tensor map found for the instance's access to each boundary, before it.
struct Found {
    /// The tasks, each boundary's in a run of its own.
    ids: heapless::Vec<TaskId, FOUND>,
    /// Each boundary's runs, start and end in `ids`: what its read found, and its write.
    spans: [[(u16, u16); MAX_GRAPH_BOUNDARIES]; 2],
    /// The boundaries whose read (write) lookup found anything.
    any: [u32; 2],
}

/// Most tasks an instance's lookups find, all boundaries together.
const FOUND: usize = 256;

/// A replay asks whether the run failed every this many tasks (and before any wait).
const CHECK_EVERY: usize = 32;

impl Found {
    fn new() -> Self {
        Found {
            ids: heapless::Vec::new(),
            spans: [[(0, 0); MAX_GRAPH_BOUNDARIES]; 2],
            any: [0; 2],
        }
    }
    /// Whether `task` enters a boundary whose lookup found a task it must wait for.
    #[inline(always)]
    fn entered_by(&self, task: &GraphRecordedTask) -> bool {
        let reading = task.enters & !task.enters_writing;
        (reading & self.any[0]) | (task.enters_writing & self.any[1]) != 0
    }

    /// What boundary `b`'s lookup found, as a read or a write.
    fn of(&self, b: u8, writes: bool) -> &[TaskId] {
        let (start, end) = self.spans[writes as usize][b as usize];
        &self.ids[start as usize..end as usize]
    }
}

/// The set bits of `mask`, lowest first.
fn bits(mut mask: u32) -> impl Iterator<Item = u8> {
    core::iter::from_fn(move || {
        (mask != 0).then(|| {
            let b = mask.trailing_zeros() as u8;
            mask &= mask - 1;
            b
        })
    })
}

/// Checks `buffers` against `graph`'s boundaries: one each, each as long, none sharing a
/// byte with another.
fn check_bindings(graph: &Graph<'_>, buffers: &[Buffer]) -> Result<(), GraphError> {
    if buffers.len() != graph.boundaries.len() {
        return Err(GraphError::WrongCount {
            given: buffers.len(),
            recorded: graph.boundaries.len(),
        });
    }
    for (i, (b, r)) in buffers.iter().zip(&graph.boundaries).enumerate() {
        if b.len != r.len {
            return Err(GraphError::WrongSize {
                index: i as u32,
                given: b.len,
                recorded: r.len,
            });
        }
        if let Some(j) = buffers[..i]
            .iter()
            .position(|a| a.base < b.end() && b.base < a.end())
        {
            return Err(GraphError::Aliased {
                a: j as u32,
                b: i as u32,
            });
        }
    }
    Ok(())
}

/// Checks `bind`'s shifts against `graph`: none, or one per boundary, each keeping the
/// bytes the graph's tasks touch in its boundary inside the binding.
pub(super) fn check_shifts(
    graph: &Graph<'_>,
    bind: &super::Bindings<'_>,
) -> Result<(), GraphError> {
    if bind.shifts.is_empty() {
        return Ok(());
    }
    if bind.shifts.len() != graph.boundaries.len() {
        return Err(GraphError::WrongShifts {
            given: bind.shifts.len(),
            recorded: graph.boundaries.len(),
        });
    }
    for (i, ((&shift, &(lo, hi)), b)) in bind
        .shifts
        .iter()
        .zip(&graph.spans)
        .zip(bind.buffers)
        .enumerate()
    {
        let moved = |x: u64| x as i128 + shift as i128;
        if lo < hi && (moved(lo) < 0 || moved(hi) > b.len as i128) {
            return Err(GraphError::ShiftedOutside {
                index: i as u32,
                shift,
                span: (lo, hi),
                len: b.len,
            });
        }
    }
    Ok(())
}

/// Recorded argument `a` (relative to its graph buffer) placed in that buffer's instance:
/// the same view and tile at the same offsets from `tile_to` and `buffer_to`
/// ([`super::instance::InstanceBuffers::bases_of`]).
pub(super) fn rebase(a: &GraphRecordedArg, (tile_to, buffer_to): (u64, u64)) -> TensorArg {
    TensorArg {
        buffer: Buffer::new(buffer_to + a.arg.buffer.base, a.arg.buffer.len),
        tile: Tile {
            base: tile_to + a.arg.tile.base,
            ..a.arg.tile
        },
        ..a.arg
    }
}
