//! `pto-launch`: runs PTO jobs and benchmarks.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::builder::RangedU64ValueParser;
use clap::{Parser, Subcommand, value_parser};
use std::time::Duration;

use pto_host::allreduce::{RankJob, poison_reason, run_rank};
use pto_host::bench::{
    BenchPlan, Workload, bench_kernels, run_barrier_bench, run_bench, run_bootstrap_bench,
    run_transport_bench, write_bench_deps,
};
use pto_host::comm::{HUNG_AFTER, sanitize_run_id};
use pto_host::launch::{
    LAUNCHER_PID, Launcher, RankEnd, RankEnv, SpawnPlan, form_job, job_id_from_env,
    master_rendezvous, parse_rendezvous, rank_from_env, spawn_ranks,
};
use pto_host::profile::chrome_trace_named;
use pto_host::signals;
use pto_host::transport::secret::{self, JobSecret};
use pto_runtime_core::{CompletionMode, Config, ProfileLevel};
use pto_sim::SimOptions;

/// Most elements per rank: a one-rank window of 2^31 u64 (16 GiB) is the communicator's limit.
const MAX_ELEMENTS: u64 = 1 << 31;
/// Most tasks the deferred workload keeps waiting: the window (and the region) grows with them.
const MAX_PENDING: u64 = 1 << 20;

/// Launcher of the PTO device runtime (simulator backend by default).
#[derive(Parser, Debug)]
#[command(name = "pto-launch", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Sums a vector across ranks on the simulator: spawns --ranks rank processes (or, when
    /// mpirun, a PMI launcher, Slurm or torchrun started this process, runs as the rank they
    /// name), each checking its result; exits 0 only if every rank passed.
    Allreduce(AllreduceArgs),
    /// Runs a synthetic task DAG on the simulator and reports ns/task, tasks/s and the
    /// ready-to-complete latency (medians over --repeat runs, after one warm-up run).
    Bench(BenchArgs),
}

#[derive(clap::Args, Debug)]
struct AllreduceArgs {
    /// Ranks to spawn (1 to 64; default 2). Under another launcher, its world size; a
    /// different --ranks is an error.
    #[arg(long, value_parser = value_parser!(u32).range(1..=64))]
    ranks: Option<u32>,
    /// Elements (u64) per rank (1 to 2^31; each rank's window holds ranks x elements x 8
    /// bytes, and the job's shared object ranks times that).
    #[arg(long, default_value_t = 4096, value_parser = value_parser!(u64).range(1..=MAX_ELEMENTS))]
    elements: u64,
    /// The communication backend: only the shared-memory simulator here.
    #[arg(long, value_enum, default_value = "sim")]
    backend: Backend,
    /// Names the job's shared objects (default: from the environment, else made up).
    #[arg(long)]
    run_id: Option<String>,
    /// Bound of every wait, in seconds (1 to 86400); a dead or stalled peer is noticed sooner.
    #[arg(long, default_value_t = 30, value_parser = value_parser!(u64).range(1..=86_400))]
    timeout_s: u64,
    /// After a rank fails, how long the others get to stop on their own before the launcher
    /// stops them, in milliseconds (0 to 600000).
    #[arg(long, default_value_t = 2000, value_parser = value_parser!(u64).range(0..=600_000))]
    grace_ms: u64,
    /// Form the job over TCP first: rank 0 listens at this address, the others connect
    /// (default: torchrun's MASTER_ADDR and MASTER_PORT when set). Port 0 lets the launcher
    /// pick a free port for the ranks it spawns.
    #[arg(long, value_name = "tcp://HOST:PORT")]
    rendezvous: Option<String>,
    /// The job secret for the TCP bootstrap, as 32 hex digits in this file (mode 600 or
    /// stricter: a file others may read is refused). Default: PTO_JOB_SECRET from the
    /// environment; the launcher makes one up for the ranks it spawns.
    #[arg(long, value_name = "FILE")]
    secret_file: Option<PathBuf>,
    /// Refuse to form the job without a job secret (also PTO_REQUIRE_SECRET=1).
    #[arg(long)]
    require_secret: bool,
    /// Fault injection: kill this rank (SIGKILL) after --kill-after-ms.
    #[arg(long, hide = true, value_parser = value_parser!(u32).range(0..64))]
    kill_rank: Option<u32>,
    /// Fault injection: when to kill --kill-rank.
    #[arg(long, hide = true, default_value_t = 0, value_parser = value_parser!(u64).range(0..=86_400_000))]
    kill_after_ms: u64,
    /// Fault injection: stop this rank (SIGSTOP) --stop-after-ms after the job's object
    /// appeared.
    #[arg(long, hide = true, value_parser = value_parser!(u32).range(0..64))]
    stop_rank: Option<u32>,
    /// Fault injection: when to stop --stop-rank.
    #[arg(long, hide = true, default_value_t = 0, value_parser = value_parser!(u64).range(0..=86_400_000))]
    stop_after_ms: u64,
}

/// `--backend` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Backend {
    /// POSIX shared memory, one process per rank.
    Sim,
    /// NPU windows through CANN (ACL virtual memory, HCCL rendezvous), loaded at run time.
    Hccl,
}

#[derive(clap::Args, Debug)]
struct BenchArgs {
    /// Shape of the DAG.
    #[arg(long, value_enum, default_value = "independent")]
    workload: Workload,
    /// Tasks per run (1 to 10^8).
    #[arg(long, default_value_t = 10_000, value_parser = value_parser!(u64).range(1..=100_000_000))]
    tasks: u64,
    /// Scheduler threads (1 to 16).
    #[arg(long, default_value_t = 1, value_parser = value_parser!(u8).range(1..=16))]
    schedulers: u8,
    /// Simulated AIC (cube) cores (0 to 128; AIC and AIV together at most 128).
    #[arg(long, default_value_t = 1, value_parser = value_parser!(u16).range(0..=128))]
    aic: u16,
    /// Simulated AIV (vector) cores (0 to 128).
    #[arg(long, default_value_t = 2, value_parser = value_parser!(u16).range(0..=128))]
    aiv: u16,
    /// Task slots of the one ring the bench uses (a power of two). The default holds a
    /// 10 000-task run, so the orchestrator never waits for reclaim; lower it to measure
    /// back-pressure (2 to 2^20).
    #[arg(long, default_value_t = 16384, value_parser = value_parser!(u32).range(2..=1 << 20))]
    task_window: u32,
    /// Measured runs; the figures are their medians (1 to 1000).
    #[arg(long, default_value_t = 5, value_parser = value_parser!(u32).range(1..=1000))]
    repeat: u32,
    /// Spin iterations an idle simulated core polls before it parks (0 to 10^9).
    #[arg(long, default_value_t = SimOptions::default().spin_before_park,
          value_parser = value_parser!(u32).range(0..=1_000_000_000))]
    spin_before_park: u32,
    /// Let threads float over the host CPUs instead of pinning schedulers and simulated cores
    /// to separate CPUs.
    #[arg(long)]
    no_pin: bool,
    /// Seed of the random workload (any 64-bit number).
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Tasks the deferred workload keeps waiting on deferred conditions (0 to 2^20). The
    /// task window and the deferred sets grow to hold them.
    #[arg(long, default_value_t = 1000, value_parser = value_parser!(u64).range(0..=MAX_PENDING))]
    pending: u64,
    /// Ranks of the barrier and bootstrap workloads (threads, 1 to 64).
    #[arg(long, default_value_t = 2, value_parser = value_parser!(u32).range(1..=64))]
    ranks: u32,
    /// Bytes per message of the transport workload's bandwidth run (4 KiB to 64 MiB: it
    /// moves 256 MiB).
    #[arg(long, default_value_t = 4 << 20,
          value_parser = RangedU64ValueParser::<usize>::new().range(4096..=64 << 20))]
    message_bytes: usize,
    /// Tensor arguments per task of the tensors workload (0 to 32).
    #[arg(long = "args", default_value_t = 2, value_parser = value_parser!(u16).range(0..=32))]
    tensor_args: u16,
    /// What the runtime measures: `counters` adds per-scheduler phase times, `tasks` also one
    /// record per task (a run-time flag: the same binary).
    #[arg(long, value_enum, default_value = "off")]
    profile: Profile,
    /// How schedulers learn that cores finished: `poll` reads every busy core's status word
    /// each loop; `ring` has the cores post a record to a completion queue after each FIN
    /// and reads only the cores named.
    #[arg(long, value_enum, default_value = "poll")]
    completion: Completion,
    /// Write the last run's task records as a Chrome trace (open it in Perfetto); implies
    /// `--profile tasks`.
    #[arg(long, value_name = "FILE.json")]
    trace: Option<PathBuf>,
    /// Also run the workload once more, unmeasured, and write the dependencies the runtime
    /// wired for each task (named, or found through which tensor argument): Graphviz DOT,
    /// or JSON if FILE ends in `.json`.
    #[arg(long, value_name = "FILE.dot")]
    deps: Option<PathBuf>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// `--completion` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Completion {
    /// Read every busy core's status word each loop.
    Poll,
    /// Drain a completion queue the cores post to.
    Ring,
}

/// `--profile` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Profile {
    /// Measure nothing.
    Off,
    /// Per-scheduler phase counters.
    Counters,
    /// Counters and one record per task.
    Tasks,
}

fn main() -> ExitCode {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Bench(a) => bench(&a),
        Command::Allreduce(a) => allreduce(&a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The hccl backend: CANN must be present; the kernels then need the device image.
fn hccl_backend() -> Result<(), String> {
    #[cfg(feature = "cann")]
    {
        let cann = pto_device_sys::cann::Cann::load().map_err(|e| e.to_string())?;
        Err(format!(
            "CANN found ({}), but this build cannot launch the allreduce kernels on NPUs yet: \
             that needs the device image. The hccl backend's windows are available to \
             programs through pto_host::comm::hccl",
            cann.libraries()[0].display()
        ))
    }
    #[cfg(not(feature = "cann"))]
    Err(
        "this pto-launch was built without the `cann` feature: rebuild with it for the hccl \
         backend"
            .into(),
    )
}

fn allreduce(a: &AllreduceArgs) -> Result<(), String> {
    if a.backend == Backend::Hccl {
        return hccl_backend();
    }
    // At most a day (the parser's range): no sum below can overflow.
    let timeout = Duration::from_secs(a.timeout_s);
    let env = rank_from_env(|k| std::env::var(k).ok()).map_err(|e| e.to_string())?;
    match env {
        Some(env) => rank(a, &env, timeout),
        None => launch(a, timeout),
    }
}

/// A rank: of our own spawn, or of another launcher.
fn rank(a: &AllreduceArgs, env: &RankEnv, timeout: Duration) -> Result<(), String> {
    let (rank_var, size_var) = env.launcher.variables();
    if let Some(n) = a.ranks
        && n != env.ranks
    {
        return Err(format!(
            "--ranks {n}, but the launcher started {} ranks ({size_var}={}): drop --ranks or \
             ask the launcher for {n} processes",
            env.ranks, env.ranks
        ));
    }
    // A terminating signal before every rank mapped the job's object removes its name.
    signals::remove_on_signal().map_err(|e| format!("cannot install signal handlers: {e}"))?;
    let launcher = std::env::var(LAUNCHER_PID).ok();
    let watched = env.launcher == Launcher::PtoLaunch && launcher.is_some();
    if let Some(pid) = launcher.filter(|_| watched) {
        let pid = pid
            .parse()
            .map_err(|_| format!("{LAUNCHER_PID}={pid:?} is not a process id"))?;
        signals::die_with_parent(pid).map_err(|e| format!("rank {}: {e}", env.rank))?;
    }
    let rendezvous = match (&a.rendezvous, &env.master) {
        (Some(r), _) => Some(parse_rendezvous(r).map_err(|e| e.to_string())?),
        (None, Some((host, port))) => {
            Some(master_rendezvous(host, *port).map_err(|e| e.to_string())?)
        }
        (None, None) => None,
    };
    if let Some(at) = rendezvous
        && at.port() == 0
    {
        return Err(format!(
            "rank {} ({rank_var}): rendezvous tcp://{at} has port 0, which cannot work when \
             another launcher started the ranks: every rank must dial the one port rank 0 \
             listens on, and only pto-launch, spawning the ranks itself, can pick a free one \
             for them. Give a port, e.g. --rendezvous tcp://{}:29500",
            env.rank,
            at.ip()
        ));
    }
    let run_id = match (
        &a.run_id,
        job_id_from_env(|k| std::env::var(k).ok()),
        rendezvous,
    ) {
        (Some(id), _, _) => sanitize_run_id(id).map_err(|e| e.to_string())?,
        (None, Some(id), _) => id,
        // The address's dots and colons become underscores: a valid run id.
        (None, None, Some(at)) => {
            sanitize_run_id(&format!("rdzv-{at}")).map_err(|e| e.to_string())?
        }
        (None, None, None) => {
            return Err(
                "a rank needs a name its peers share to find them: pass --run-id (or \
                        set PTO_RUN_ID) the same on every rank, or --rendezvous"
                    .into(),
            );
        }
    };
    // Over TCP: form the job, check that it fits on one host, and take rank 0's name for the
    // shared objects.
    let formed = match rendezvous {
        Some(at) => {
            let secret = secret::resolve(a.secret_file.as_deref(), a.require_secret)
                .map_err(|e| format!("rank {}: {e}", env.rank))?;
            let f = form_job(env.rank, env.ranks, &run_id, at, timeout, secret)
                .map_err(|e| format!("rank {}: {e}", env.rank))?;
            let hosts = f.distinct_hosts();
            if hosts.len() > 1 {
                return Err(format!(
                    "rank {}: the ranks span {} hosts ({}); the simulator's shared-memory \
                     windows need every rank on one host",
                    env.rank,
                    hosts.len(),
                    hosts.join(", ")
                ));
            }
            Some(f)
        }
        None => None,
    };
    // Rank 0's unique name, unless pto-launch spawned the ranks: it made the run id unique
    // already, and watches the object under that name.
    let run_id = match &formed {
        Some(f) if !watched => f.shm_name.clone(),
        _ => run_id,
    };
    let job = RankJob {
        rank: env.rank,
        ranks: env.ranks,
        run_id,
        elements: a.elements,
        timeout,
        watched,
    };
    let took = run_rank(&job).map_err(|e| format!("rank {}: {e}", env.rank))?;
    if let Some(mut f) = formed {
        f.bootstrap
            .barrier()
            .map_err(|e| format!("rank {}: the closing barrier: {e}", env.rank))?;
    }
    println!(
        "rank {}/{}: sum of {} elements checked in {:.1} ms",
        env.rank,
        env.ranks,
        a.elements,
        took.as_secs_f64() * 1e3
    );
    Ok(())
}

/// The launcher: spawns the ranks, watches them, reports.
fn launch(a: &AllreduceArgs, timeout: Duration) -> Result<(), String> {
    let ranks = a.ranks.unwrap_or(2);
    for (flag, r) in [("--kill-rank", a.kill_rank), ("--stop-rank", a.stop_rank)] {
        if let Some(r) = r
            && r >= ranks
        {
            return Err(format!("{flag} {r}: the job has ranks 0 to {}", ranks - 1));
        }
    }
    let user_id = a.run_id.clone().unwrap_or_else(|| {
        format!(
            "job{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis())
        )
    });
    // The ranks get the sanitised id, so the launcher and they mean one object.
    let run_id = sanitize_run_id(&user_id).map_err(|e| e.to_string())?;
    let mut args = vec![
        "allreduce".into(),
        "--elements".into(),
        a.elements.to_string(),
        "--timeout-s".into(),
        a.timeout_s.to_string(),
    ];
    let mut job_secret = None;
    if let Some(r) = &a.rendezvous {
        // The ranks' secret: the user's, else a fresh one; it reaches them in their
        // environment only.
        job_secret = Some(match &a.secret_file {
            Some(p) => JobSecret::from_file(p).map_err(|e| e.to_string())?,
            None => match JobSecret::from_env().map_err(|e| e.to_string())? {
                Some(s) => s,
                None => JobSecret::generate().map_err(|e| e.to_string())?,
            },
        });
        if a.require_secret {
            args.push("--require-secret".into());
        }
        let mut at = parse_rendezvous(r).map_err(|e| e.to_string())?;
        if at.port() == 0 {
            // Pick a free port for rank 0 to listen on.
            let probe = std::net::TcpListener::bind(at)
                .and_then(|l| l.local_addr())
                .map_err(|e| format!("cannot find a free port at {at}: {e}"))?;
            at.set_port(probe.port());
        }
        args.extend(["--rendezvous".into(), format!("tcp://{at}")]);
    }
    let plan = SpawnPlan {
        ranks,
        args,
        run_id,
        deadline: timeout + Duration::from_secs(5),
        kill: a
            .kill_rank
            .map(|r| (r, Duration::from_millis(a.kill_after_ms))),
        stop: a
            .stop_rank
            .map(|r| (r, Duration::from_millis(a.stop_after_ms))),
        secret: job_secret,
        grace: Duration::from_millis(a.grace_ms),
    };
    let job = spawn_ranks(&plan)?;
    let mut failed = Vec::new();
    for e in &job.exits {
        let how = match e.end {
            RankEnd::Passed => "passed".to_string(),
            RankEnd::Failed(code) => format!("failed (exit code {code})"),
            RankEnd::Killed(sig) => format!("was killed by signal {sig}"),
            RankEnd::TimedOut => "was still running at the deadline and was killed".to_string(),
            RankEnd::Stopped => {
                "was stopped by the launcher: another rank had failed and it had not".to_string()
            }
            RankEnd::NotJoined => "was stopped by the launcher: the job was given up before \
                                   this rank could join it"
                .to_string(),
            RankEnd::Unresponsive => format!(
                "stopped responding (hung or stopped: no progress for {} ms) and was killed by \
                 the launcher",
                HUNG_AFTER.as_millis()
            ),
        };
        let poisoned = e.after_poison.map_or(String::new(), |t| {
            format!(", {:.1} ms after the poison", t.as_secs_f64() * 1e3)
        });
        println!(
            "rank {}: {how} after {:.1} ms{poisoned}",
            e.rank,
            e.after.as_secs_f64() * 1e3
        );
        if e.end != RankEnd::Passed {
            failed.push(e.rank);
        }
    }
    if let Some((rank, reason)) = job.culprit {
        println!(
            "the job was given up because rank {rank} {}",
            poison_reason(reason)
        );
    }
    if let (Some(t), Some((rank, _))) = (job.named_after, plan.stop) {
        println!(
            "rank {rank} was named unresponsive {:.1} ms after it was stopped",
            t.as_secs_f64() * 1e3
        );
    }
    if let Some(sig) = job.interrupted {
        eprintln!(
            "error: interrupted by signal {sig}: every rank stopped, the job's shared object removed"
        );
        std::process::exit(128 + sig);
    }
    if failed.is_empty() {
        println!("allreduce over {ranks} ranks: every rank passed");
        Ok(())
    } else {
        Err(format!("rank(s) {failed:?} did not pass"))
    }
}

/// Prints `r` as one JSON object, or as text.
fn print_result<T: serde::Serialize + std::fmt::Display>(r: &T, json: bool) -> Result<(), String> {
    if json {
        let text = serde_json::to_string(r).map_err(|e| format!("cannot encode: {e}"))?;
        println!("{text}");
    } else {
        println!("{r}");
    }
    Ok(())
}

fn bench(a: &BenchArgs) -> Result<(), String> {
    match a.workload {
        Workload::Bootstrap => {
            let r = run_bootstrap_bench(a.ranks, a.repeat).map_err(|e| e.to_string())?;
            return print_result(&r, a.json);
        }
        Workload::Transport => {
            let r = run_transport_bench(a.message_bytes, a.repeat).map_err(|e| e.to_string())?;
            return print_result(&r, a.json);
        }
        Workload::Barrier => {
            let r = run_barrier_bench(a.ranks, 2000).map_err(|e| e.to_string())?;
            return print_result(&r, a.json);
        }
        _ => {}
    }
    let profile = match (a.profile, &a.trace) {
        (_, Some(_)) | (Profile::Tasks, None) => ProfileLevel::Tasks,
        (Profile::Counters, None) => ProfileLevel::Counters,
        (Profile::Off, None) => ProfileLevel::Off,
    };
    let records = if profile == ProfileLevel::Tasks {
        // Room for every task of a run (fanout adds joins), within 4 Mi records.
        (a.tasks.saturating_mul(2).saturating_add(1024)).min(1 << 22) as u32
    } else {
        0
    };
    let deferred = a.workload == Workload::Deferred;
    // Waiting tasks hold their slots and their place in a deferred set: make room for them
    // and for what is in flight around them.
    let slack = 4 * (a.aic as u64 + a.aiv as u64) + 1024;
    if deferred && a.pending > MAX_PENDING {
        return Err(format!(
            "--pending {} is above the bench's limit of {MAX_PENDING} waiting tasks",
            a.pending
        ));
    }
    let task_window = if deferred {
        ((a.pending + slack).next_power_of_two() as u32).max(a.task_window)
    } else {
        a.task_window
    };
    let deferred_capacity = if deferred {
        (a.pending + slack) as u32
    } else {
        Config::default().deferred_capacity
    };
    let max_tensors = if a.workload == Workload::Tensors {
        if a.tensor_args > pto_runtime_core::MAX_TENSORS {
            return Err(format!(
                "--args {} is above the limit of {} tensor arguments per task",
                a.tensor_args,
                pto_runtime_core::MAX_TENSORS
            ));
        }
        a.tensor_args
    } else {
        Config::default().max_tensors
    };
    let cfg = Config {
        rings: 1,
        task_window,
        max_tensors,
        deferred_capacity,
        aic_cores: a.aic,
        aiv_cores: a.aiv,
        schedulers: a.schedulers,
        // The tensors workload measures submit: without the clock read per task that latency
        // stamps take (16 ns on the development VM), as with the runtime's default config.
        record_latency: a.workload != Workload::Tensors,
        profile,
        profile_capacity: records,
        completion: match a.completion {
            Completion::Poll => CompletionMode::Poll,
            Completion::Ring => CompletionMode::Ring,
        },
        ..Config::default()
    };
    let sim = SimOptions {
        spin_before_park: a.spin_before_park,
        pin_threads: !a.no_pin,
        ..SimOptions::default()
    };
    let plan = BenchPlan {
        workload: a.workload,
        tasks: a.tasks,
        repeats: a.repeat,
        seed: a.seed,
        pending: a.pending,
        tensor_args: a.tensor_args,
    };
    let out = run_bench(cfg, sim, &plan).map_err(|e| e.to_string())?;
    let deps = match &a.deps {
        Some(path) => Some(write_bench_deps(cfg, sim, &plan, path).map_err(|e| e.to_string())?),
        None => None,
    };
    if let Some(path) = &a.trace {
        let trace = chrome_trace_named(&out.records, out.ticks_per_us, &bench_kernels());
        let text =
            serde_json::to_string(&trace).map_err(|e| format!("cannot encode the trace: {e}"))?;
        std::fs::write(path, text)
            .map_err(|e| format!("cannot write the trace to {}: {e}", path.display()))?;
    }
    if a.json {
        let s = serde_json::to_string(&out.result)
            .map_err(|e| format!("cannot encode the result: {e}"))?;
        println!("{s}");
    } else {
        println!("{}", out.result);
        if let (Some(path), Some((tasks, deps))) = (&a.deps, deps) {
            println!(
                "dependency graph: {} ({tasks} tasks, {deps} dependencies)",
                path.display()
            );
        }
        if let Some(path) = &a.trace {
            println!(
                "trace of the last run: {} (open in Perfetto)",
                path.display()
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every numeric flag: its subcommand, its range, and how to read it back.
    type Read = fn(&Command) -> Option<u64>;

    fn allreduce(c: &Command) -> Option<&AllreduceArgs> {
        match c {
            Command::Allreduce(a) => Some(a),
            Command::Bench(_) => None,
        }
    }

    fn bench(c: &Command) -> Option<&BenchArgs> {
        match c {
            Command::Bench(b) => Some(b),
            Command::Allreduce(_) => None,
        }
    }

    const FLAGS: &[(&str, &str, u64, u64, Read)] = &[
        ("allreduce", "--ranks", 1, 64, |c| {
            allreduce(c)?.ranks.map(u64::from)
        }),
        ("allreduce", "--elements", 1, MAX_ELEMENTS, |c| {
            Some(allreduce(c)?.elements)
        }),
        ("allreduce", "--timeout-s", 1, 86_400, |c| {
            Some(allreduce(c)?.timeout_s)
        }),
        ("allreduce", "--grace-ms", 0, 600_000, |c| {
            Some(allreduce(c)?.grace_ms)
        }),
        ("allreduce", "--kill-rank", 0, 63, |c| {
            allreduce(c)?.kill_rank.map(u64::from)
        }),
        ("allreduce", "--kill-after-ms", 0, 86_400_000, |c| {
            Some(allreduce(c)?.kill_after_ms)
        }),
        ("allreduce", "--stop-rank", 0, 63, |c| {
            allreduce(c)?.stop_rank.map(u64::from)
        }),
        ("allreduce", "--stop-after-ms", 0, 86_400_000, |c| {
            Some(allreduce(c)?.stop_after_ms)
        }),
        ("bench", "--tasks", 1, 100_000_000, |c| {
            Some(bench(c)?.tasks)
        }),
        ("bench", "--schedulers", 1, 16, |c| {
            Some(bench(c)?.schedulers.into())
        }),
        ("bench", "--aic", 0, 128, |c| Some(bench(c)?.aic.into())),
        ("bench", "--aiv", 0, 128, |c| Some(bench(c)?.aiv.into())),
        ("bench", "--task-window", 2, 1 << 20, |c| {
            Some(bench(c)?.task_window.into())
        }),
        ("bench", "--repeat", 1, 1000, |c| {
            Some(bench(c)?.repeat.into())
        }),
        ("bench", "--spin-before-park", 0, 1_000_000_000, |c| {
            Some(bench(c)?.spin_before_park.into())
        }),
        ("bench", "--seed", 0, u64::MAX, |c| Some(bench(c)?.seed)),
        ("bench", "--pending", 0, MAX_PENDING, |c| {
            Some(bench(c)?.pending)
        }),
        ("bench", "--ranks", 1, 64, |c| Some(bench(c)?.ranks.into())),
        ("bench", "--message-bytes", 4096, 64 << 20, |c| {
            Some(bench(c)?.message_bytes as u64)
        }),
        ("bench", "--args", 0, 32, |c| {
            Some(bench(c)?.tensor_args.into())
        }),
    ];

    #[test]
    fn every_numeric_flag_parses_exactly_its_range_at_0_1_max_and_u64_max() {
        for &(sub, flag, lo, hi, read) in FLAGS {
            for v in [0, 1, hi, hi.saturating_add(1), u64::MAX] {
                let text = v.to_string();
                let parsed = Cli::try_parse_from(["pto-launch", sub, flag, &text]);
                if (lo..=hi).contains(&v) {
                    let cli = parsed.unwrap_or_else(|e| panic!("{sub} {flag} {v}: {e}"));
                    assert_eq!(read(&cli.command), Some(v), "{sub} {flag} {v}: no wrap");
                } else {
                    let e = parsed.expect_err(&format!("{sub} {flag} {v} is refused"));
                    let msg = e.to_string();
                    assert!(
                        msg.contains(flag) && msg.contains(&text),
                        "{sub} {flag} {v}: the error names the flag and value: {msg}"
                    );
                }
            }
        }
    }
}
