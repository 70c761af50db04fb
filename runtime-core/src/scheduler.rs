//! The scheduler loop: detect completions, dispatch ready work, finish DUMMY tasks, repeat
//! until every submitted task finished or the run failed.
#![forbid(unsafe_code)]

use crate::completion::{Finisher, finish};
use crate::condition::Watch;
use crate::config::MAX_ARGS;
use crate::deferred::{DeferredSet, DeferredStore};
use crate::dispatch::{CoreTable, Inflight};
use crate::error::{FatalError, FatalKind};
use crate::ids::{TaskId, WorkerClass};
use crate::platform::{CorePhase, Payload, Platform};
use crate::profile::{PHASES, Phase, ProfileLevel, RecordBatch};
use crate::slot::Meta;
use crate::stats::SchedCtl;
use crate::sync::Ordering;
use crate::tables::Tables;

/// DUMMY tasks finished per loop iteration at most, so dispatch is never starved.
const DUMMY_BATCH: usize = 32;
/// Iterations between two watchdog passes.
pub(crate) const WATCHDOG_EVERY: u32 = 1024;
/// Iterations between two checks of deferred deadlines (while the deferred set is not empty).
pub(crate) const DEADLINES_EVERY: u32 = 64;

/// What one loop iteration achieved.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Step {
    /// Something completed or was dispatched.
    Progress,
    /// Nothing to do right now.
    Idle,
    /// Every submitted task finished and the orchestrator is done.
    Done,
    /// The run failed.
    Failed,
}

/// One scheduler thread's handle: the cores it owns and its loop.
pub struct Scheduler<'r, 'p, P: Platform> {
    t: Tables<'r>,
    p: &'p P,
    ctl: &'r SchedCtl,
    cores: CoreTable,
    /// Tasks whose kernels returned but whose deferred conditions do not all hold yet.
    deferred: DeferredSet<'r>,
    timeout_ticks: u64,
    deferred_timeout_ticks: u64,
    loops: u64,
    dispatched: u64,
    index: u8,
    /// Whether this iteration reads the clock (profiling or latency recording is on).
    clocked: bool,
    /// Whether this iteration records per-task times.
    tasks_level: bool,
    /// The profiling level read for this iteration.
    level: ProfileLevel,
    /// The lap clock: the time of the last phase cut.
    now: u64,
    /// The last iteration made progress.
    busy: bool,
    /// Task records not yet written to the ring.
    records: RecordBatch,
    /// Ticks of this iteration, by phase.
    lap: [u64; PHASES],
}

impl<'r, 'p, P: Platform> Scheduler<'r, 'p, P> {
    pub(crate) fn new(
        t: Tables<'r>,
        p: &'p P,
        index: u8,
        ctl: &'r SchedCtl,
        store: DeferredStore<'r>,
    ) -> Self {
        let ticks = p.ticks_per_us().max(1);
        Scheduler {
            t,
            p,
            ctl,
            cores: CoreTable::for_scheduler(&t.cfg, index),
            deferred: DeferredSet::new(store),
            timeout_ticks: t.cfg.task_timeout_us.saturating_mul(ticks),
            deferred_timeout_ticks: t.cfg.deferred_timeout_us.saturating_mul(ticks),
            loops: 0,
            dispatched: 0,
            index,
            clocked: false,
            tasks_level: false,
            level: ProfileLevel::Off,
            now: 0,
            busy: false,
            records: RecordBatch::new(),
            lap: [0; PHASES],
        }
    }

    /// Runs until every submitted task finished (after the orchestrator was dropped), or
    /// until the run failed: then it returns the run's first error, whoever reported it.
    pub fn run(mut self) -> Result<(), FatalError> {
        let result = self.run_loop();
        self.records.flush(&self.t.shared.prof, self.t.records);
        self.ctl.loops.store(self.loops, Ordering::Relaxed);
        self.ctl
            .dispatched
            .store(self.dispatched, Ordering::Relaxed);
        result
    }

    fn run_loop(&mut self) -> Result<(), FatalError> {
        loop {
            match self.step() {
                Step::Progress => {}
                Step::Idle => self.p.spin_hint(),
                Step::Done => return Ok(()),
                Step::Failed => return Err(self.run_error()),
            }
        }
    }

    /// One iteration of the loop.
    pub(crate) fn step(&mut self) -> Step {
        self.loops += 1;
        if self.t.shared.status.failed() {
            return Step::Failed;
        }
        let level = self.t.shared.prof.level();
        self.level = level;
        self.tasks_level = level == ProfileLevel::Tasks;
        self.clocked = level != ProfileLevel::Off || self.t.cfg.record_latency;
        // Time since the last cut: the spin hint after an idle iteration, and phases that
        // found nothing to do. After a busy iteration, the time since its last cut is short
        // and goes to the next busy phase instead (when phases are counted), saving a read.
        if level == ProfileLevel::Off || !self.busy {
            self.cut(Phase::Idle);
        }
        let mut progress = self.poll_completions();
        self.phase_cut(Phase::Complete, progress);
        if !self.deferred.is_empty() {
            let released = self.poll_deferred();
            self.phase_cut(Phase::DeferredPoll, released);
            progress |= released;
        }
        let (mixed, mix_waiting) = self.dispatch_mix();
        // MIX has strict priority on the cores of MIX-capable clusters: while a MIX task waits,
        // single-core tasks go elsewhere, so those clusters drain and the MIX task starts.
        let reserved = if mix_waiting { self.cores.mix_cores } else { 0 };
        let mut dispatched = mixed;
        dispatched |= self.dispatch_single(WorkerClass::Aic, reserved);
        dispatched |= self.dispatch_single(WorkerClass::Aiv, reserved);
        self.phase_cut(Phase::Dispatch, dispatched);
        let dummies = self.finish_dummies();
        self.phase_cut(Phase::Complete, dummies);
        progress |= dispatched | dummies;
        self.busy = progress;
        if !progress && !self.records.is_empty() {
            // Nothing else to do: write the kept records out.
            self.records.flush(&self.t.shared.prof, self.t.records);
        }
        if level != ProfileLevel::Off {
            self.flush_phases(progress);
        }
        if (self.loops as u32).is_multiple_of(WATCHDOG_EVERY) {
            self.watchdog();
        }
        if self.t.shared.status.failed() {
            Step::Failed
        } else if progress {
            Step::Progress
        } else if self.all_done() {
            Step::Done
        } else {
            Step::Idle
        }
    }

    fn run_error(&self) -> FatalError {
        self.t
            .shared
            .status
            .wait_published()
            .unwrap_or(FatalError::new(FatalKind::Aborted))
    }

    /// Cuts the lap clock after a phase that did some work, when phases are counted. A phase
    /// that found nothing reads no clock: its few nanoseconds go to the next cut (to idle, at
    /// the latest), so an idle iteration costs one clock read at any level, and a busy one a
    /// read per busy phase. Task stamps use the lap clock too: a stamp is never later than
    /// the event, and never earlier than the last cut.
    #[inline]
    fn phase_cut(&mut self, phase: Phase, worked: bool) {
        if worked && self.level != ProfileLevel::Off {
            self.cut(phase);
        }
    }

    /// Cuts the lap clock: the time since the last cut goes to `phase`.
    #[inline]
    fn cut(&mut self, phase: Phase) {
        if !self.clocked {
            return;
        }
        let now = self.p.now();
        if self.now != 0 {
            self.lap[phase as usize] += now.saturating_sub(self.now);
        }
        self.now = now;
    }

    /// Adds this iteration's lap to the phase counters: by phase if it made progress, all to
    /// idle if it did not. The phases sum to the time between the first and the last cut.
    fn flush_phases(&mut self, progress: bool) {
        let lap = core::mem::take(&mut self.lap);
        if progress {
            for (counter, ticks) in self.ctl.phases.iter().zip(lap) {
                SchedCtl::bump(counter, ticks);
            }
        } else {
            SchedCtl::bump(&self.ctl.phases[Phase::Idle as usize], lap.iter().sum());
        }
        SchedCtl::bump(&self.ctl.phase_loops, 1);
    }

    fn finisher(&self) -> Finisher<'r> {
        Finisher {
            ctl: self.ctl,
            sched: self.index,
            now: self.now,
            level: self.level,
        }
    }

    /// Finishes `task` through the funnel and keeps its record.
    fn finish(&mut self, task: TaskId) {
        finish(&self.t, task, self.finisher(), Some(&mut self.records));
    }

    fn all_done(&self) -> bool {
        self.t.shared.orch_done.0.load(Ordering::Acquire) == 1
            && self.t.finished() == self.t.shared.submitted.0.load(Ordering::Acquire)
    }

    fn fail(&self, e: FatalError) {
        self.t.shared.status.fail(e);
    }

    /// Reads the status word of every busy core and completes what finished.
    fn poll_completions(&mut self) -> bool {
        let mut progress = false;
        let mut busy = self.cores.busy();
        while busy != 0 {
            let i = busy.trailing_zeros() as usize;
            busy &= busy - 1;
            progress |= self.poll_core(i);
        }
        progress
    }

    fn poll_core(&mut self, i: usize) -> bool {
        let core = self.cores.cores[i];
        let Some(run) = core.running else {
            return false;
        };
        let st = self.p.core_status(core.id);
        let ahead = st.token.since(run.token);
        let is_pending = core.pending.is_some_and(|p| p.token == st.token);
        match st.phase {
            CorePhase::Idle => false,
            // Older tokens (the FIN of a task already completed, seen again) are ignored: a
            // lane completes only when its own token is reported.
            _ if ahead < 0 => false,
            CorePhase::Ack if ahead == 0 => false,
            // The core moved on to the pending token: the running one finished.
            CorePhase::Ack if is_pending => self.complete_lane(i, run),
            CorePhase::Fin if ahead == 0 => self.complete_lane(i, run),
            CorePhase::Fin if is_pending => {
                if !self.complete_lane(i, run) {
                    return false;
                }
                if let Some(next) = self.cores.cores[i].running {
                    self.complete_lane(i, next);
                }
                true
            }
            CorePhase::Error(code) if ahead == 0 || is_pending => {
                let task = if ahead == 0 {
                    run.task
                } else {
                    core.pending.map_or(run.task, |p| p.task)
                };
                self.fail(
                    FatalError::new(FatalKind::KernelFailed)
                        .with_task(task)
                        .with_core(core.id)
                        .with_detail(code as u64, 0),
                );
                true
            }
            _ => {
                let newest = core.pending.unwrap_or(run).token;
                self.fail(
                    FatalError::new(FatalKind::CoreProtocol)
                        .with_task(run.task)
                        .with_core(core.id)
                        .with_detail(st.token.bits() as u64, newest.bits() as u64),
                );
                true
            }
        }
    }

    /// The running lane of local core `i` finished: retire it, enter the conditions its
    /// kernel registered into the deferred set, and finish its task if this was the task's
    /// last lane and nothing is left to wait for. Returns `false` (and leaves the FIN unread)
    /// when the deferred set has no room for the lane's conditions yet.
    fn complete_lane(&mut self, i: usize, lane: Inflight) -> bool {
        let core = self.cores.cores[i].id;
        let g = self.t.gslot(lane.task);
        let slot = self.t.slot(g);
        let conditions = self.p.conditions(core, lane.token);
        let entry = slot.deferred.load(Ordering::Relaxed).checked_sub(1);
        if conditions > 0 {
            let registered = entry.map_or(0, |e| self.deferred.registered(e) as usize);
            let limit = self.t.cfg.max_conditions as usize;
            if registered + conditions > limit {
                self.fail(
                    FatalError::new(FatalKind::TooManyConditions)
                        .with_task(lane.task)
                        .with_core(core)
                        .with_detail((registered + conditions) as u64, limit as u64),
                );
                return true;
            }
            if !self.deferred.has_room(conditions, entry.is_none()) {
                return false;
            }
        }
        self.cores.retire_running(i);
        if self.tasks_level {
            let row = &self.t.prof_rows[g];
            // The lap clock may predate the kernel's end: the FIN was seen after both.
            let mut fin = self.now;
            if let Some((start, end)) = self.p.lane_times(core, lane.token) {
                let first = row.start.load(Ordering::Relaxed);
                row.start.store(
                    if first == 0 { start } else { first.min(start) },
                    Ordering::Relaxed,
                );
                let last = row.end.load(Ordering::Relaxed).max(end);
                row.end.store(last, Ordering::Relaxed);
                fin = fin.max(last);
            }
            row.fin.store(fin, Ordering::Relaxed);
            if conditions > 0 {
                // Conditions that all hold already complete the task at its FIN.
                row.deferred.store(fin, Ordering::Relaxed);
            }
        }
        let entry = match entry {
            _ if conditions == 0 => entry,
            Some(e) => Some(e),
            None => {
                let e = self.deferred.open(lane.task);
                slot.deferred.store(e + 1, Ordering::Relaxed);
                Some(e)
            }
        };
        if let Some(e) = entry
            && conditions > 0
            && !self.register(e, lane, core, conditions)
        {
            return true;
        }
        let meta = Meta::unpack(slot.meta.load(Ordering::Relaxed));
        if meta.class == WorkerClass::Mix && slot.lanes_left.fetch_sub(1, Ordering::AcqRel) != 1 {
            return true;
        }
        match entry {
            None => self.finish(lane.task),
            Some(e) => {
                let now = if self.clocked { self.now } else { self.p.now() };
                if self
                    .deferred
                    .arm(e, now.saturating_add(self.deferred_timeout_ticks))
                {
                    let task = self.deferred.close(e);
                    slot.deferred.store(0, Ordering::Relaxed);
                    self.finish(task);
                }
            }
        }
        true
    }

    /// Enters the `n` conditions of `lane` into entry `e`: each is read once; those that hold
    /// already are only counted. Returns `false` after failing the run on a condition the
    /// platform cannot read.
    fn register(&mut self, e: u32, lane: Inflight, core: crate::ids::CoreId, n: usize) -> bool {
        for k in 0..n {
            let bad = FatalError::new(FatalKind::BadCondition)
                .with_task(lane.task)
                .with_core(core);
            let Some(c) = self.p.condition(core, lane.token, k) else {
                self.fail(bad);
                return false;
            };
            let Some(value) = read_watch(self.p, c.watch) else {
                self.fail(bad.with_watch(c.watch));
                return false;
            };
            if c.holds(value) {
                self.deferred.add_met(e);
            } else {
                self.deferred.add(e, c, value);
            }
        }
        true
    }

    /// Reads the watched words (at most `deferred_poll_budget` of them) and finishes the tasks
    /// whose last condition now holds; checks deadlines now and then.
    fn poll_deferred(&mut self) -> bool {
        let t = self.t;
        let p = self.p;
        let by = self.finisher();
        let tasks_level = self.tasks_level;
        let records = &mut self.records;
        let polled = self.deferred.poll(
            self.t.cfg.deferred_poll_budget as usize,
            |w| read_watch(p, w),
            |set, e| {
                let task = set.close(e);
                let g = t.gslot(task);
                t.slot(g).deferred.store(0, Ordering::Relaxed);
                if tasks_level {
                    let row = &t.prof_rows[g];
                    let fin = row.fin.load(Ordering::Relaxed);
                    row.deferred.store(by.now.max(fin), Ordering::Relaxed);
                }
                finish(&t, task, by, Some(&mut *records));
            },
        );
        let released = match polled {
            Ok(n) => n,
            Err((watch, task)) => {
                self.fail(
                    FatalError::new(FatalKind::BadCondition)
                        .with_task(task)
                        .with_watch(watch),
                );
                return true;
            }
        };
        if (self.loops as u32).is_multiple_of(DEADLINES_EVERY)
            && let Some(x) = self.deferred.expired(self.p.now())
        {
            self.fail(
                FatalError::new(FatalKind::DeferredTimeout)
                    .with_task(x.task)
                    .with_watch(x.watch)
                    .with_detail(x.expected, x.last),
            );
            return true;
        }
        released > 0
    }

    /// Fills idle cores of `class` (except `reserved` ones) first, then pending slots, while
    /// its queue has work.
    fn dispatch_single(&mut self, class: WorkerClass, reserved: u128) -> bool {
        let kind = self.cores.kind[class.index()] & !reserved;
        let mut progress = false;
        loop {
            let idle = self.cores.idle & kind;
            let target = if idle != 0 {
                idle
            } else {
                self.cores.pending_free & kind
            };
            if target == 0 {
                return progress;
            }
            let Some(raw) = self.t.queue(class).pop() else {
                return progress;
            };
            let i = target.trailing_zeros() as usize;
            self.send(i, TaskId::from_raw(raw), 0, 1);
            progress = true;
        }
    }

    /// Starts MIX tasks on clusters whose three cores are all idle. Returns whether it
    /// started any, and whether MIX work is still waiting.
    fn dispatch_mix(&mut self) -> (bool, bool) {
        let queue = *self.t.queue(WorkerClass::Mix);
        if self.cores.mix.is_empty() || !queue.maybe_nonempty() {
            return (false, false);
        }
        let mut progress = false;
        for c in 0..self.cores.mix.len() {
            let lanes = self.cores.mix[c];
            let mask = lanes.iter().fold(0u128, |m, &l| m | 1 << l);
            if self.cores.idle & mask != mask {
                continue;
            }
            let Some(raw) = queue.pop() else {
                return (progress, false);
            };
            for (lane, &l) in lanes.iter().enumerate() {
                self.send(l as usize, TaskId::from_raw(raw), lane as u8, 3);
            }
            progress = true;
        }
        (progress, queue.maybe_nonempty())
    }

    /// Writes the payload of `task`'s `lane` to local core `i` and rings its doorbell.
    fn send(&mut self, i: usize, task: TaskId, lane: u8, lanes: u8) {
        let g = self.t.gslot(task);
        let meta = Meta::unpack(self.t.slot(g).meta.load(Ordering::Relaxed));
        let mut buf = [0u64; MAX_ARGS as usize];
        let n = (meta.nargs as usize).min(buf.len());
        for (dst, src) in buf[..n].iter_mut().zip(self.t.args_of(g)) {
            *dst = src.load(Ordering::Relaxed);
        }
        let core = self.cores.cores[i];
        let token = core.next_token;
        let payload = Payload {
            task,
            kernel: meta.kernel,
            lane,
            lanes,
            args: &buf[..n],
            profile: self.tasks_level,
        };
        if self.tasks_level && lane == 0 {
            // The lap clock may predate the task's ready stamp (set by another thread during
            // this phase): a task is never dispatched before it was ready.
            let row = &self.t.prof_rows[g];
            let ready = row.ready.load(Ordering::Relaxed);
            row.dispatch.store(self.now.max(ready), Ordering::Relaxed);
            row.core.store(core.id.0 as u64, Ordering::Relaxed);
        }
        self.p.write_payload(core.id, token, &payload);
        self.p.ring_doorbell(core.id, token);
        self.cores.occupy(i, Inflight { task, token });
        self.dispatched += 1;
    }

    /// Finishes a batch of ready DUMMY tasks here and now.
    fn finish_dummies(&mut self) -> bool {
        let q = *self.t.queue(WorkerClass::Dummy);
        let mut progress = false;
        for _ in 0..DUMMY_BATCH {
            let Some(raw) = q.pop() else { break };
            self.finish(TaskId::from_raw(raw));
            progress = true;
        }
        progress
    }

    /// Fails the run if a core has run the same token for longer than `task_timeout_us`.
    fn watchdog(&mut self) {
        let now = self.p.now();
        let mut busy = self.cores.busy();
        while busy != 0 {
            let i = busy.trailing_zeros() as usize;
            busy &= busy - 1;
            let c = &mut self.cores.cores[i];
            let Some(run) = c.running else { continue };
            match c.watch {
                Some((token, since)) if token == run.token => {
                    let waited = now.saturating_sub(since);
                    if waited > self.timeout_ticks {
                        let e = FatalError::new(FatalKind::TaskTimeout)
                            .with_task(run.task)
                            .with_core(c.id)
                            .with_detail(waited / self.p.ticks_per_us().max(1), 0);
                        self.t.shared.status.fail(e);
                    }
                }
                _ => c.watch = Some((run.token, now)),
            }
        }
    }
}

/// Reads a watched word through the platform, invalidating a counter's cache line first.
#[inline]
fn read_watch<P: Platform>(p: &P, w: Watch) -> Option<u64> {
    if let Some((addr, len)) = w.counter() {
        p.invalidate(addr, len);
    }
    p.read_watch(w)
}
