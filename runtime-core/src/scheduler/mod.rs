//! The scheduler loop: detect completions, dispatch ready work, finish DUMMY tasks, repeat
//! until every submitted task finished or the run failed.
#![forbid(unsafe_code)]

mod blocks;
pub(crate) mod completion;
mod cores;
pub(crate) mod deferred;
mod deferred_poll;
mod dispatch;
mod engine_queues;
mod fin;
mod lanes;
mod lap;
mod stalls;
mod sync_start;
mod watchdog;

#[cfg(all(test, not(loom)))]
mod block_tests;
#[cfg(all(test, not(loom)))]
mod deferred_tests;
#[cfg(all(test, loom))]
mod loom_blocks;
#[cfg(all(test, loom))]
mod loom_completion;
#[cfg(all(test, loom))]
mod loom_deferred;
#[cfg(all(test, loom))]
mod loom_protocol;
#[cfg(all(test, not(loom)))]
mod predicate_tests;
#[cfg(all(test, not(loom)))]
mod protocol_tests;
#[cfg(all(test, not(loom)))]
mod tests;

use crate::condition::Watch;
use crate::error::{FatalCause, FatalError};
use crate::ids::{TaskId, WorkerClass};
use crate::observe::profile::{PHASES, Phase, ProfileLevel};
use crate::observe::record::Closer;
use crate::observe::stats::SchedCtl;
use crate::platform::Platform;
use crate::queues::completion_queue::CompletionQueue;
use crate::region::config::CompletionMode;
use crate::scheduler::completion::{Finisher, finish, finish_at, finish_at_fin};
use crate::scheduler::deferred::{DeferredSet, DeferredStore};
use crate::sync::Ordering;
use crate::tables::{SlotIndex, Tables};
use cores::CoreTable;

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
    /// The queue the cores post completions to ([`CompletionMode::Ring`]); `None` when the
    /// scheduler polls every busy core.
    cq: Option<CompletionQueue<'p>>,
    /// The engines' completion queues of this scheduler's transfers.
    eq: engine_queues::EngineQueues<'p>,
    timeout_ticks: u64,
    deferred_timeout_ticks: u64,
    /// How long live tasks may go without any finishing ([`progress_bound_us`]), in ticks.
    progress_ticks: u64,
    /// The run's finished count at the watchdog's last look, and since when it stood
    /// (`None`: no task was live then).
    progress: Option<(u64, u64)>,
    loops: u64,
    dispatched: u64,
    /// A sync-start task this scheduler popped and holds until it has a free core (cluster)
    /// of the task's class for every block; meanwhile those cores take no other work.
    sync: Option<(WorkerClass, TaskId)>,
    /// Whether this iteration reads the clock (profiling or latency recording is on).
    clocked: bool,
    /// Whether this iteration records per-task times.
    tasks_level: bool,
    /// Who finishes tasks here, as the funnel takes it (by reference, kept up to date rather
    /// than built for each task): this scheduler, the profiling level read for this
    /// iteration (`by.level`) and the lap clock, the time of the last phase cut (`by.now`).
    by: Finisher<'r>,
    /// The last iteration made progress.
    busy: bool,
    /// Iterations in a row that found nothing to do (what [`Platform::spin_hint`] is told).
    idle: u32,
    /// Ticks of this iteration, by phase.
    lap: [u64; PHASES],
    /// When the lap clock was last cut: `by.now` unless a core's later stamp raised it
    /// ([`Scheduler::raise_clock`]).
    cut_at: u64,
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
        let mut cores = CoreTable::for_scheduler(t.cfg(), index);
        for i in cores.each() {
            let last = p.core_status(cores.core(i).id);
            cores.resume_after(i, last);
        }
        let cq = match t.cfg().completion {
            CompletionMode::Ring => p.completion_queue(index),
            CompletionMode::Poll => None,
        };
        Scheduler {
            t,
            p,
            ctl,
            cores,
            cq,
            eq: engine_queues::EngineQueues::new(p, index),
            deferred: DeferredSet::new(store),
            timeout_ticks: t.cfg().task_timeout_us.saturating_mul(ticks),
            deferred_timeout_ticks: t.cfg().deferred_timeout_us.saturating_mul(ticks),
            progress_ticks: progress_bound_us(t.cfg()).saturating_mul(ticks),
            progress: None,
            loops: 0,
            dispatched: 0,
            sync: None,
            clocked: false,
            tasks_level: false,
            by: Finisher {
                ctl,
                closer: Closer::of(index),
                now: 0,
                level: ProfileLevel::Off,
            },
            busy: false,
            idle: 0,
            lap: [0; PHASES],
            cut_at: 0,
        }
    }

    /// Runs until every submitted task finished (after the orchestrator was dropped), or
    /// until the run failed: then it returns the run's first error, whoever reported it.
    pub fn run(mut self) -> Result<(), FatalError> {
        let result = self.run_loop();
        self.ctl.loops.store(self.loops, Ordering::Relaxed);
        self.ctl
            .dispatched
            .store(self.dispatched, Ordering::Relaxed);
        result
    }

    fn run_loop(&mut self) -> Result<(), FatalError> {
        loop {
            match self.step() {
                Step::Progress => self.idle = 0,
                Step::Idle => {
                    self.idle = self.idle.wrapping_add(1).max(1);
                    self.p.spin_hint(self.idle);
                }
                Step::Done => return Ok(()),
                Step::Failed => {
                    self.report_stalls();
                    return Err(self.run_error());
                }
            }
        }
    }

    /// One iteration of the loop.
    pub(crate) fn step(&mut self) -> Step {
        self.loops += 1;
        if self.t.shared().status().failed() {
            return Step::Failed;
        }
        let level = self.t.shared().prof().level();
        self.by.level = level;
        self.tasks_level = level == ProfileLevel::Tasks;
        self.clocked = level != ProfileLevel::Off || self.t.cfg().record_latency;
        // Time since the last cut: the spin hint after an idle iteration, and phases that
        // found nothing to do. After a busy iteration, the time since its last cut is short
        // and goes to the next busy phase instead (when phases are counted), saving a read.
        if level == ProfileLevel::Off || !self.busy {
            self.cut(Phase::Idle);
        }
        let mut progress = self.poll_completions();
        self.phase_cut(Phase::Complete, progress);
        // Engine entries matter to deferred tasks; with none waiting they are still drained
        // now and then, so a queue nobody waits on never fills and stalls its engine.
        if self.eq.present()
            && (!self.deferred.is_empty() || (self.loops as u32).is_multiple_of(DEADLINES_EVERY))
        {
            let stats = (level != ProfileLevel::Off).then_some(&self.ctl.engine_queues);
            let drained = self.eq.drain(self.ctl, stats);
            self.phase_cut(Phase::DeferredPoll, drained);
            progress |= drained;
        }
        if !self.deferred.is_empty() {
            let released = self.poll_deferred();
            self.phase_cut(Phase::DeferredPoll, released);
            progress |= released;
        }
        // A held sync-start task first: it starts once its cores are free, and until then
        // they take nothing else.
        let started = self.sync.is_some() && self.start_held();
        let (mixed, mix_waiting) = self.dispatch_mix();
        // MIX has strict priority on the cores of MIX-capable clusters: while a MIX task waits,
        // single-core tasks go elsewhere, so those clusters drain and the MIX task starts.
        // A cluster that only the deferred set can drain is not held back.
        let mut reserved = if mix_waiting {
            self.cores.mix_reserved()
        } else {
            0
        };
        if let Some((class, _)) = self.sync {
            reserved |= self.sync_cores(class);
        }
        let mut dispatched = mixed | started;
        dispatched |= self.dispatch_single(WorkerClass::Aic, reserved);
        dispatched |= self.dispatch_single(WorkerClass::Aiv, reserved);
        self.phase_cut(Phase::Dispatch, dispatched);
        let dummies = self.finish_dummies();
        self.phase_cut(Phase::Complete, dummies);
        progress |= dispatched | dummies;
        self.busy = progress;
        if level != ProfileLevel::Off {
            self.flush_phases(progress);
        }
        if (self.loops as u32).is_multiple_of(WATCHDOG_EVERY) {
            self.watchdog();
        }
        if self.t.shared().status().failed() {
            Step::Failed
        } else if progress {
            Step::Progress
        } else if self.all_done() {
            self.end_of_run()
        } else {
            Step::Idle
        }
    }

    /// Every task finished: the run succeeded, unless a transfer failed (its tasks were
    /// cancelled), or an error entry no task claimed was drained. Then the run ends with
    /// that [`FatalKind::TransferFailed`].
    fn end_of_run(&self) -> Step {
        let pending = self.t.shared().task_failure();
        if !pending.failed()
            && let Some(f) = self.eq.unclaimed()
        {
            pending.fail(f.error(None));
        }
        if !pending.failed() {
            return Step::Done;
        }
        if let Some(e) = pending.wait_published() {
            self.fail(e);
        }
        Step::Failed
    }

    fn run_error(&self) -> FatalError {
        self.t
            .shared()
            .status()
            .wait_published()
            .unwrap_or(FatalError::new(FatalCause::Aborted { code: 0 }))
    }

    fn finisher(&self) -> Finisher<'r> {
        self.by
    }

    /// Finishes `task` through the funnel.
    fn finish(&mut self, task: TaskId) {
        finish(&self.t, task, self.finisher());
    }

    /// [`Scheduler::finish`] for a task whose slot `g` is known.
    fn finish_at(&mut self, g: SlotIndex, task: TaskId) {
        finish_at(&self.t, g, task, &self.by);
    }

    /// [`Scheduler::finish_at`] for a task finishing at its last lane's FIN, seen now: a
    /// consumer the funnel hands back goes straight to an idle core
    /// ([`Scheduler::hand_off`]) before the task is settled.
    #[inline(always)]
    fn finish_at_fin(&mut self, g: SlotIndex, task: TaskId) {
        let mut u = finish_at_fin(&self.t, g, task, &self.by);
        if let Some(ready) = u.handed.take() {
            self.hand_off(ready);
        }
        u.settle(&self.t, &self.by);
    }

    fn all_done(&self) -> bool {
        self.t.shared().submissions_closed() && self.t.finished() == self.t.shared().submitted()
    }

    fn fail(&self, e: FatalError) {
        self.t.shared().status().fail(e);
    }
}

/// How long tasks may be live with none finishing before the run is stuck: twice the
/// longest one task may take (its kernel, then a wait for deferred room and its conditions),
/// and at least 1 s.
pub(crate) fn progress_bound_us(cfg: &crate::Config) -> u64 {
    cfg.task_timeout_us
        .saturating_add(cfg.deferred_timeout_us.saturating_mul(2))
        .saturating_mul(2)
        .max(1_000_000)
}

/// Reads a watched word through the platform, invalidating a counter's cache line first.
#[inline]
fn read_watch<P: Platform>(p: &P, w: Watch) -> Option<u64> {
    if let Some((addr, len)) = w.counter() {
        p.invalidate(addr, len);
    }
    p.read_watch(w)
}
