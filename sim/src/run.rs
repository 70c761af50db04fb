//! One simulated run: region, runtime, cores, scheduler threads and the orchestration.

use std::any::Any;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pto_runtime_core::{
    Config, FatalCause, Orchestrator, PhaseCounters, Platform, QueueReport, RegionLayout,
    RunReport, Runtime, TaskId, TaskRecord,
};

use crate::access_check::AccessReport;
use crate::error::{FailedRun, SimError};
use crate::kernels::KernelTable;
use crate::machine::{CpuPlan, SimMachine, SimOptions};
use crate::memory::DeviceMemory;
use crate::memory_map::MemoryMap;
use crate::platform::SimPlatform;
use crate::record_drain::{Drainer, StopOnDrop};
use crate::region::Region;
use crate::stall_report::StallReport;

/// What a simulated run did: what a run that succeeded returns, and (with the
/// orchestration's value type-erased) what a failed one leaves in [`FailedRun::run`].
#[derive(Debug)]
pub struct SimRun<R> {
    /// The runtime's report (its `error` is `None` when the run succeeded: every task
    /// submitted finished; the run's error when it failed).
    pub report: RunReport,
    /// Wall time from the first submit to the last scheduler stopping.
    pub wall: Duration,
    /// What the orchestration returned.
    pub value: R,
    /// Every task in submission order with its producers, when the run recorded them
    /// ([`SimOptions::record_producers`]; empty otherwise).
    pub producers: Vec<(TaskId, Vec<TaskId>)>,
    /// Whether a drain took the records out of the profile ring while the run went
    /// ([`SimOptions::records`]).
    pub streamed: bool,
    /// The task records (profiling at `Tasks`), in the order the tasks were submitted: one
    /// per task (per block of a task of several) with the default [`SimOptions::records`].
    pub records: Vec<TaskRecord>,
    /// Each scheduler's phase counters (profiling at `Counters` or above).
    pub phases: Vec<PhaseCounters>,
    /// Each scheduler's completion-queue counters (drains at `Counters` or above) and
    /// cancellations.
    pub queues: Vec<QueueReport>,
    /// Clock ticks per microsecond of the timestamps.
    pub ticks_per_us: u64,
    /// The run's memory, as the tasks left it.
    pub memory: Arc<MemoryMap>,
    /// The kernel table the run used (for kernel names: [`KernelTable::name`]).
    pub kernels: KernelTable,
    /// With [`SimOptions::silicon`]: the mean doorbell-to-start and kernel-end-to-FIN
    /// delays the modelled cores took, in ns.
    pub silicon_delays_ns: Option<(f64, f64)>,
    /// With [`SimOptions::silicon`]: how late this host showed the modelled chip's events.
    pub silicon_lateness: Option<crate::Lateness>,
    /// The share of its wall time each scheduler thread ran on a CPU (its CPU time over its
    /// wall time): near 1 when the host gives every busy thread a CPU.
    pub schedulers_on_cpu: Vec<f64>,
    /// Times a scheduler or the orchestrator, idle long enough, gave its CPU away
    /// ([`SimPlatform::yields`]).
    pub yields: u64,
    /// With [`SimOptions::check_accesses`]: what checking the tasks' memory accesses found
    /// (a run with races fails with [`SimError::Races`]; undeclared accesses are only
    /// reported here).
    pub accesses: Option<AccessReport>,
}

/// The orchestrator handle an orchestration function gets.
pub type SimOrchestrator<'r, 'p> = Orchestrator<'r, 'p, SimPlatform>;

/// Runs `orchestration` on the calling thread against a fresh runtime and simulated machine
/// for `cfg`, with `cfg.schedulers` scheduler threads, and waits for every task to finish or
/// the run to fail.
///
/// A run that failed (a kernel error, a timeout, an abort: any fatal error) is
/// [`SimError::Run`], carrying the error and what the run left ([`FailedRun`]).
///
/// ```
/// use pto_runtime_core::{Config, KernelId, TaskSpec, WorkerClass};
/// use pto_sim::{KernelTable, SimOptions};
///
/// let kernels = KernelTable::new().with(KernelId(0), "noop", |_| Ok(()));
/// let out = pto_sim::run(Config::tiny(), kernels, SimOptions::default(), |o| {
///     for _ in 0..3 {
///         o.submit(&TaskSpec::new(KernelId(0), WorkerClass::Aiv)).unwrap();
///     }
/// })?;
/// assert_eq!(out.report.finished, 3);
/// # Ok::<(), pto_sim::SimError>(())
/// ```
pub fn run<R>(
    cfg: Config,
    kernels: KernelTable,
    opts: SimOptions,
    orchestration: impl FnOnce(&mut SimOrchestrator<'_, '_>) -> R + Send,
) -> Result<SimRun<R>, SimError>
where
    R: Send + 'static,
{
    run_with(cfg, kernels, opts, Vec::new(), orchestration)
}

/// Like [`run`], on a machine that can also address the `extra` memory ranges (a multi-rank
/// job's communication windows: kernels and engines reach peers through them, and deferred
/// conditions may watch counters in them).
pub fn run_with<R>(
    cfg: Config,
    kernels: KernelTable,
    opts: SimOptions,
    extra: Vec<Arc<DeviceMemory>>,
    orchestration: impl FnOnce(&mut SimOrchestrator<'_, '_>) -> R + Send,
) -> Result<SimRun<R>, SimError>
where
    R: Send + 'static,
{
    let layout = RegionLayout::new(&cfg)?;
    let mut region = Region::new(layout.size())?;
    let rt = Runtime::init(region.bytes(), cfg)?;
    let pin_threads = opts.pin_threads;
    let name_crashes = opts.name_crashes;
    let stream = opts.records;
    let machine = SimMachine::start_with(&cfg, kernels, opts, extra)?;
    let platform = machine.platform();
    let mut orch = rt.orchestrator(platform)?;
    let mut schedulers = Vec::with_capacity(cfg.schedulers as usize);
    for i in 0..cfg.schedulers {
        schedulers.push(rt.scheduler(i, platform)?);
    }
    let drain_stop = std::sync::atomic::AtomicBool::new(false);
    let (value, started, panicked, drained, open_at_failure, on_cpu) =
        std::thread::scope(|s| -> Result<_, SimError> {
            // Whatever ends this scope stops the drain (which would otherwise keep it open).
            let _stop = StopOnDrop(&drain_stop);
            // Before the orchestrator's first submit: the ring streams from its first record.
            let drainer = Drainer::spawn(s, &rt, stream, &drain_stop)?;
            let mut handles = Vec::new();
            let plan = if pin_threads {
                CpuPlan::new(cfg.schedulers)
            } else {
                None
            };
            for (i, sched) in schedulers.into_iter().enumerate() {
                let plan = plan.clone();
                let name = format!("sched-{i}");
                let h = std::thread::Builder::new()
                    .name(name.clone())
                    .spawn_scoped(s, move || {
                        if let Some(plan) = plan {
                            plan.pin_scheduler(i);
                        }
                        let on_cpu = OnCpu::start();
                        // A fatal error is the run's: its report carries it.
                        let _fatal = sched.run();
                        on_cpu.share()
                    })
                    .map_err(|source| {
                        rt.abort(u64::MAX);
                        SimError::Spawn { name, source }
                    })?;
                handles.push(h);
            }
            let orch_plan = plan.clone();
            let orchestrator = std::thread::Builder::new()
                .name("orchestrator".into())
                .spawn_scoped(s, move || {
                    if let Some(plan) = orch_plan {
                        plan.pin_orchestrator();
                    }
                    // The run's clock starts here, at the first submit, not at the threads'
                    // spawning: a host's thread start-up (100-250 µs on a small VM) is not the
                    // runtime's. Dropping the handle (also on a panic) tells the schedulers the
                    // list is done.
                    let started = Instant::now();
                    let _stack = name_crashes.then(crate::crash::prepare_thread);
                    let _running = crate::crash::orchestration("the orchestration");
                    let value = orchestration(&mut orch);
                    // Failed while the orchestration still ran: its handle was open then.
                    let open_at_failure = orch.error().is_some();
                    (value, started, open_at_failure)
                })
                .map_err(|source| SimError::Spawn {
                    name: "orchestrator".into(),
                    source,
                })?;
            let value = orchestrator.join();
            let mut panicked = None;
            let mut on_cpu = Vec::with_capacity(handles.len());
            for (i, h) in handles.into_iter().enumerate() {
                match h.join() {
                    Ok(share) => on_cpu.push(share),
                    Err(_) => {
                        panicked.get_or_insert(i as u8);
                    }
                }
            }
            let drained = drainer.map(Drainer::finish);
            match value {
                Ok((value, started, open)) => Ok((value, started, panicked, drained, open, on_cpu)),
                // The orchestration's own panic (a failed assertion in a test, say) goes on up.
                Err(payload) => std::panic::resume_unwind(payload),
            }
        })?;
    let wall = started.elapsed();
    let (parks, wakes) = platform.park_counts();
    log::info!(
        "simulated cores parked {parks} times, woken by a doorbell {wakes} times; idle threads yielded {} times",
        platform.yields()
    );
    if let Some(i) = panicked {
        return Err(SimError::SchedulerPanicked(i));
    }
    let mut run = SimRun::gather(&rt, platform, wall, value, drained);
    run.schedulers_on_cpu = on_cpu;
    let Some(error) = run.report.error else {
        return match run.accesses.take() {
            Some(report) if !report.race_free() => {
                run.accesses = Some(report.clone());
                Err(SimError::Races {
                    report: Box::new(report),
                    run: Box::new(FailedRun {
                        stalls: StallReport::default(),
                        kernel: None,
                        run: run.map_value(|value| {
                            Mutex::new(Some(Box::new(value) as Box<dyn Any + Send>))
                        }),
                    }),
                })
            }
            accesses => {
                run.accesses = accesses;
                Ok(run)
            }
        };
    };
    let kernel = match (error.cause, error.task) {
        (FatalCause::KernelFailed { code }, Some(task)) => platform.kernel_failure(task, code),
        _ => None,
    };
    let lanes = std::mem::take(
        &mut *platform
            .stalls
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    );
    Err(SimError::Run {
        error,
        run: Box::new(FailedRun {
            stalls: StallReport::gather(&rt, lanes, open_at_failure),
            kernel,
            run: run.map_value(|value| Mutex::new(Some(Box::new(value) as Box<dyn Any + Send>))),
        }),
    })
}

impl<R> SimRun<R> {
    /// Reads what the run `rt` on `platform` left, `wall` after its first submit; its
    /// records are those its drain took (`drained`), else those left in its ring.
    fn gather(
        rt: &Runtime<'_>,
        platform: &SimPlatform,
        wall: Duration,
        value: R,
        drained: Option<Vec<TaskRecord>>,
    ) -> Self {
        let schedulers = rt.config().schedulers;
        SimRun {
            report: rt.report(),
            wall,
            value,
            producers: platform.producers.as_ref().map_or_else(Vec::new, |p| {
                std::mem::take(&mut *p.lock().unwrap_or_else(std::sync::PoisonError::into_inner))
            }),
            streamed: drained.is_some(),
            records: drained.unwrap_or_else(|| rt.task_records().collect()),
            phases: (0..schedulers)
                .filter_map(|i| rt.phase_counters(i))
                .collect(),
            queues: (0..schedulers)
                .filter_map(|i| rt.queue_counters(i))
                .collect(),
            ticks_per_us: platform.ticks_per_us(),
            memory: platform.memory.clone(),
            kernels: platform.kernels.clone(),
            silicon_delays_ns: platform.silicon_delays_ns(),
            silicon_lateness: platform.silicon_lateness(),
            schedulers_on_cpu: Vec::new(),
            yields: platform.yields(),
            accesses: platform
                .checker
                .as_ref()
                .map(|c| c.report(&platform.kernels)),
        }
    }

    /// The same run with `f` applied to what the orchestration returned.
    pub fn map_value<T>(self, f: impl FnOnce(R) -> T) -> SimRun<T> {
        SimRun {
            report: self.report,
            wall: self.wall,
            value: f(self.value),
            producers: self.producers,
            streamed: self.streamed,
            records: self.records,
            phases: self.phases,
            queues: self.queues,
            ticks_per_us: self.ticks_per_us,
            memory: self.memory,
            kernels: self.kernels,
            silicon_delays_ns: self.silicon_delays_ns,
            silicon_lateness: self.silicon_lateness,
            schedulers_on_cpu: self.schedulers_on_cpu,
            yields: self.yields,
            accesses: self.accesses,
        }
    }
}

/// A thread's CPU time and wall time from its start: how much of a CPU the host gave it.
struct OnCpu {
    cpu: Option<cpu_time::ThreadTime>,
    wall: Instant,
}

impl OnCpu {
    fn start() -> Self {
        OnCpu {
            cpu: cpu_time::ThreadTime::try_now().ok(),
            wall: Instant::now(),
        }
    }

    /// CPU time over wall time so far (1 if the host cannot say).
    fn share(&self) -> f64 {
        let wall = self.wall.elapsed().as_secs_f64();
        match &self.cpu {
            Some(cpu) if wall > 0.0 => (cpu.elapsed().as_secs_f64() / wall).min(1.0),
            _ => 1.0,
        }
    }
}
