//! Errors of a simulated run: it could not start, or it ran and failed.

use std::any::Any;
use std::sync::{Mutex, PoisonError};

use pto_runtime_core::knob::AnyOf;
use pto_runtime_core::{ClaimError, ConfigError, FatalError, Knob, RunReport};

use crate::access_check::AccessReport;
use crate::kernel_error::KernelFailure;
use crate::run::SimRun;
use crate::stall_report::StallReport;

/// `: ` and the kernel failure, if there is one.
struct KernelNote<'a>(Option<&'a KernelFailure>);

impl std::fmt::Display for KernelNote<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(k) => write!(f, ": {k}"),
            None => Ok(()),
        }
    }
}

/// The stall report on lines of its own, if any task was live.
struct StallNote<'a>(&'a StallReport);

impl std::fmt::Display for StallNote<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0.is_empty() {
            Ok(())
        } else {
            write!(f, "\n{}", self.0)
        }
    }
}

/// Why a simulated run could not start or finish.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// The runtime config (or the region for it) is unusable.
    #[error("invalid runtime config: {0}")]
    Config(#[from] ConfigError),
    /// A handle was taken twice (a bug in the caller's thread layout).
    #[error("{0}")]
    Claim(#[from] ClaimError),
    /// The OS refused a thread.
    #[error("could not start simulator thread {name}: {source}")]
    Spawn {
        /// The thread's name.
        name: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// The host cannot allocate what the simulated run needs.
    #[error("cannot allocate {bytes} bytes for the {what} on this host: lower {}", AnyOf(.knobs))]
    OutOfMemory {
        /// What was being allocated.
        what: &'static str,
        /// Bytes asked for.
        bytes: u64,
        /// The settings that size it.
        knobs: &'static [Knob],
    },
    /// The output heap does not fit the simulated device memory.
    #[error(
        "the output heap does not fit device memory: {0}; raise {memory} or lower {heap}",
        memory = Knob::MemoryBytes,
        heap = Knob::HeapBytes
    )]
    Heap(String),
    /// A simulated engine could not start.
    #[error("could not start a simulated engine: {0}")]
    Engine(crate::engine::EngineError),
    /// A scheduler thread panicked (a runtime bug: the core never panics by design).
    #[error("scheduler thread {0} panicked")]
    SchedulerPanicked(u8),
    /// The run started and failed: `error` is its first fatal error, and `run` keeps what the
    /// run left (its report, task records, memory and what the orchestration returned).
    #[error(
        "the run failed: {error}{}{}",
        KernelNote(run.kernel.as_ref()),
        StallNote(&run.stalls)
    )]
    Run {
        /// The run's first fatal error (also in `run.report.error`).
        error: FatalError,
        /// What the failed run left.
        run: Box<FailedRun>,
    },
    /// The run finished, but checking its accesses ([`crate::SimOptions::check_accesses`])
    /// found tasks that touch the same bytes, one writing, with no dependency declared
    /// between them: the result depended on the run's timing.
    #[error("the run's tasks race: {report}")]
    Races {
        /// What the check found (also in `run.accesses`).
        report: Box<AccessReport>,
        /// What the run left.
        run: Box<FailedRun>,
    },
}

impl SimError {
    /// The report of a run that started and failed ([`SimError::Run`], [`SimError::Races`]);
    /// `None` for an error that stopped the run before it started.
    pub fn report(&self) -> Option<&RunReport> {
        match self {
            SimError::Run { run, .. } | SimError::Races { run, .. } => Some(&run.report),
            _ => None,
        }
    }
}

/// What a failed run left behind, for a caller that wants more than its error: the kernel
/// failure, the stalled tasks, and the run itself ([`FailedRun::run`], which it dereferences
/// to): the report (how many tasks finished out of those submitted), the task records, the
/// memory as the tasks left it and the orchestration's return value
/// ([`FailedRun::take_value`]).
pub struct FailedRun {
    /// The kernel failure behind the error, with its message, when the error is a kernel's
    /// (`FatalKind::KernelFailed`) and the simulator recorded it.
    pub kernel: Option<KernelFailure>,
    /// Every live task and what it waited for when the run stopped.
    pub stalls: StallReport,
    /// The run: its report (whose `error` is the run's error), records, counters and memory;
    /// its value is what the orchestration returned, type-erased (behind a lock only so the
    /// error stays `Sync`).
    pub run: SimRun<Mutex<Option<Box<dyn Any + Send>>>>,
}

impl std::ops::Deref for FailedRun {
    type Target = SimRun<Mutex<Option<Box<dyn Any + Send>>>>;
    fn deref(&self) -> &Self::Target {
        &self.run
    }
}

impl FailedRun {
    /// Takes what the orchestration returned, if it is a `T` and was not taken before.
    ///
    /// ```
    /// use pto_runtime_core::{Config, KernelId, TaskSpec, WorkerClass};
    /// use pto_sim::{KernelTable, SimError, SimOptions};
    ///
    /// let kernels = KernelTable::new().with(KernelId(0), "refuses", |_| Err("no".into()));
    /// let err = pto_sim::run(Config::tiny(), kernels, SimOptions::default(), |o| {
    ///     o.submit(&TaskSpec::new(KernelId(0), WorkerClass::Aiv)).ok()
    /// })
    /// .unwrap_err();
    /// let SimError::Run { error, mut run } = err else { panic!("not a run error") };
    /// let task = run.take_value::<Option<pto_runtime_core::TaskId>>().flatten();
    /// assert_eq!(error.task, task, "the error names the task that failed");
    /// ```
    pub fn take_value<T: 'static>(&mut self) -> Option<T> {
        let slot = self
            .run
            .value
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner);
        match slot.take()?.downcast::<T>() {
            Ok(v) => Some(*v),
            Err(other) => {
                *slot = Some(other);
                None
            }
        }
    }
}

impl std::fmt::Debug for FailedRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FailedRun")
            .field("kernel", &self.kernel)
            .field("report", &self.report)
            .field("wall", &self.wall)
            .field("records", &self.records.len())
            .field("phases", &self.phases.len())
            .finish_non_exhaustive()
    }
}
