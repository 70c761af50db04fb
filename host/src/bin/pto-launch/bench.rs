//! `pto-launch bench`: its flags, and printing what the library's bench found.

use std::path::PathBuf;

use clap::builder::RangedU64ValueParser;
use clap::value_parser;

use pto_host::bench::{
    BenchError, BenchOptions, BenchOutput, MAX_PENDING, Workload, write_bench_deps,
};
use pto_host::profile::{TraceExtras, write_chrome_trace_with};
use pto_host::progress::Progress;
use pto_runtime_core::{CompletionMode, ProfileLevel};
use pto_sim::{CoreThreads, SimOptions};

use crate::error::CliError;
use crate::print;

#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// Shape of the DAG, a communication workload, the cost model's calibration, or a scene
    /// (`scene:NAME`: a workload shaped like the C++ runtime's benchmark suite, of its own
    /// size, profiled to report the scheduler's overhead share of its makespan).
    #[arg(long, value_enum, default_value = "independent")]
    pub workload: Workload,
    /// Tasks per run (1 to 10^8; default 10 000). Scenes have their own size and refuse it.
    #[arg(long, value_parser = value_parser!(u64).range(1..=100_000_000))]
    pub tasks: Option<u64>,
    /// Scheduler threads (1 to 16).
    #[arg(long, default_value_t = 1, value_parser = value_parser!(u8).range(1..=16))]
    pub schedulers: u8,
    /// Simulated AIC (cube) cores (0 to 128; AIC and AIV together at most 128).
    #[arg(long, default_value_t = 1, value_parser = value_parser!(u16).range(0..=128))]
    pub aic: u16,
    /// Simulated AIV (vector) cores (0 to 128).
    #[arg(long, default_value_t = 2, value_parser = value_parser!(u16).range(0..=128))]
    pub aiv: u16,
    /// Task slots of the one ring the bench uses (a power of two). The default holds a
    /// 10 000-task run, so the orchestrator never waits for reclaim; lower it to measure
    /// back-pressure (2 to 2^20).
    #[arg(long, default_value_t = 16384, value_parser = crate::numbers::bench_task_window)]
    pub task_window: u32,
    /// Measured runs; the figures are their medians (1 to 1000).
    #[arg(long, default_value_t = 5, value_parser = value_parser!(u32).range(1..=1000))]
    pub repeat: u32,
    /// Spin iterations an idle simulated core polls before it parks (0 to 10^9).
    #[arg(long, default_value_t = SimOptions::default().spin_before_park,
          value_parser = value_parser!(u32).range(0..=1_000_000_000))]
    pub spin_before_park: u32,
    /// Let threads float over the host CPUs instead of pinning schedulers and simulated cores
    /// to separate CPUs.
    #[arg(long)]
    pub no_pin: bool,
    /// Seed of the random workload: any 64-bit number, 0 to 2^64 - 1, `0x` hex, or negative
    /// (its two's complement: -1 is 2^64 - 1).
    #[arg(long, default_value_t = 42, value_parser = crate::numbers::bits64,
          allow_negative_numbers = true)]
    pub seed: u64,
    /// Tasks the deferred workload keeps waiting on deferred conditions (0 to 2^20). The
    /// task window and the deferred sets grow to hold them.
    #[arg(long, default_value_t = 1000, value_parser = value_parser!(u64).range(0..=MAX_PENDING))]
    pub pending: u64,
    /// Ranks of the barrier and bootstrap workloads (threads, 1 to 64).
    #[arg(long, default_value_t = 2, value_parser = value_parser!(u32).range(1..=64))]
    pub ranks: u32,
    /// Bytes per message of the transport workload's bandwidth run (4 KiB to 64 MiB: it
    /// moves 256 MiB).
    #[arg(long, default_value_t = 4 << 20,
          value_parser = RangedU64ValueParser::<usize>::new().range(4096..=64 << 20))]
    pub message_bytes: usize,
    /// Tensor arguments per task of the tensors workload (0 to 32).
    #[arg(long = "args", default_value_t = 2, value_parser = value_parser!(u16).range(0..=32))]
    pub tensor_args: u16,
    /// SPMD blocks per task of the spmd workload (1 to 128, at most the vector cores).
    #[arg(long, default_value_t = 2, value_parser = value_parser!(u16).range(1..=128))]
    pub blocks: u16,
    /// What the runtime measures: `counters` adds per-scheduler phase times, `tasks` also one
    /// record per task (a run-time flag: the same binary).
    #[arg(long, value_enum, default_value = "off")]
    pub profile: Profile,
    /// How schedulers learn that cores finished: `poll` reads every busy core's status word
    /// each loop; `ring` has the cores post a record to a completion queue after each FIN
    /// and reads only the cores named.
    #[arg(long, value_enum, default_value = "poll")]
    pub completion: Completion,
    /// Host threads that run the simulated cores: `auto` (one per host CPU the schedulers
    /// and the orchestrator leave, each an event loop over its share of the cores, so no
    /// core parks while another has work), a number (1 to 128), or `per-core` (one thread
    /// per core: kernels truly concurrent, idle cores park).
    #[arg(long, default_value = "auto", value_parser = parse_core_threads)]
    pub core_threads: CoreThreadsArg,
    /// Charge what the chip charges: `a2a3` models status reads, doorbells, dispatch and FIN
    /// latencies as published for the a2a3 chip; `none` lets the host decide.
    #[arg(long, value_enum, default_value = "none")]
    pub silicon: SiliconArg,
    /// With `--silicon`: how long every kernel runs on the modelled chip, in ns (0 to 10^9).
    #[arg(long, default_value_t = 0, value_parser = value_parser!(u64).range(0..=1_000_000_000))]
    pub kernel_ns: u64,
    /// Write the last run's task records as a Chrome trace (open it in Perfetto); implies
    /// `--profile tasks`.
    #[arg(long, value_name = "FILE.json")]
    pub trace: Option<PathBuf>,
    /// Also run the workload once more, unmeasured, and write the dependencies the runtime
    /// wired for each task (named, or found through which tensor argument): Graphviz DOT,
    /// or JSON if FILE ends in `.json`.
    #[arg(long, value_name = "FILE.dot")]
    pub deps: Option<PathBuf>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `--core-threads` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CoreThreadsArg {
    /// One per spare host CPU.
    Auto,
    /// This many.
    Shared(usize),
    /// One per core.
    PerCore,
}

fn parse_core_threads(s: &str) -> Result<CoreThreadsArg, String> {
    match s {
        "auto" => Ok(CoreThreadsArg::Auto),
        "per-core" => Ok(CoreThreadsArg::PerCore),
        n => match n.parse::<usize>() {
            Ok(n @ 1..=128) => Ok(CoreThreadsArg::Shared(n)),
            _ => Err(format!(
                "`{n}` is not `auto`, `per-core` or a thread count from 1 to 128"
            )),
        },
    }
}

/// `--silicon` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SiliconArg {
    /// No cost model: operations cost what the host takes.
    None,
    /// The published a2a3 figures.
    A2a3,
}

/// `--completion` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Completion {
    /// Read every busy core's status word each loop.
    Poll,
    /// Drain a completion queue the cores post to.
    Ring,
}

/// `--profile` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Profile {
    /// Measure nothing.
    Off,
    /// Per-scheduler phase counters.
    Counters,
    /// Counters and one record per task.
    Tasks,
}

impl BenchArgs {
    fn options(&self) -> BenchOptions {
        BenchOptions {
            workload: self.workload,
            tasks: self.tasks.unwrap_or(DEFAULT_TASKS),
            schedulers: self.schedulers,
            aic: self.aic,
            aiv: self.aiv,
            task_window: self.task_window,
            repeat: self.repeat,
            spin_before_park: self.spin_before_park,
            pin: !self.no_pin,
            seed: self.seed,
            pending: self.pending,
            ranks: self.ranks,
            message_bytes: self.message_bytes,
            tensor_args: self.tensor_args,
            blocks: self.blocks,
            profile: match (self.profile, &self.trace) {
                (_, Some(_)) | (Profile::Tasks, None) => ProfileLevel::Tasks,
                (Profile::Counters, None) => ProfileLevel::Counters,
                (Profile::Off, None) => ProfileLevel::Off,
            },
            completion: match self.completion {
                Completion::Poll => CompletionMode::Poll,
                Completion::Ring => CompletionMode::Ring,
            },
            core_threads: match self.core_threads {
                CoreThreadsArg::PerCore => None,
                CoreThreadsArg::Shared(n) => Some(n),
                CoreThreadsArg::Auto => {
                    match CoreThreads::per_spare_cpu(self.schedulers as usize + 1) {
                        CoreThreads::Shared(n) => Some(n),
                        CoreThreads::PerCore => None,
                    }
                }
            },
            silicon: self.silicon == SiliconArg::A2a3,
            kernel_ns: self.kernel_ns,
        }
    }
}

/// Tasks per run unless `--tasks` says otherwise.
const DEFAULT_TASKS: u64 = 10_000;

/// Runs the bench, writes the trace if asked, prints the figures.
pub fn bench(a: &BenchArgs) -> Result<(), CliError> {
    if let (Workload::Scene(_), Some(_)) = (a.workload, a.tasks) {
        return Err(BenchError::Usage(
            "--tasks does not apply to scenes: each has its own size".into(),
        )
        .into());
    }
    let opts = a.options();
    let progress = match opts.workload {
        Workload::Barrier | Workload::Bootstrap | Workload::Transport | Workload::Calibrate => {
            Progress::hidden()
        }
        _ => Progress::on_terminal(opts.tasks, "tasks"),
    };
    let out = opts.run(&progress)?;
    drop(progress);
    match out {
        BenchOutput::Barrier(r) => print("bench", &opts, &r, a.json),
        BenchOutput::Bootstrap(r) => print("bench", &opts, &r, a.json),
        BenchOutput::Transport(r) => print("bench", &opts, &r, a.json),
        BenchOutput::Calibrate(r) => print("bench", &opts, &r, a.json),
        BenchOutput::Dag(out) => {
            let deps = match &a.deps {
                Some(path) => {
                    let (cfg, sim, plan) = opts.setup()?;
                    Some(write_bench_deps(cfg, sim, &plan, path)?)
                }
                None => None,
            };
            if let Some(path) = &a.trace {
                // Streamed event by event: a million-task run's trace is never whole in
                // memory.
                let extras = TraceExtras {
                    queues: &out.queues,
                    dependencies: (!out.producers.is_empty())
                        .then_some((out.producers.as_slice(), out.cores)),
                };
                let kernels = opts.workload.kernels();
                write_chrome_trace_with(path, &out.records, out.ticks_per_us, &kernels, extras)?;
            }
            print("bench", &opts, &out.result, a.json)?;
            if let (Some(path), Some((tasks, deps))) = (a.deps.as_ref().filter(|_| !a.json), deps) {
                println!(
                    "dependency graph: {} ({tasks} tasks, {deps} dependencies)",
                    path.display()
                );
            }
            if let Some(path) = a.trace.as_ref().filter(|_| !a.json) {
                println!(
                    "trace of the last run: {} (open in Perfetto)",
                    path.display()
                );
            }
            Ok(())
        }
    }
}
