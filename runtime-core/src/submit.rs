//! The orchestrator: submits tasks, one thread, with back-pressure when a window is full.
#![forbid(unsafe_code)]

use crate::completion::make_ready;
use crate::config::MAX_TENSORS;
use crate::config::{MAX_DEPS, MAX_RINGS};
use crate::error::SubmitError;
use crate::heap::RingHeap;
use crate::ids::{KernelId, Seq, TaskId, WorkerClass};
use crate::platform::Platform;
use crate::profile::ProfileLevel;
use crate::reclaim::release_hold;
use crate::slot::{Meta, state};
use crate::sync::Ordering;
use crate::tables::{EDGE_EMPTY, Tables};
use crate::tensor::Footprint;
use crate::tensor_map::{TensorArg, TensorMap, TensorStore};
use crate::wire;

/// The footprint of each tensor argument of a task.
type Footprints = heapless::Vec<Footprint, { MAX_TENSORS as usize }>;
/// A task's dependencies, explicit and found, each once.
type DepList = heapless::Vec<TaskId, { MAX_DEPS as usize }>;

/// What to run: a kernel on a class of core, its scalar arguments and the tasks it waits for.
#[derive(Clone, Copy, Debug)]
pub struct TaskSpec<'a> {
    /// The kernel (ignored for [`WorkerClass::Dummy`]).
    pub kernel: KernelId,
    /// Where it runs.
    pub class: WorkerClass,
    /// Scalar arguments, at most `max_args`.
    pub args: &'a [u64],
    /// Tasks that must finish first; duplicates count once. With the tasks found through
    /// `tensors`, at most `max_deps`.
    pub deps: &'a [TaskId],
    /// Tiles the task reads and writes, at most `max_tensors`: the task waits for every
    /// earlier live task whose tile conflicts (read after write, write after write, write
    /// after read).
    pub tensors: &'a [TensorArg],
    /// The ring the task lives in.
    pub ring: u8,
}

impl<'a> TaskSpec<'a> {
    /// A task of `class` running `kernel`, with no arguments or dependencies, in ring 0.
    pub const fn new(kernel: KernelId, class: WorkerClass) -> Self {
        TaskSpec {
            kernel,
            class,
            args: &[],
            deps: &[],
            tensors: &[],
            ring: 0,
        }
    }
    /// A task that runs on no core: it completes as soon as its dependencies have.
    pub const fn dummy() -> Self {
        Self::new(KernelId(0), WorkerClass::Dummy)
    }
    /// The same task with these arguments.
    pub const fn args(mut self, args: &'a [u64]) -> Self {
        self.args = args;
        self
    }
    /// The same task with these dependencies.
    pub const fn deps(mut self, deps: &'a [TaskId]) -> Self {
        self.deps = deps;
        self
    }
    /// The same task with these tensor arguments.
    pub const fn tensors(mut self, tensors: &'a [TensorArg]) -> Self {
        self.tensors = tensors;
        self
    }
    /// The same task in `ring`.
    pub const fn ring(mut self, ring: u8) -> Self {
        self.ring = ring;
        self
    }
}

/// The submitting side of a run. One per runtime; dropping it (or [`Orchestrator::finish`])
/// tells the schedulers that the task list is complete.
pub struct Orchestrator<'r, 'p, P: Platform> {
    t: Tables<'r>,
    p: &'p P,
    next: [u64; MAX_RINGS as usize],
    submitted: u64,
    timeout_ticks: u64,
    /// Live tasks' tensor arguments.
    tensors: TensorMap<'r>,
    /// Each ring's watermark when the map last dropped retired tasks.
    forgotten: [u64; MAX_RINGS as usize],
    /// Open scopes, outermost first: the next sequence number of each ring when each began.
    scopes: heapless::Vec<[u64; MAX_RINGS as usize], MAX_SCOPE_DEPTH>,
    /// Each ring's share of the platform's output heap.
    heaps: [RingHeap; MAX_RINGS as usize],
}

/// Deepest nesting of scopes.
pub const MAX_SCOPE_DEPTH: usize = 16;

impl<'r, 'p, P: Platform> Orchestrator<'r, 'p, P> {
    pub(crate) fn new(t: Tables<'r>, p: &'p P, tensors: TensorStore<'r>) -> Self {
        let timeout_ticks = t
            .cfg
            .submit_timeout_us
            .saturating_mul(p.ticks_per_us().max(1));
        Orchestrator {
            t,
            p,
            next: [0; MAX_RINGS as usize],
            submitted: 0,
            timeout_ticks,
            tensors: TensorMap::new(tensors, t.cfg.max_tensors as usize),
            forgotten: [0; MAX_RINGS as usize],
            scopes: heapless::Vec::new(),
            heaps: {
                let (base, len) = p.heap();
                let share = len / t.cfg.rings.max(1) as u64;
                core::array::from_fn(|r| RingHeap {
                    base: base + r as u64 * share,
                    len: share,
                    ..RingHeap::default()
                })
            },
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
        self.check_running()?;
        // Filled in place: returning these arrays by value would copy them on every submit.
        let mut footprints = Footprints::new();
        self.validate(spec, &mut footprints)?;
        let ring = spec.ring as usize;
        let seq = self.next[ring];
        if seq > Seq::MAX.0 {
            return Err(SubmitError::SequenceExhausted { ring: spec.ring });
        }
        self.wait_for_slot(ring, seq)?;
        let id = TaskId::new(self.t.cfg.epoch, spec.ring, Seq(seq));
        let g = self.t.gslot(id);
        let mut deps = DepList::new();
        self.dependencies(spec, g, id, &footprints, &mut deps)?;
        let t = &self.t;
        let level = t.shared.prof.level();
        let now = if t.cfg.record_latency || level != ProfileLevel::Off {
            self.p.now()
        } else {
            0
        };

        let slot = t.slot(g);
        // A task in an open scope is also held by the scope, until the scope ends.
        let scoped = !self.scopes.is_empty() as u32;
        slot.holds.store(1 + scoped, Ordering::Relaxed);
        slot.scoped.store(scoped, Ordering::Relaxed);
        // The buffers allocated since the last submit to this ring are this task's.
        let heap = &mut self.heaps[ring];
        slot.heap_start.store(heap.pending, Ordering::Relaxed);
        heap.pending = heap.head;
        slot.pending.store(1, Ordering::Relaxed);
        slot.fanout.store(EDGE_EMPTY, Ordering::Relaxed);
        slot.lanes_left
            .store(spec.class.lanes() as u32, Ordering::Relaxed);
        slot.state.store(state::PENDING, Ordering::Relaxed);
        for (dst, &a) in t.args_of(g).iter().zip(spec.args) {
            dst.store(a, Ordering::Relaxed);
        }
        if level == ProfileLevel::Tasks {
            t.prof_rows[g].reset(now);
        }
        // Published last: an advancing scheduler that reads this sequence number sees the
        // state above, never the previous tenant's CONSUMED.
        slot.seq.store(seq, Ordering::Release);

        let mut pinned = 0usize;
        for &dep in &deps {
            if wire::pin_producer(t, dep) {
                wire::add_edge(t, dep, g, pinned);
                pinned += 1;
            }
        }
        let meta = Meta {
            kernel: spec.kernel,
            class: spec.class,
            nargs: spec.args.len() as u8,
            pinned: pinned as u8,
        };
        slot.meta.store(meta.pack(), Ordering::Relaxed);
        // Only the orchestrator touches this word.
        slot.tensors
            .store(spec.tensors.len() as u32, Ordering::Relaxed);

        self.next[ring] = seq + 1;
        t.rings[ring].next.0.store(seq + 1, Ordering::Release);
        self.submitted += 1;
        t.shared
            .submitted
            .0
            .store(self.submitted, Ordering::Release);
        if wire::release_wiring_hold(t, g) {
            make_ready(t, g, now, level);
        }
        Ok(id)
    }

    /// Allocates an output buffer of `bytes` bytes aligned to `align` (a power of two) from
    /// `ring`'s heap and returns its device address. The buffer belongs to the next task
    /// submitted to `ring` and is reclaimed when that task is, that is once it finished, its
    /// consumers finished, and its scope ended: submit the producer and its consumers in one
    /// scope, so a consumer submitted after the producer finished still finds the buffer.
    /// Waits (bounded by `submit_timeout_us`) while the heap is full; fails at once when only
    /// the end of an open scope could make room.
    pub fn alloc(&mut self, ring: u8, bytes: u64, align: u64) -> Result<u64, SubmitError> {
        self.check_running()?;
        let rings = self.t.cfg.rings;
        if ring >= rings {
            return Err(SubmitError::BadRing { ring, rings });
        }
        if !align.is_power_of_two() {
            return Err(SubmitError::BadAlignment { align });
        }
        let r = ring as usize;
        let heap = self.heaps[r];
        let worst = bytes.saturating_add(align - 1);
        if heap.len == 0 || worst > heap.len {
            return Err(SubmitError::HeapTooSmall {
                bytes: worst,
                heap: heap.len,
            });
        }
        let start = self.p.now();
        let mut spins = 0u32;
        loop {
            let (tail, oldest) = self.heap_tail(r);
            if let Some(p) = self.heaps[r].place(bytes, align, tail) {
                self.heaps[r].head = p.head;
                return Ok(self.heaps[r].address(p.offset));
            }
            // Room only comes from retiring the oldest live task: if a scope holds it,
            // waiting cannot succeed.
            if let Some(g) = oldest
                && self.t.slot(g).scoped.load(Ordering::Relaxed) == 1
            {
                return Err(SubmitError::ScopeDeadlock {
                    ring,
                    window: self.t.window as u32,
                    open: self.scopes.len(),
                });
            }
            self.check_running()?;
            spins = spins.wrapping_add(1);
            if spins.is_multiple_of(64) {
                let waited = self.p.now().saturating_sub(start);
                if waited > self.timeout_ticks {
                    return Err(SubmitError::HeapFull {
                        ring,
                        bytes,
                        waited_us: waited / self.p.ticks_per_us().max(1),
                    });
                }
            }
            self.p.spin_hint();
        }
    }

    /// The heap offset before which every buffer of `r` is free again (the oldest live
    /// task's start, or the pending task's if every task retired), and that task's slot.
    fn heap_tail(&self, r: usize) -> (u64, Option<usize>) {
        let t = self.t;
        let retired = t.rings[r].retired.0.load(Ordering::Acquire);
        if retired >= self.next[r] {
            return (self.heaps[r].pending, None);
        }
        let g = t.gslot(TaskId::new(t.cfg.epoch, r as u8, Seq(retired)));
        (t.slot(g).heap_start.load(Ordering::Relaxed), Some(g))
    }

    /// Opens a scope: every task submitted until the matching [`Orchestrator::scope_end`]
    /// keeps its slot (and the outputs in it) at least until then, even once it and its
    /// consumers are done. Scopes nest up to [`MAX_SCOPE_DEPTH`] deep.
    pub fn scope_begin(&mut self) -> Result<(), SubmitError> {
        self.scopes
            .push(self.next)
            .map_err(|_| SubmitError::ScopeTooDeep {
                max: MAX_SCOPE_DEPTH,
            })
    }

    /// Ends the innermost open scope: its tasks may now be reclaimed once they and their
    /// consumers are done.
    pub fn scope_end(&mut self) -> Result<(), SubmitError> {
        let start = self.scopes.pop().ok_or(SubmitError::NoOpenScope)?;
        let t = self.t;
        for (ring, (&from, &to)) in start.iter().zip(&self.next).enumerate() {
            for seq in from..to {
                let g = t.gslot(TaskId::new(t.cfg.epoch, ring as u8, Seq(seq)));
                let slot = t.slot(g);
                // Tasks of inner scopes ended already; theirs slots may have new tenants.
                if slot.seq.load(Ordering::Relaxed) == seq
                    && slot.scoped.swap(0, Ordering::Relaxed) == 1
                {
                    release_hold(&t, g);
                }
            }
        }
        Ok(())
    }

    /// Runs `body` inside a scope.
    pub fn scope<R>(&mut self, body: impl FnOnce(&mut Self) -> R) -> Result<R, SubmitError> {
        self.scope_begin()?;
        let r = body(self);
        self.scope_end()?;
        Ok(r)
    }

    /// Fails the run with [`crate::FatalKind::Aborted`] and `code` (for an orchestration that
    /// cannot go on); every scheduler stops promptly. Returns whether this was the run's first
    /// error.
    pub fn abort(&self, code: u64) -> bool {
        self.t.shared.status.fail(
            crate::error::FatalError::new(crate::error::FatalKind::Aborted).with_detail(code, 0),
        )
    }

    /// The run's first fatal error, if it has failed.
    pub fn error(&self) -> Option<crate::error::FatalError> {
        self.t.shared.status.get()
    }

    /// Says that nothing more will be submitted; schedulers stop once every task finished.
    pub fn finish(self) {}

    fn check_running(&self) -> Result<(), SubmitError> {
        if self.t.shared.status.failed() {
            return Err(match self.t.shared.status.wait_published() {
                Some(e) => SubmitError::RunFailed(e),
                None => SubmitError::RunFailing,
            });
        }
        Ok(())
    }

    /// Checks `spec` against the configuration and the run, and puts each tensor argument's
    /// footprint (computed once here) in `footprints`.
    fn validate(
        &self,
        spec: &TaskSpec<'_>,
        footprints: &mut Footprints,
    ) -> Result<(), SubmitError> {
        let cfg = &self.t.cfg;
        if spec.ring >= cfg.rings {
            return Err(SubmitError::BadRing {
                ring: spec.ring,
                rings: cfg.rings,
            });
        }
        if spec.args.len() > cfg.max_args as usize {
            return Err(SubmitError::TooManyArgs {
                given: spec.args.len(),
                max: cfg.max_args,
            });
        }
        if spec.tensors.len() > cfg.max_tensors as usize {
            return Err(SubmitError::TooManyTensors {
                given: spec.tensors.len(),
                max: cfg.max_tensors,
            });
        }
        for (index, arg) in spec.tensors.iter().enumerate() {
            let f = arg
                .tile
                .footprint()
                .map_err(|error| SubmitError::BadTensor { index, error })?;
            // At most max_tensors <= MAX_TENSORS (checked above): the push cannot fail.
            let _ = footprints.push(f);
        }
        if spec.deps.len() > cfg.max_deps as usize {
            // Duplicates count once: only distinct dependencies can be too many.
            let distinct = distinct_deps(spec.deps, cfg.max_deps as usize + 1);
            if distinct > cfg.max_deps as usize {
                return Err(SubmitError::TooManyDeps {
                    given: distinct,
                    max: cfg.max_deps,
                });
            }
        }
        let cores = match spec.class {
            WorkerClass::Aic => cfg.aic_cores,
            WorkerClass::Aiv => cfg.aiv_cores,
            WorkerClass::Mix => cfg.mix_clusters(),
            WorkerClass::Dummy => 1,
        };
        if cores == 0 {
            return Err(SubmitError::NoCoreForClass { class: spec.class });
        }
        if spec.class != WorkerClass::Dummy && !self.p.has_kernel(spec.kernel) {
            return Err(SubmitError::UnknownKernel {
                kernel: spec.kernel,
            });
        }
        for &dep in spec.deps {
            if dep.epoch() != cfg.epoch {
                return Err(SubmitError::StaleDependency {
                    dep,
                    epoch: cfg.epoch,
                });
            }
            if dep.ring() >= cfg.rings {
                return Err(SubmitError::ForeignDependency {
                    dep,
                    rings: cfg.rings,
                });
            }
            let next = self.next[dep.ring() as usize];
            if dep.seq().0 >= next {
                return Err(SubmitError::NotYetSubmitted { dep, next });
            }
        }
        Ok(())
    }

    /// The dependencies of task `id`, the new tenant of slot `g`, given and found through
    /// its tensor arguments, each once; its arguments go into the tensor map, in place of the
    /// slot's previous tenant's. On an error the map is as if the task had not come.
    fn dependencies(
        &mut self,
        spec: &TaskSpec<'_>,
        g: usize,
        id: TaskId,
        footprints: &[Footprint],
        deps: &mut DepList,
    ) -> Result<(), SubmitError> {
        let max = self.t.cfg.max_deps;
        let too_many = SubmitError::TooManyDeps {
            given: max as usize + 1,
            max,
        };
        for &d in spec.deps {
            if !deps.contains(&d) {
                deps.push(d).map_err(|_| too_many)?;
            }
        }
        // The previous tenant retired (the slot is free): its entries go, if still there.
        let old = self.t.slot(g).tensors.load(Ordering::Relaxed) as usize;
        self.tensors.drop_slot(g, old);
        if spec.tensors.is_empty() {
            return Ok(());
        }
        // A task retiring after this only costs an edge that wiring then finds satisfied.
        self.forget_retired();
        self.tensors
            .add_task((g, id), spec.tensors, footprints, |task| {
                if deps.contains(&task) {
                    Ok(())
                } else if deps.len() < max as usize {
                    deps.push(task).map_err(|_| too_many)
                } else {
                    Err(too_many)
                }
            })
    }

    /// Drops from the tensor map the entries of the tasks that retired since the last call:
    /// the map then holds only tasks that were live at this watermark read.
    fn forget_retired(&mut self) {
        let t = &self.t;
        for (r, ring) in t.rings.iter().enumerate() {
            let retired = ring.retired.0.load(Ordering::Acquire);
            // A slot a window back from the watermark has had a new tenant since, which
            // dropped its predecessor's entries.
            let from = self.forgotten[r].max(retired.saturating_sub(t.window as u64));
            if !self.tensors.is_empty() {
                for seq in from..retired {
                    let id = TaskId::new(t.cfg.epoch, r as u8, Seq(seq));
                    let g = t.gslot(id);
                    let count = t.slot(g).tensors.load(Ordering::Relaxed) as usize;
                    self.tensors.forget(g, id, count);
                }
            }
            self.forgotten[r] = retired;
        }
    }

    /// Waits until slot `seq` of `ring` is free: everything a window back is reclaimed.
    fn wait_for_slot(&self, ring: usize, seq: u64) -> Result<(), SubmitError> {
        let retired = &self.t.rings[ring].retired.0;
        let window = self.t.window as u64;
        if seq - retired.load(Ordering::Acquire) < window {
            return Ok(());
        }
        self.check_scope_deadlock(ring, seq)?;
        let start = self.p.now();
        let mut spins = 0u32;
        loop {
            if seq - retired.load(Ordering::Acquire) < window {
                return Ok(());
            }
            self.check_running()?;
            spins = spins.wrapping_add(1);
            if spins.is_multiple_of(64) {
                // The watermark may have moved up to a task an open scope holds.
                self.check_scope_deadlock(ring, seq)?;
                let waited = self.p.now().saturating_sub(start);
                if waited > self.timeout_ticks {
                    return Err(SubmitError::WindowFull {
                        ring: ring as u8,
                        window: self.t.window as u32,
                        waited_us: waited / self.p.ticks_per_us().max(1),
                    });
                }
            }
            self.p.spin_hint();
        }
    }
}

impl<P: Platform> Orchestrator<'_, '_, P> {
    /// Fails at once if slot `seq` of `ring` can only free up when a task held by an open
    /// scope retires.
    fn check_scope_deadlock(&self, ring: usize, seq: u64) -> Result<(), SubmitError> {
        let t = self.t;
        let window = t.window as u64;
        let retired = t.rings[ring].retired.0.load(Ordering::Acquire);
        for s in retired..=seq.saturating_sub(window) {
            let slot = t.slot(t.gslot(TaskId::new(t.cfg.epoch, ring as u8, Seq(s))));
            if slot.seq.load(Ordering::Relaxed) == s && slot.scoped.load(Ordering::Relaxed) == 1 {
                return Err(SubmitError::ScopeDeadlock {
                    ring: ring as u8,
                    window: t.window as u32,
                    open: self.scopes.len(),
                });
            }
        }
        Ok(())
    }
}

impl<P: Platform> Drop for Orchestrator<'_, '_, P> {
    fn drop(&mut self) {
        // Scopes left open end here, so their tasks can be reclaimed.
        while self.scope_end().is_ok() {}
        self.t.shared.orch_done.0.store(1, Ordering::Release);
    }
}

/// Distinct ids among `deps`, counted up to `stop` (at most `MAX_DEPS + 1`).
fn distinct_deps(deps: &[TaskId], stop: usize) -> usize {
    let mut seen = heapless::Vec::<TaskId, { MAX_DEPS as usize + 1 }>::new();
    for &d in deps {
        if !seen.contains(&d) && seen.push(d).is_err() {
            break;
        }
        if seen.len() >= stop {
            break;
        }
    }
    seen.len()
}
