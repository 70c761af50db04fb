//! The scheduler loop: detect completions, dispatch ready work, finish DUMMY tasks, repeat
//! until every submitted task finished or the run failed.
#![forbid(unsafe_code)]

mod fin;
mod lanes;
mod watchdog;

use crate::completion::{Finisher, finish};
use crate::condition::Watch;
use crate::config::MAX_ARGS;
use crate::deferred::{DeferredSet, DeferredStore};
use crate::dispatch::{CoreTable, Inflight};
use crate::error::{FatalError, FatalKind};
use crate::ids::{TaskId, WorkerClass};
use crate::platform::{Payload, Platform};
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
        let mut cores = CoreTable::for_scheduler(&t.cfg, index);
        for i in 0..cores.cores.len() {
            let last = p.core_status(cores.cores[i].id);
            cores.resume_after(i, last);
        }
        Scheduler {
            t,
            p,
            ctl,
            cores,
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
        // A cluster that only the deferred set can drain is not held back.
        let reserved = if mix_waiting {
            self.cores.mix_reserved()
        } else {
            0
        };
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
        if (self.loops as u32).is_multiple_of(DEADLINES_EVERY) {
            let now = self.p.now();
            if let Some(x) = self.deferred.expired(now) {
                // With lanes held for room, the full set itself may be what kept the word
                // from moving (its writer could not get a core): say so, naming the knob.
                let e = match self.cores.oldest_held() {
                    Some((i, since)) => self.deferred_full(i, now.saturating_sub(since)),
                    None => FatalError::new(FatalKind::DeferredTimeout)
                        .with_task(x.task)
                        .with_watch(x.watch)
                        .with_detail(x.expected, x.last),
                };
                self.fail(e);
                return true;
            }
        }
        released > 0
    }

    /// The error of local core `i`'s lane, held `waited` ticks for room in a full set.
    fn deferred_full(&self, i: usize, waited: u64) -> FatalError {
        let c = &self.cores.cores[i];
        let mut e = FatalError::new(FatalKind::DeferredFull)
            .with_core(c.id)
            .with_detail(
                self.t.cfg.deferred_capacity as u64,
                waited / self.p.ticks_per_us().max(1),
            );
        if let Some(run) = c.running {
            e = e.with_task(run.task);
        }
        e
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
}

/// Reads a watched word through the platform, invalidating a counter's cache line first.
#[inline]
fn read_watch<P: Platform>(p: &P, w: Watch) -> Option<u64> {
    if let Some((addr, len)) = w.counter() {
        p.invalidate(addr, len);
    }
    p.read_watch(w)
}
