//! The runtime: formats the region and hands out the orchestrator and scheduler handles.
#![forbid(unsafe_code)]

use crate::error::{ClaimError, FatalCause, FatalError};
use crate::ids::TaskId;
use crate::layout::{RegionLayout, carve};
use crate::observe::profile::{PhaseCounters, ProfileLevel};
use crate::observe::record::TaskRecord;
use crate::observe::stall::Stall;
use crate::observe::stats::QueueReport;
use crate::observe::stats::{LatencyHistogram, SchedCtl};
use crate::orchestrator::Orchestrator;
use crate::orchestrator::store::OrchestratorStore;
use crate::platform::Platform;
use crate::region::carve::REGION_ALIGN;
use crate::region::config::{CompletionMode, Config, ConfigError, MAX_SCHEDULERS};
use crate::region::raw::region::Carver;
use crate::scheduler::Scheduler;
use crate::scheduler::deferred::DeferredStore;
use crate::sync::Ordering;
use crate::tables::drain::RecordDrain;
use crate::tables::views::RunTables;

/// A formatted runtime region. Shared by reference between the orchestrator thread and the
/// scheduler threads (it is `Sync`); each takes its handle once.
pub struct Runtime<'r> {
    t: RunTables<'r>,
    /// Each scheduler's deferred-set pools, taken with its handle.
    deferred: [spin::mutex::SpinMutex<Option<DeferredStore<'r>>>; MAX_SCHEDULERS as usize],
    /// The tensor map's storage, taken with the orchestrator handle.
    orchestrator: spin::mutex::SpinMutex<Option<OrchestratorStore<'r>>>,
}

/// What a run did, read back from the region.
#[derive(Clone, Debug)]
pub struct RunReport {
    /// Tasks submitted.
    pub submitted: u64,
    /// Tasks finished (every kind).
    pub finished: u64,
    /// Lane dispatches to cores.
    pub dispatched: u64,
    /// Scheduler loop iterations, all threads.
    pub loops: u64,
    /// Slots still held, all rings (0 after a clean run).
    pub live_slots: u64,
    /// The first fatal error, if any.
    pub error: Option<FatalError>,
    /// Ready-to-complete latency in clock ticks (empty unless `record_latency`).
    pub latency: LatencyHistogram,
    /// Task records not kept: claimed past the end of a profile ring that has no drain, or,
    /// with a drain ([`Runtime::record_drain`]), given up after the claim waited its bound
    /// for the drain to free a cell.
    pub profile_dropped: u64,
    /// Tasks finished cancelled (a transfer they waited on, or one of a task they depend
    /// on, failed): they did not run, or their result did not count.
    pub cancelled: u64,
    /// Tasks skipped: their predicate was false when they were about to be dispatched, so
    /// they finished without running ([`crate::TaskSpec::when`]).
    pub skipped: u64,
}

impl<'r> Runtime<'r> {
    /// Validates `cfg`, lays out and formats `region` (at least
    /// [`RegionLayout::size`] bytes, 64-byte aligned).
    pub fn init(region: &'r mut [u8], cfg: Config) -> Result<Self, ConfigError> {
        let layout = RegionLayout::new(&cfg)?;
        let offset = region.as_ptr() as usize % REGION_ALIGN;
        if offset != 0 {
            return Err(ConfigError::RegionMisaligned { offset });
        }
        let given = region.len();
        if given < layout.size() {
            return Err(ConfigError::RegionTooSmall {
                needed: layout.size(),
                given,
            });
        }
        let (t, deferred, orchestrator) = carve(&cfg, &mut Carver::new(region))?.split(cfg);
        let mut deferred = deferred.into_iter();
        Ok(Runtime {
            t: RunTables::new(t),
            deferred: core::array::from_fn(|_| spin::mutex::SpinMutex::new(deferred.next())),
            orchestrator: spin::mutex::SpinMutex::new(Some(orchestrator)),
        })
    }

    /// The configuration the region was laid out from.
    pub fn config(&self) -> &Config {
        self.t.cfg()
    }

    /// The orchestrator handle (one per runtime). Dropping it tells the schedulers that
    /// nothing more will be submitted.
    pub fn orchestrator<'p, P: Platform>(
        &self,
        platform: &'p P,
    ) -> Result<Orchestrator<'r, 'p, P>, ClaimError> {
        let store = self
            .orchestrator
            .lock()
            .take()
            .ok_or(ClaimError::OrchestratorTaken)?;
        Ok(Orchestrator::new(self.t.orch(), platform, store))
    }

    /// The handle of scheduler `index` (one thread each).
    pub fn scheduler<'p, P: Platform>(
        &self,
        index: u8,
        platform: &'p P,
    ) -> Result<Scheduler<'r, 'p, P>, ClaimError> {
        let ctl = self
            .t
            .sched()
            .get(index as usize)
            .ok_or(ClaimError::NoSuchScheduler {
                index,
                schedulers: self.t.cfg().schedulers,
            })?;
        if self.t.cfg().completion == CompletionMode::Ring {
            let needed = self.t.cfg().completion_queue_capacity();
            if platform
                .completion_queue(index)
                .is_none_or(|q| q.capacity() < needed)
            {
                return Err(ClaimError::NoCompletionQueue { index, needed });
            }
        }
        let store = self.deferred[index as usize]
            .lock()
            .take()
            .ok_or(ClaimError::SchedulerTaken { index })?;
        Ok(Scheduler::new(*self.t, platform, index, ctl, store))
    }

    /// Changes what the runtime measures, effective at each thread's next check.
    pub fn set_profile_level(&self, level: ProfileLevel) {
        self.t.shared().prof().set_level(level);
    }

    /// Makes the profile ring stream: the returned drain takes records out while the run
    /// goes, freeing their cells, and a submit that finds no cell free waits for it (bounded
    /// by `submit_timeout_us`, then the record is lost and counted in
    /// [`RunReport::profile_dropped`]). So a run keeps a record per task however many tasks
    /// it has. `None` if the ring has a drain already, or a record was claimed before: take
    /// it before the first submit. The drain borrows the region, not the runtime, so it may
    /// be kept beside the runtime (in the same struct, say).
    pub fn record_drain(&self) -> Option<RecordDrain<'r>> {
        let t = &self.t;
        t.shared()
            .prof()
            .stream()
            .then(|| RecordDrain::new(**t, t.records()))
    }

    /// The records of the tasks finished so far (exact once every thread has stopped), in
    /// the order the tasks were submitted, that are still in the profile ring (a drain took
    /// the others). A task has one if profiling was at `Tasks` both when it was submitted
    /// and when it finished.
    pub fn task_records(&self) -> impl Iterator<Item = TaskRecord> + '_ {
        self.t.shared().prof().records(self.t.records())
    }

    /// Phase counters of scheduler `index`.
    pub fn phase_counters(&self, index: u8) -> Option<PhaseCounters> {
        self.t
            .sched()
            .get(index as usize)
            .map(SchedCtl::phase_counters)
    }

    /// Every submitted task that had not finished and was not in a deferred set: what it
    /// waited for ([`Stall::Producers`], [`Stall::Ready`]). With what the schedulers told
    /// [`Platform::stalled`] as they stopped, this says why a failed run's tasks did not
    /// finish. Exact once every thread has stopped.
    pub fn stalls(&self) -> impl Iterator<Item = Stall> + '_ {
        self.t.stalls()
    }

    /// Whether the orchestrator closed its submissions (its handle was dropped): with no
    /// live task and submissions open, a stalled run waited on its orchestrator
    /// ([`crate::StallKind::OrchestratorStarved`]).
    pub fn submissions_closed(&self) -> bool {
        self.t.shared().submissions_closed()
    }

    /// The producers of `task` that had not finished. Exact once every thread has stopped.
    pub fn producers_of(&self, task: TaskId) -> impl Iterator<Item = TaskId> + '_ {
        self.t.producers_of(task)
    }

    /// The finished producers of `task` when it waits for more producers than
    /// [`Runtime::producers_of`] names: one of them finished without releasing it (a lost
    /// release, which only a runtime fault leaves), so it can never run. Empty otherwise.
    /// Exact once every thread has stopped.
    pub fn finished_producers_of(&self, task: TaskId) -> impl Iterator<Item = TaskId> + '_ {
        self.t.finished_producers_of(task)
    }

    /// Completion-queue counters and cancellations of scheduler `index`.
    pub fn queue_counters(&self, index: u8) -> Option<QueueReport> {
        self.t
            .sched()
            .get(index as usize)
            .map(SchedCtl::queue_report)
    }

    /// The first fatal error, if the run has failed.
    pub fn error(&self) -> Option<FatalError> {
        self.t.shared().status().get()
    }

    /// Fails the run with [`crate::FatalKind::Aborted`] and `code`; every thread stops promptly.
    /// Returns whether this was the run's first error.
    pub fn abort(&self, code: u64) -> bool {
        self.t
            .shared()
            .status()
            .fail(FatalError::new(FatalCause::Aborted { code }))
    }

    /// Reads what the run did. Exact once every thread has stopped.
    pub fn report(&self) -> RunReport {
        let t = &self.t;
        let mut latency = LatencyHistogram::default();
        let (mut dispatched, mut loops, mut cancelled, mut skipped) = (0, 0, 0, 0);
        for s in t.sched() {
            cancelled += s.cancelled.load(Ordering::Relaxed);
            skipped += s.skipped.load(Ordering::Relaxed);
            latency.merge(&s.histogram());
            dispatched += s.dispatched.load(Ordering::Relaxed);
            loops += s.loops.load(Ordering::Relaxed);
        }
        let live_slots = t
            .rings()
            .iter()
            .map(|r| r.next.0.load(Ordering::Acquire) - r.retired())
            .sum();
        RunReport {
            profile_dropped: t.shared().prof().dropped(t.records().len()),
            submitted: t.shared().submitted(),
            finished: t.finished(),
            dispatched,
            loops,
            live_slots,
            error: self.error(),
            latency,
            cancelled,
            skipped,
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::orchestrator::TaskSpec;
    use crate::testing::owned::NoCores;
    use std::vec::Vec;

    use crate::testing::Block;

    #[test]
    fn a_formatted_region_runs_a_task_and_reports_it() {
        let cfg = Config::tiny();
        let size = RegionLayout::new(&cfg).unwrap().size();
        let mut blocks = std::vec![Block([0xa5; 64]); size / 64];
        let rt = Runtime::init(bytemuck::cast_slice_mut(&mut blocks), cfg).unwrap();
        let mut o = rt.orchestrator(&NoCores).unwrap();
        let s = rt.scheduler(0, &NoCores).unwrap();
        let ids: Vec<_> = (0..3)
            .map(|_| o.submit(&TaskSpec::dummy()).unwrap())
            .collect();
        assert!(o.submit(&TaskSpec::dummy().deps(&ids[..2])).is_ok());
        drop(o);
        assert_eq!(s.run(), Ok(()));
        let r = rt.report();
        assert_eq!(
            (r.submitted, r.finished, r.live_slots, r.error),
            (4, 4, 0, None)
        );
    }

    #[test]
    fn ring_mode_on_a_platform_without_completion_queues_is_refused() {
        let cfg = Config {
            completion: crate::region::config::CompletionMode::Ring,
            ..Config::tiny()
        };
        let size = RegionLayout::new(&cfg).unwrap().size();
        let mut blocks = std::vec![Block([0; 64]); size / 64];
        let rt = Runtime::init(bytemuck::cast_slice_mut(&mut blocks), cfg).unwrap();
        let e = rt.scheduler(0, &NoCores).err().expect("refused");
        assert_eq!(
            e,
            ClaimError::NoCompletionQueue {
                index: 0,
                needed: 8
            }
        );
        assert!(std::format!("{e}").contains("set `completion` to Poll"));
    }
}
