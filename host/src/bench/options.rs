//! `pto-launch bench`'s options, and what they make: the runtime's config, the simulator's
//! options and the plan, checked before anything runs.

use pto_runtime_core::{CompletionMode, Config, MAX_TENSORS, ProfileLevel};
use pto_sim::{CoreThreads, RecordStream, Silicon, SimOptions};
use pto_workloads::scene::SceneSize;

use crate::progress::Progress;

use super::{
    BarrierResult, BenchError, BenchOutcome, BenchPlan, BootstrapResult, CalibrationResult,
    TransportResult, Workload, run_barrier_bench, run_bench_with, run_bootstrap_bench,
    run_calibration, run_transport_bench,
};

/// Most records a bench's profile ring holds for a run whose records are all read after it
/// (256 Ki, 16 MiB).
const RECORDS_READ_AFTER: u64 = 1 << 18;
/// Cells of the profile ring of a longer run (64 Ki, 4 MiB), which the simulator drains while
/// the run goes.
const RECORD_RING: u64 = 1 << 16;
/// Most tasks the deferred workload keeps waiting: the window (and the region) grows with them.
pub const MAX_PENDING: u64 = 1 << 20;
/// Barriers the barrier workload times.
const BARRIER_ROUNDS: u32 = 2000;

/// What `pto-launch bench` was asked to run.
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct BenchOptions {
    /// Shape of the DAG, or one of the communication workloads.
    pub workload: Workload,
    /// Tasks per run (a scene has its own size, which replaces it).
    pub tasks: u64,
    /// Scheduler threads.
    pub schedulers: u8,
    /// Simulated AIC (cube) cores.
    pub aic: u16,
    /// Simulated AIV (vector) cores.
    pub aiv: u16,
    /// Task slots of the one ring the bench uses (a power of two; the deferred workload
    /// raises it to hold its pending tasks).
    pub task_window: u32,
    /// Measured runs (after one warm-up run).
    pub repeat: u32,
    /// Spin iterations an idle simulated core polls before it parks.
    pub spin_before_park: u32,
    /// Pin schedulers and simulated cores to separate CPUs.
    pub pin: bool,
    /// Seed of the random workload.
    pub seed: u64,
    /// Tasks the deferred workload keeps waiting.
    pub pending: u64,
    /// Ranks of the barrier and bootstrap workloads.
    pub ranks: u32,
    /// Bytes per message of the transport workload.
    pub message_bytes: usize,
    /// Tensor arguments per task of the tensors workload.
    pub tensor_args: u16,
    /// SPMD blocks per task of the spmd workload.
    pub blocks: u16,
    /// What the runtime measures (`tasks` when a trace is asked for).
    #[serde(serialize_with = "profile_name")]
    pub profile: ProfileLevel,
    /// How schedulers learn that cores finished.
    #[serde(serialize_with = "completion_name")]
    pub completion: CompletionMode,
    /// Host threads running the simulated cores as event loops; `None`: one per core.
    pub core_threads: Option<usize>,
    /// Charge what the a2a3 chip charges (the silicon cost model).
    pub silicon: bool,
    /// With `silicon`: how long every kernel runs, in ns.
    pub kernel_ns: u64,
}

/// The name `--profile` takes for `p`.
pub(crate) fn level_name(p: ProfileLevel) -> &'static str {
    match p {
        ProfileLevel::Off => "off",
        ProfileLevel::Counters => "counters",
        ProfileLevel::Tasks => "tasks",
    }
}

/// The name `--completion` takes for `c`.
pub(crate) fn mode_name(c: CompletionMode) -> &'static str {
    match c {
        CompletionMode::Poll => "poll",
        CompletionMode::Ring => "ring",
    }
}

fn profile_name<S: serde::Serializer>(p: &ProfileLevel, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(level_name(*p))
}

fn completion_name<S: serde::Serializer>(c: &CompletionMode, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(mode_name(*c))
}

/// What a bench found: a task DAG's figures (and its last run's records), or a
/// communication workload's.
pub enum BenchOutput {
    /// A task DAG on the simulator.
    Dag(Box<BenchOutcome>),
    /// The shared-memory barrier.
    Barrier(BarrierResult),
    /// Forming a job over TCP.
    Bootstrap(BootstrapResult),
    /// The TCP transport.
    Transport(TransportResult),
    /// The silicon cost model's calibration.
    Calibrate(CalibrationResult),
}

impl BenchOptions {
    /// The runtime's config, the simulator's options and the plan of a task-DAG workload.
    pub fn setup(&self) -> Result<(Config, SimOptions, BenchPlan), BenchError> {
        let scene = match self.workload {
            Workload::Scene(s) => Some(s),
            _ => None,
        };
        if scene.is_some() && self.kernel_ns > 0 {
            return Err(BenchError::Usage(
                "--kernel-ns does not apply to scenes: their kernels have a duration per kernel id"
                    .into(),
            ));
        }
        // A scene has its own size, and profiles every task for its overhead share.
        let tasks = scene.map_or(self.tasks, |s| s.tasks(SceneSize::Full));
        let profile = if scene.is_some() {
            ProfileLevel::Tasks
        } else {
            self.profile
        };
        // The profile ring: room for every record of a run of up to 16 MiB of them, read
        // after the run, so the timed run does not share its CPUs with a drain (fanout adds
        // joins; the spmd workload keeps a record per block); a longer run streams through
        // 64 Ki cells (4 MiB) that the simulator's drain empties while it goes. Every task
        // keeps its record either way.
        let (records, stream) = if profile == ProfileLevel::Tasks {
            let per_task = if self.workload == Workload::Spmd {
                u64::from(self.blocks.max(1))
            } else {
                2
            };
            let needed = tasks.saturating_mul(per_task).saturating_add(1024);
            if needed <= RECORDS_READ_AFTER {
                (needed as u32, RecordStream::Off)
            } else {
                (RECORD_RING as u32, RecordStream::DEFAULT)
            }
        } else {
            (0, RecordStream::Off)
        };
        if self.kernel_ns > 0 && !self.silicon {
            return Err(BenchError::Usage(
                "--kernel-ns sets the kernels' modelled duration: give --silicon a2a3 too".into(),
            ));
        }
        let deferred = self.workload == Workload::Deferred;
        if deferred && self.pending > MAX_PENDING {
            return Err(BenchError::Usage(format!(
                "--pending {} is above the bench's limit of {MAX_PENDING} waiting tasks",
                self.pending
            )));
        }
        // Waiting tasks hold their slots and their place in a deferred set: make room for
        // them and for what is in flight around them.
        let slack = 4 * (self.aic as u64 + self.aiv as u64) + 1024;
        let task_window = if deferred {
            ((self.pending + slack).next_power_of_two() as u32).max(self.task_window)
        } else {
            self.task_window
        };
        let deferred_capacity = if deferred {
            (self.pending + slack) as u32
        } else {
            Config::default().deferred_capacity
        };
        let max_tensors = if self.workload == Workload::Tensors {
            if self.tensor_args > MAX_TENSORS {
                return Err(BenchError::Usage(format!(
                    "--args {} is above the limit of {MAX_TENSORS} tensor arguments per task",
                    self.tensor_args
                )));
            }
            self.tensor_args
        } else {
            Config::default().max_tensors
        };
        let blocks = if self.workload == Workload::Spmd {
            let cores = if self.aiv > 0 { self.aiv } else { self.aic };
            if self.blocks == 0 || self.blocks > cores {
                return Err(BenchError::Usage(format!(
                    "--blocks {} is not in 1 to the {cores} vector cores (--aiv; --aic if there \
                     are none): a task has at most one block per core of its class",
                    self.blocks
                )));
            }
            self.blocks
        } else {
            1
        };
        let cfg = Config {
            rings: 1,
            task_window,
            max_tensors,
            deferred_capacity,
            aic_cores: self.aic,
            aiv_cores: self.aiv,
            schedulers: self.schedulers,
            // The tensors workload measures submit: without the clock read per task that
            // latency stamps take (16 ns on the development VM), as with the runtime's
            // default config.
            record_latency: self.workload != Workload::Tensors,
            profile,
            profile_capacity: records,
            completion: self.completion,
            ..Config::default()
        };
        let sim = SimOptions {
            spin_before_park: self.spin_before_park,
            pin_threads: self.pin,
            core_threads: self
                .core_threads
                .map_or(CoreThreads::PerCore, CoreThreads::Shared),
            silicon: self.silicon.then(|| Silicon {
                default_kernel: std::time::Duration::from_nanos(self.kernel_ns),
                kernel: scene
                    .map(|s| s.chip_kernel_times(SceneSize::Full))
                    .unwrap_or_default()
                    .into_iter()
                    .collect(),
                ..Silicon::a2a3()
            }),
            records: stream,
            ..SimOptions::default()
        };
        let plan = BenchPlan {
            workload: self.workload,
            tasks,
            repeats: self.repeat,
            seed: self.seed,
            pending: self.pending,
            tensor_args: self.tensor_args,
            blocks,
        };
        Ok((cfg, sim, plan))
    }

    /// Runs the workload; `progress` follows the tasks of a task-DAG workload.
    pub fn run(&self, progress: &Progress) -> Result<BenchOutput, BenchError> {
        Ok(match self.workload {
            Workload::Barrier => {
                BenchOutput::Barrier(run_barrier_bench(self.ranks, BARRIER_ROUNDS)?)
            }
            Workload::Bootstrap => {
                BenchOutput::Bootstrap(run_bootstrap_bench(self.ranks, self.repeat)?)
            }
            Workload::Transport => {
                BenchOutput::Transport(run_transport_bench(self.message_bytes, self.repeat)?)
            }
            Workload::Calibrate => BenchOutput::Calibrate(run_calibration(self.repeat)?),
            _ => {
                let (cfg, sim, plan) = self.setup()?;
                BenchOutput::Dag(Box::new(run_bench_with(cfg, sim, &plan, progress)?))
            }
        })
    }
}
