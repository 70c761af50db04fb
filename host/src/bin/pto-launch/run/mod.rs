//! `pto-launch run`: runs a user's orchestration SO and kernels, on the simulator
//! (`--backend sim`, the default: kernels are shared objects built for this host) or on an
//! NPU through CANN (`--backend npu`: kernels are AICore ELF objects). Either way a kernel's
//! entry is found by its symbol (`pto_kernel_entry`, or `FILE:SYMBOL`); kernels are given as
//! a directory (every `*.so`, or `*.o` for an NPU, ids in name order) or a comma-separated
//! list (ids in list order), and the orchestration and kernels use the same C ABIs (`aicpu/include/pto_aicpu.h`, `device-sys/aicore/pto_aicore.h`). Buffers are device
//! memory the orchestration's arguments may name; after a successful run each is written to
//! `--output DIR` as `buffer_<n>.bin`; `--trace FILE` writes the task records as a Chrome
//! trace. With `--ranks N` this process spawns N ranks of itself (`pto_host::program_ranks`):
//! each makes its window (shared memory on the simulator, HCCL on NPUs), runs the program
//! with arguments that may name the windows, and writes `DIR/rank_<r>/buffer_<n>.bin`.

mod config;
mod golden;
mod returned;
mod sim;
mod spec;

#[cfg(feature = "cann")]
mod npu;

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, value_parser};
use serde::Serialize;

use pto_host::launch::{CommandJob, parse_rendezvous, spawn_command_job};
use pto_host::orch_config::{HEAP_BYTES_MAX, HEAP_BYTES_MIN};
use pto_host::program_ranks::{ProgramRank, RankWindows};
use pto_runtime_core::{MAX_ARGS, MAX_CONDITIONS, MAX_DEPS, MAX_TENSORS};

use crate::error::CliError;
use crate::numbers;
use config::RunConfig;
use spec::bad;

/// `pto-launch run` flags.
#[derive(Args, Debug)]
pub struct RunArgs {
    /// Where to run: `sim` (the simulator; kernels are shared objects of this host) or `npu`
    /// (an Ascend NPU through CANN; kernels are AICore ELF objects).
    #[arg(long, value_enum, default_value = "sim")]
    pub backend: RunBackend,
    /// ACL's device id, with --backend npu (0 to 63; ASCEND_RT_VISIBLE_DEVICES applies).
    #[arg(long, value_parser = value_parser!(i32).range(0..64))]
    pub device: Option<i32>,
    /// The orchestration SO (exports `pto_orchestrate`).
    #[arg(long, value_name = "SO")]
    pub orchestration: PathBuf,
    /// The kernels, ids in order: a directory (its `*.so`; `*.o` with --backend npu; in name
    /// order) or a comma-separated list of files, each `FILE` (entry `pto_kernel_entry`) or
    /// `FILE:SYMBOL`.
    #[arg(long, value_name = "DIR|K0[:SYM],K1,...")]
    pub kernels: String,
    /// A device buffer: `BYTES` (zeroed) or `BYTES=FILE` (its first bytes from FILE);
    /// buffer n is the n-th given.
    #[arg(long = "buffer", value_name = "BYTES[=FILE]")]
    pub buffers: Vec<String>,
    /// An orchestration argument: a number (decimal, `0x` hex, or negative decimal, passed
    /// as its 64-bit two's complement), `buffer:N` (buffer N's device address), `kernel:N`
    /// (kernel N's id), or with --ranks a rank's window (see --ranks); in order.
    #[arg(
        long = "arg",
        value_name = "V|buffer:N|kernel:N|window:R|...",
        allow_negative_numbers = true
    )]
    pub args: Vec<String>,
    /// Writes each buffer to `DIR/buffer_<n>.bin` after a successful run.
    #[arg(long, value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// libpto_aicpu.so, with --backend npu (default: $PTO_AICPU_SO).
    #[arg(long, value_name = "SO")]
    pub aicpu_so: Option<PathBuf>,
    /// libpto_dispatcher.so, with --backend npu (default: $PTO_DISPATCHER_SO).
    #[arg(long, value_name = "SO")]
    pub dispatcher_so: Option<PathBuf>,
    /// The AICore executor object, with --backend npu (default: $PTO_AICORE_EXECUTOR).
    #[arg(long, value_name = "OBJ")]
    pub aicore_executor: Option<PathBuf>,
    /// A directory to look for CANN's libraries in first, with --backend npu.
    #[arg(long, value_name = "DIR")]
    pub cann_dir: Option<PathBuf>,
    /// AICore clusters (1 AIC + 2 AIV each; 0: all the stream allows on an NPU, 1 on the
    /// simulator).
    #[arg(long, default_value_t = 0, value_parser = value_parser!(u32).range(0..=25))]
    pub clusters: u32,
    /// AICPU scheduler threads (1 to 5; one more orchestrates).
    #[arg(long, default_value_t = 2, value_parser = value_parser!(u8).range(1..=5))]
    pub schedulers: u8,
    /// Task slots per ring: a power of two from 4 to 1048576 (default: the orchestration
    /// SO's declaration, else 1024).
    #[arg(long, value_parser = numbers::task_window)]
    pub task_window: Option<u32>,
    /// Each ring's output heap in bytes, 64 to 2^34 (default: the SO's declaration, else
    /// 1 MiB).
    #[arg(long, value_parser = value_parser!(u64).range(HEAP_BYTES_MIN..=HEAP_BYTES_MAX))]
    pub heap_bytes: Option<u64>,
    /// Most dependencies per task, named and found through tensor arguments, 1 to 64
    /// (default: the SO's declaration, else 16).
    #[arg(long, value_parser = value_parser!(u16).range(1..=i64::from(MAX_DEPS)))]
    pub max_deps: Option<u16>,
    /// Most tensor arguments per task, 0 to 32 (default: the SO's declaration, else 8); with
    /// --max-args at most 48, a payload slot's argument words.
    #[arg(long, value_parser = value_parser!(u16).range(0..=i64::from(MAX_TENSORS)))]
    pub max_tensors: Option<u16>,
    /// Most scalar arguments per task, 0 to 32 (default: the SO's declaration, else 16).
    #[arg(long, value_parser = value_parser!(u16).range(0..=i64::from(MAX_ARGS)))]
    pub max_args: Option<u16>,
    /// How long a task may run before the run fails, in ms (1 to 10000).
    #[arg(long, default_value_t = 10_000, value_parser = value_parser!(u64).range(1..=10_000))]
    pub task_timeout_ms: u64,
    /// How long a submit (or an alloc) waits for room in a full task window (or heap) before
    /// the orchestration is refused, in ms (1 to 10000).
    #[arg(long, default_value_t = 10_000, value_parser = value_parser!(u64).range(1..=10_000))]
    pub submit_timeout_ms: u64,
    /// Most deferred conditions one task may register (its lanes together: a MIX task's
    /// three kernels count as one task), 1 to 64; a payload slot carries 7 per kernel.
    #[arg(long, default_value_t = 16, value_parser = value_parser!(u16).range(1..=i64::from(MAX_CONDITIONS)))]
    pub max_conditions: u16,
    /// How long a finished task's deferred conditions may take to hold before the run
    /// fails, in ms (1 to 10000).
    #[arg(long, default_value_t = 10_000, value_parser = value_parser!(u64).range(1..=10_000))]
    pub deferred_timeout_ms: u64,
    /// On an NPU, the device's watchdog: a run still going after it is aborted and reported
    /// with its stall class, in ms (1 to 30000, at least each timeout above; default 15000).
    #[arg(long, value_parser = value_parser!(u64).range(1..=30_000))]
    pub device_watchdog_ms: Option<u64>,
    /// The device counter's ticks per µs (0: the AICPU reads its counter's frequency; set
    /// it only for a fake CANN on a host whose counter does not say).
    #[arg(long, default_value_t = 0, hide = true)]
    pub device_ticks_per_us: u64,
    /// Writes the run's task records as a Chrome trace (open it in Perfetto): the run
    /// profiles at `Tasks` and keeps a record per task, on either backend.
    #[arg(long, value_name = "FILE.json")]
    pub trace: Option<PathBuf>,
    /// Cells of the profile ring --trace records into (1 to 1048576; default 65536). The
    /// records stream out while the run goes (to a host thread on the simulator, through the
    /// AICPU's record pump to the host on an NPU), so every task keeps its record: a submit
    /// that finds the ring full waits for them.
    #[arg(long, value_name = "N", value_parser = value_parser!(u32).range(1..=i64::from(TRACE_RECORDS_MAX)))]
    pub trace_records: Option<u32>,
    /// Ranks, one process each (1 to 64): each runs the program, its arguments may name
    /// `rank`, `ranks`, `window` (its own window's address), `window:R` (rank R's window as
    /// its kernels reach it), `window:+K` (the window K ranks on, around the ring) and
    /// `window-bytes`. On NPUs rank r uses device --device + r.
    #[arg(long, default_value_t = 1, value_parser = value_parser!(u32).range(1..=64))]
    pub ranks: u32,
    /// Bytes of each rank's window, with --ranks (64 to 2^34).
    #[arg(long, default_value_t = 1 << 20, value_parser = value_parser!(u64).range(64..=1 << 34))]
    pub window_bytes: u64,
    /// Bound of a job of --ranks, in seconds (1 to 86400): forming it, every wait between
    /// ranks, and the whole job (a rank still running past it is killed).
    #[arg(long, default_value_t = 300, value_parser = value_parser!(u64).range(1..=86_400))]
    pub timeout_s: u64,
    /// Where rank 0 of an NPU job listens (the launcher gives its ranks a free port).
    #[arg(long, value_name = "tcp://HOST:PORT", hide = true)]
    pub rendezvous: Option<String>,
    /// Golden checks of the buffers after the run.
    #[command(flatten)]
    pub golden: golden::GoldenArgs,
    /// Check that no two tasks touch the same bytes, one writing, with no dependency
    /// declared between them (with --backend sim: C kernels count as touching the tiles
    /// they declare); such a run fails naming both tasks.
    #[arg(long)]
    pub check_accesses: bool,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Task records `--trace` keeps unless `--trace-records` says otherwise.
const TRACE_RECORDS: u32 = 65_536;
/// Most task records `--trace-records` may ask for.
const TRACE_RECORDS_MAX: u32 = 1 << 20;

/// `--backend` values of `run`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RunBackend {
    /// The simulator, in this process: kernels are shared objects built for this host.
    Sim,
    /// An Ascend NPU through CANN, loaded at run time: kernels are AICore ELF objects.
    Npu,
}

/// What a run reports.
#[derive(Debug, Serialize)]
pub struct RunResults {
    backend: RunBackend,
    /// This rank, in a job of --ranks.
    rank: Option<u32>,
    /// The NPU's device id (`npu` only).
    device: Option<i32>,
    /// The session's run number (`npu` only).
    run: Option<u64>,
    tasks_finished: u64,
    /// Of them, tasks skipped: their predicate was false at dispatch.
    tasks_skipped: u64,
    outputs: Vec<PathBuf>,
    /// The trace written, the records in it and the tasks the run finished.
    trace: Option<(PathBuf, usize, u64)>,
    /// Each --expect's comparison.
    golden: Vec<pto_host::golden::GoldenCheck>,
    /// With --check-accesses: tasks checked, and what the check found besides races (a run
    /// whose tasks race fails).
    accesses: Option<AccessSummary>,
}

/// What `--check-accesses` found in a run that passed it.
#[derive(Debug, Serialize)]
pub struct AccessSummary {
    /// Tasks checked.
    tasks: usize,
    /// Of them, tasks of C kernels, checked by the tiles they declared.
    declared_only: usize,
    /// Tasks that touched memory outside the tensors they declared.
    undeclared: usize,
}

impl From<&pto_sim::AccessReport> for AccessSummary {
    fn from(r: &pto_sim::AccessReport) -> Self {
        AccessSummary {
            tasks: r.tasks,
            declared_only: r.opaque,
            undeclared: r.undeclared_count,
        }
    }
}

impl std::fmt::Display for RunResults {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(r) = self.rank {
            write!(f, "rank {r}: ")?;
        }
        match (self.device, self.run) {
            (Some(d), Some(r)) => write!(f, "device {d}: run {r} ")?,
            _ => write!(f, "simulator: ")?,
        }
        write!(f, "finished {} tasks", self.tasks_finished)?;
        if self.tasks_skipped > 0 {
            write!(f, " ({} skipped by their predicate)", self.tasks_skipped)?;
        }
        for o in &self.outputs {
            write!(f, "\n  wrote {}", o.display())?;
        }
        if let Some((path, n, total)) = &self.trace {
            write!(
                f,
                "\n  wrote {} ({n} of {total} task records)",
                path.display()
            )?;
            if (*n as u64) < *total {
                write!(
                    f,
                    "\n  the run finished {total} tasks and the trace kept {n}: the records \
                     streamed out fell behind for longer than --submit-timeout-ms; raise \
                     --trace-records (the ring's cells) to give them slack"
                )?;
            }
        }
        for g in &self.golden {
            write!(f, "\n  {g}")?;
        }
        if let Some(a) = &self.accesses {
            write!(
                f,
                "\n  access check: no two of {} tasks race ({} of them C kernels, checked by \
                 the tiles they declared)",
                a.tasks, a.declared_only
            )?;
            if a.undeclared > 0 {
                write!(
                    f,
                    "; {} touched memory outside the tensors they declared",
                    a.undeclared
                )?;
            }
        }
        Ok(())
    }
}

/// The flags that mean something only on an NPU, if any is given with `--backend sim`.
fn npu_only_flag(a: &RunArgs) -> Option<&'static str> {
    [
        (a.device.is_some(), "--device"),
        (a.aicpu_so.is_some(), "--aicpu-so"),
        (a.dispatcher_so.is_some(), "--dispatcher-so"),
        (a.aicore_executor.is_some(), "--aicore-executor"),
        (a.cann_dir.is_some(), "--cann-dir"),
        (a.device_ticks_per_us != 0, "--device-ticks-per-us"),
        (a.device_watchdog_ms.is_some(), "--device-watchdog-ms"),
    ]
    .into_iter()
    .find_map(|(given, flag)| given.then_some(flag))
}

impl RunArgs {
    /// Task records the run keeps: 0 without --trace.
    pub fn records(&self) -> u32 {
        match &self.trace {
            Some(_) => self.trace_records.unwrap_or(TRACE_RECORDS),
            None => 0,
        }
    }
}

/// Runs `pto-launch run`: alone, as the rank the environment names, or as the launcher of
/// `--ranks` ranks.
pub fn run(a: &RunArgs) -> Result<(), CliError> {
    let result = run_checked(a);
    // A run that failed on its backend printed no results: a script reading --json gets
    // the failure instead, as the envelope with an `error` and no `results`. (A run whose
    // golden check fails printed its results, which say so; bad input stays on stderr.)
    if a.json
        && let Err(e @ CliError::RunFailed { .. }) = &result
    {
        let failure = RunFailure::of(e);
        let config = FailedConfig {
            backend: a.backend,
            orchestration: &a.orchestration,
            kernels: &a.kernels,
        };
        let envelope = pto_host::envelope::Envelope::failed("run", &config, &failure);
        crate::out(&envelope.to_json()?)?;
    }
    result
}

/// What `--json` says a failed run was asked to do.
#[derive(Serialize)]
struct FailedConfig<'a> {
    backend: RunBackend,
    orchestration: &'a std::path::Path,
    kernels: &'a str,
}

/// `--json`'s `error` of a run that failed: the message `error: ` prints, and the stall
/// class (`{"class", "task", "core", "stall"}`) when the run stalled.
#[derive(Serialize)]
struct RunFailure {
    message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    stall_class: Option<pto_runtime_core::StallClass>,
}

impl RunFailure {
    fn of(e: &CliError) -> Self {
        RunFailure {
            message: e.to_string(),
            stall_class: match e {
                CliError::RunFailed { stall, .. } => *stall,
                _ => None,
            },
        }
    }
}

/// [`run`], before its failure is put into JSON.
fn run_checked(a: &RunArgs) -> Result<(), CliError> {
    if a.backend == RunBackend::Sim
        && let Some(flag) = npu_only_flag(a)
    {
        return Err(bad(format!(
            "{flag} applies to --backend npu; this run is on the simulator"
        )));
    }
    if a.check_accesses && a.backend != RunBackend::Sim {
        return Err(bad(
            "--check-accesses applies to --backend sim: the simulator checks accesses".into(),
        ));
    }
    a.golden.tolerance()?;
    if a.trace_records.is_some() && a.trace.is_none() {
        return Err(bad(
            "--trace-records applies to --trace: give --trace FILE.json too".into(),
        ));
    }
    let timeout = Duration::from_secs(a.timeout_s);
    let rendezvous = match &a.rendezvous {
        Some(r) => Some(parse_rendezvous(r).map_err(|e| bad(e.to_string()))?),
        None => None,
    };
    let rank = ProgramRank::from_env(a.window_bytes, timeout, rendezvous)
        .map_err(|e| bad(e.to_string()))?;
    if let Some(r) = &rank
        && a.ranks != 1
        && a.ranks != r.ranks
    {
        return Err(bad(format!(
            "--ranks {} but the job has {} ranks",
            a.ranks, r.ranks
        )));
    }
    // What the flags name is read and checked before anything runs: a launcher checks the
    // arguments against the job's ranks before it starts one.
    let caps = spec::capacities(a)?;
    if rank.is_none() && a.ranks > 1 {
        let placeholder = RankWindows {
            rank: 0,
            bytes: a.window_bytes,
            addresses: vec![0; a.ranks as usize],
        };
        spec::spec(a, a.records(), Some(&placeholder))?;
        let last = i64::from(a.device.unwrap_or(0)) + i64::from(a.ranks) - 1;
        if a.backend == RunBackend::Npu && last > 63 {
            return Err(bad(format!(
                "--ranks {} from --device {} reaches device {last}, past 63: lower either",
                a.ranks,
                a.device.unwrap_or(0)
            )));
        }
        return launch(a, &caps, timeout);
    }
    let results = match a.backend {
        RunBackend::Sim => sim::run(a, rank.as_ref())?,
        RunBackend::Npu => npu(a, rank.as_ref())?,
    };
    crate::print("run", &RunConfig::new(a, &caps), &results, a.json)?;
    golden::verdict(&results.golden)
}

/// Spawns `a.ranks` ranks of this command and reports how each ended.
fn launch(
    a: &RunArgs,
    caps: &pto_host::orch_config::RunCapacities,
    timeout: Duration,
) -> Result<(), CliError> {
    let program = a.orchestration.file_name().map_or_else(
        || a.orchestration.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let on = match a.backend {
        RunBackend::Sim => format!("{} ranks of the simulator", a.ranks),
        RunBackend::Npu => format!(
            "{} ranks on NPUs {} to {}",
            a.ranks,
            a.device.unwrap_or(0),
            a.device.unwrap_or(0) + a.ranks as i32 - 1
        ),
    };
    let job = CommandJob {
        ranks: a.ranks,
        args: std::env::args().skip(1).collect(),
        timeout: timeout + Duration::from_secs(5),
        grace: Duration::from_secs(2),
        json: a.json,
        rendezvous: a.backend == RunBackend::Npu,
        what: format!("ran the program {program} on {on}"),
    };
    let report = spawn_command_job(&job)?;
    crate::print("run", &RunConfig::new(a, caps), &report, a.json)?;
    if let Some(sig) = report.interrupted_by {
        return Err(CliError::Interrupted(sig));
    }
    match report.failed() {
        failed if failed.is_empty() => Ok(()),
        failed => Err(CliError::NotPassed(failed)),
    }
}

#[cfg(feature = "cann")]
fn npu(a: &RunArgs, rank: Option<&ProgramRank>) -> Result<RunResults, CliError> {
    npu::run(a, rank)
}

#[cfg(not(feature = "cann"))]
fn npu(_: &RunArgs, _: Option<&ProgramRank>) -> Result<RunResults, CliError> {
    Err(bad(
        "this pto-launch was built without the `cann` feature: rebuild with it to run on an NPU"
            .into(),
    ))
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        run: super::RunArgs,
    }

    fn args(extra: &[&str]) -> super::RunArgs {
        let base = ["run", "--orchestration", "o.so", "--kernels", "k.bin"];
        Cli::parse_from(base.iter().chain(extra)).run
    }

    #[test]
    fn a_ranks_trace_gets_the_rank_before_its_extension() {
        let a = args(&["--trace", "out/run.json"]);
        assert_eq!(
            super::spec::trace_path(&a, Some(3)).unwrap(),
            std::path::Path::new("out/run.rank3.json")
        );
        assert_eq!(
            super::spec::trace_path(&a, None).unwrap(),
            std::path::Path::new("out/run.json")
        );
        assert_eq!(
            super::spec::trace_path(&args(&["--trace", "t"]), Some(0)).unwrap(),
            std::path::Path::new("t.rank0")
        );
    }

    #[test]
    fn npu_flags_on_the_simulator_are_named() {
        assert_eq!(super::npu_only_flag(&args(&[])), None);
        assert_eq!(
            super::npu_only_flag(&args(&["--device", "2"])),
            Some("--device")
        );
        assert_eq!(
            super::npu_only_flag(&args(&["--cann-dir", "/x"])),
            Some("--cann-dir")
        );
    }
}
