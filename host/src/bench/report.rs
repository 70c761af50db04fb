//! Running the bench and reporting its figures.

use std::fmt;

use pto_runtime_core::{CompletionMode, Config, ProfileLevel, QueueReport, TaskId, TaskRecord};

use crate::human;
use crate::profile::ProfileSummary;
use crate::progress::Progress;
use pto_sim::{CoreThreads, LATE_NS, Lateness, Silicon, SimOptions, run};
use pto_trace::{ChipLatencies, overhead_at_no_cost, records_in_ns};

use pto_workloads::Submitter;
use pto_workloads::scene::SceneSize;

use super::overhead::{OverheadShares, overhead_shares, producers_of};
use super::workload::{BenchError, BenchPlan, Workload, submit_workload};

/// The figures of one bench (medians over the repeats).
#[derive(Clone, Debug, serde::Serialize)]
pub struct BenchResult {
    /// The DAG shape.
    pub workload: Workload,
    /// Tasks per run (DUMMY joins included).
    pub tasks: u64,
    /// Tasks kept waiting on deferred conditions (deferred workload only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending: Option<u64>,
    /// SPMD blocks per task (spmd workload only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocks: Option<u16>,
    /// Median wall time per block (spmd workload only): `ns_per_task` over the blocks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ns_per_block: Option<f64>,
    /// Median wall time per task, first submit to last completion.
    pub ns_per_task: f64,
    /// Tasks per second at that median.
    pub tasks_per_s: f64,
    /// Median CPU time the orchestrator thread spent per submitted task (submit, wiring,
    /// tensor-map lookups), without the time it was preempted.
    pub submit_ns_per_task: f64,
    /// Scheduler loop iterations per task (all schedulers, last run).
    pub loops_per_task: f64,
    /// Times per task an idle scheduler or the orchestrator gave its CPU away (last run).
    pub yields_per_task: f64,
    /// Median ready-to-complete latency, ns (absent when the run did not record latency).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p50_ready_to_complete_ns: Option<u64>,
    /// 99th-percentile ready-to-complete latency, ns (absent likewise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p99_ready_to_complete_ns: Option<u64>,
    /// Scheduler threads.
    pub schedulers: u8,
    /// AIC cores.
    pub aic: u16,
    /// AIV cores.
    pub aiv: u16,
    /// Runs measured (the median is over these).
    pub repeats: u32,
    /// Every run's ns per task, in run order.
    pub runs_ns_per_task: Vec<f64>,
    /// The profiling level of the runs (`off`, `counters`, `tasks`).
    pub profile: String,
    /// How the schedulers learned of completions (`poll` or `ring`).
    pub completion: String,
    /// Phases, deferred waits and dropped records of the last run (unless `off`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile_summary: Option<ProfileSummary>,
    /// A scene's makespan and the scheduler's overhead share of it, from the last run's
    /// task records (see [`super::overhead_shares`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overhead: Option<OverheadShares>,
    /// Under the silicon cost model, for a scene: the figures the same DAG would show on the
    /// same cores with the chip's latencies and a scheduler that costs nothing
    /// ([`pto_trace::overhead_at_no_cost`]): the DAG's and the chip's share of `overhead`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overhead_at_no_cost: Option<OverheadShares>,
    /// Under the silicon cost model: how late this host showed the modelled chip's events
    /// in the last run, and how many threads it ran on how many CPUs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<HostFidelity>,
}

/// How faithfully this host ran the modelled chip: late events mean the scheduler saw
/// FINs late for the host's sake, so the overhead shares are the host's as much as the
/// runtime's.
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct HostFidelity {
    /// How late the modelled chip's events showed.
    pub lateness: Lateness,
    /// The least share of its wall time a scheduler thread ran on a CPU (CPU time over
    /// wall time): a scheduler that waits for a CPU sees FINs late for the host's sake.
    pub scheduler_on_cpu: f64,
    /// Threads the run kept busy: the orchestrator, the schedulers, the core threads.
    pub threads: usize,
    /// CPUs this host offers the process.
    pub cpus: usize,
    /// Whether the host distorted the shares: the modelled chip late
    /// ([`Lateness::distorts`]), or a scheduler on a CPU less than [`ON_CPU_AT_LEAST`] of
    /// its time.
    pub distorted: bool,
}

/// The share of its time a scheduler must run on a CPU for a run's figures to be the
/// runtime's: a spinning scheduler with a CPU of its own is on it all the time.
pub const ON_CPU_AT_LEAST: f64 = 0.9;

impl HostFidelity {
    /// The fidelity of a run with `lateness`, on `sim`'s threads for `cfg`.
    fn new(lateness: Lateness, on_cpu: &[f64], cfg: &Config, sim: &SimOptions) -> Self {
        let cores = usize::from(cfg.cores());
        let core_threads = match sim.core_threads {
            CoreThreads::PerCore => cores,
            CoreThreads::Shared(n) => n.clamp(1, cores.max(1)),
        };
        let scheduler_on_cpu = on_cpu.iter().copied().fold(1.0, f64::min);
        HostFidelity {
            lateness,
            scheduler_on_cpu,
            threads: 1 + usize::from(cfg.schedulers) + core_threads,
            cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
            distorted: lateness.distorts() || scheduler_on_cpu < ON_CPU_AT_LEAST,
        }
    }
}

/// A bench's figures, and the task records of its last run (for a trace).
pub struct BenchOutcome {
    /// The figures.
    pub result: BenchResult,
    /// Task records of the last run (empty unless profiling at `Tasks`).
    pub records: Vec<TaskRecord>,
    /// Clock ticks per µs of the records' timestamps.
    pub ticks_per_us: u64,
    /// Each scheduler's completion-queue counters in the last run (drains counted at
    /// `Counters` or above).
    pub queues: Vec<QueueReport>,
    /// A scene's tasks in submission order with their producers (empty for other
    /// workloads), for a trace that a reader computes the overhead shares from.
    pub producers: Vec<(TaskId, Vec<TaskId>)>,
    /// The run's (AIC, AIV) cores.
    pub cores: (u16, u16),
}

/// Runs `plan` `plan.repeats` times (after one warm-up run) and takes medians.
pub fn run_bench(
    cfg: Config,
    sim: SimOptions,
    plan: &BenchPlan,
) -> Result<BenchOutcome, BenchError> {
    run_bench_with(cfg, sim, plan, &Progress::hidden())
}

/// Tasks submitted between two updates of the progress bar: the count costs one add and one
/// compare per task, the update a little more.
const PROGRESS_EVERY: u64 = 4096;

/// [`run_bench`], with `progress` following the tasks submitted over every run.
pub fn run_bench_with(
    cfg: Config,
    sim: SimOptions,
    plan: &BenchPlan,
    progress: &Progress,
) -> Result<BenchOutcome, BenchError> {
    let BenchPlan {
        workload,
        tasks,
        repeats,
        ..
    } = *plan;
    if tasks == 0 || repeats == 0 {
        return Err(BenchError::Usage(
            "--tasks and --repeat must be at least 1".into(),
        ));
    }
    let mut runs = Vec::new();
    let mut submit_runs = Vec::new();
    let mut latency = pto_runtime_core::LatencyHistogram::default();
    let mut submitted = 0;
    let mut last = None;
    let scene = match workload {
        Workload::Scene(s) => Some(s),
        _ => None,
    };
    let kernels = workload.kernels();
    // A scene's dependencies, recorded in the warm-up run (the DAG and its ids repeat).
    let mut producers = Vec::new();
    for r in 0..=repeats {
        progress.set_message(match r {
            0 => "bench: warm-up run".to_string(),
            r => format!("bench: run {r} of {repeats}"),
        });
        if r == 0 {
            progress.set_length(tasks.saturating_mul(u64::from(repeats) + 1));
        }
        // Tasks submitted before this run (fanout's joins make a run longer than `tasks`).
        let before = submitted * u64::from(r);
        let mut out = run(cfg, kernels.clone(), sim.clone(), |o| {
            let counter = o.platform().memory().alloc(8, 8).map_err(|e| {
                o.abort(1);
                BenchError::Usage(format!("no device memory for the counter: {e}"))
            })?;
            let cpu = cpu_time::ThreadTime::now();
            if let Some(s) = scene {
                let mut sub = if r == 0 {
                    Submitter::recording()
                } else {
                    Submitter::new()
                };
                s.submit(SceneSize::Full, &mut sub, o)?;
                let elapsed = cpu.elapsed();
                let deps = sub.graph().map(producers_of).unwrap_or_default();
                return Ok::<_, BenchError>((sub.submitted(), elapsed, deps));
            }
            let mut k = 0u64;
            let n = submit_workload(&cfg, plan, counter, |spec| {
                k += 1;
                if k.is_multiple_of(PROGRESS_EVERY) {
                    progress.set_position(before + k);
                }
                o.submit(spec)
            })?;
            Ok::<_, BenchError>((n, cpu.elapsed(), Vec::new()))
        })?;
        let (n, submit_cpu, deps) =
            std::mem::replace(&mut out.value, Ok((0, Default::default(), Vec::new())))?;
        submitted = n;
        progress.set_length(n.saturating_mul(u64::from(repeats) + 1));
        progress.set_position(n * (u64::from(r) + 1));
        if r == 0 {
            producers = deps;
            continue; // warm-up: page faults, thread start-up
        }
        runs.push(out.wall.as_nanos() as f64 / submitted as f64);
        submit_runs.push(submit_cpu.as_nanos() as f64 / submitted as f64);
        latency.merge(&out.report.latency);
        last = Some(out);
    }
    progress.finish();
    let last = last.ok_or_else(|| BenchError::Usage("no run was measured".into()))?;
    let profile_summary = (cfg.profile != ProfileLevel::Off).then(|| {
        ProfileSummary::new(
            &last.phases,
            &last.records,
            last.report.profile_dropped,
            last.ticks_per_us,
        )
    });
    let overhead = scene.and_then(|_| {
        let cores = (cfg.aic_cores, cfg.aiv_cores);
        overhead_shares(&last.records, &producers, cores, last.ticks_per_us)
    });
    let overhead_at_no_cost = match (scene, &sim.silicon) {
        (Some(_), Some(model)) => {
            // In the whole ns its trace shows: a replay at no cost turns on ties, and the
            // trace's reader then lays the run out alike.
            let records = records_in_ns(&last.records, last.ticks_per_us);
            let latencies = chip_latencies(model, cfg.completion, 1_000);
            let cores = (cfg.aic_cores, cfg.aiv_cores);
            overhead_at_no_cost(&records, &producers, cores, 1_000, latencies)
        }
        _ => None,
    };
    let host = last
        .silicon_lateness
        .map(|l| HostFidelity::new(l, &last.schedulers_on_cpu, &cfg, &sim));
    let median = median_of(&runs);
    let ns =
        |ticks: Option<u64>| ticks.map_or(0, |t| t.saturating_mul(1000) / last.ticks_per_us.max(1));
    let result = BenchResult {
        profile: super::options::level_name(cfg.profile).into(),
        completion: super::options::mode_name(cfg.completion).into(),
        profile_summary,
        overhead,
        overhead_at_no_cost,
        host,
        workload,
        tasks: submitted,
        pending: (workload == Workload::Deferred).then_some(plan.pending),
        blocks: (workload == Workload::Spmd).then_some(plan.blocks),
        ns_per_block: (workload == Workload::Spmd).then(|| median / f64::from(plan.blocks)),
        ns_per_task: median,
        tasks_per_s: 1e9 / median,
        loops_per_task: last.report.loops as f64 / submitted.max(1) as f64,
        yields_per_task: last.yields as f64 / submitted.max(1) as f64,
        submit_ns_per_task: median_of(&submit_runs),
        p50_ready_to_complete_ns: cfg.record_latency.then(|| ns(latency.quantile(0.50))),
        p99_ready_to_complete_ns: cfg.record_latency.then(|| ns(latency.quantile(0.99))),
        schedulers: cfg.schedulers,
        aic: cfg.aic_cores,
        aiv: cfg.aiv_cores,
        repeats,
        runs_ns_per_task: runs,
    };
    Ok(BenchOutcome {
        result,
        records: last.records,
        ticks_per_us: last.ticks_per_us,
        queues: last.queues,
        producers,
        cores: (cfg.aic_cores, cfg.aiv_cores),
    })
}

/// The latencies of `model` a zero-cost scheduler still pays, in ticks: a kernel's
/// dispatch, and its completion seen as a FIN (`mode` polling) or as a record.
fn chip_latencies(model: &Silicon, mode: CompletionMode, ticks_per_us: u64) -> ChipLatencies {
    let t = |d: std::time::Duration| (d.as_nanos() as u64).saturating_mul(ticks_per_us) / 1_000;
    let (seen_min, seen_avg) = match mode {
        CompletionMode::Poll => (t(model.fin_min), t(model.fin_avg)),
        _ => (t(model.record_avg) / 2, t(model.record_avg)),
    };
    ChipLatencies {
        dispatch: t(model.dispatch),
        seen_min,
        seen_avg,
    }
}

/// The median of non-empty `xs`.
fn median_of(xs: &[f64]) -> f64 {
    let mut sorted = xs.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted[sorted.len() / 2]
}

impl fmt::Display for BenchResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "workload {}: {}, {}, {} AIC + {} AIV cores, completion by {}, median of {}",
            self.workload.name(),
            human::count(self.tasks, "task"),
            human::count(self.schedulers.into(), "scheduler"),
            self.aic,
            self.aiv,
            self.completion,
            human::count(self.repeats.into(), "run"),
        )?;
        if let Some(p) = self.pending {
            writeln!(
                f,
                "  {} kept pending on deferred conditions",
                human::count(p, "task")
            )?;
        }
        writeln!(
            f,
            "  wall        {:>8} ns/task   {:>8} tasks/s",
            human::sig3(self.ns_per_task),
            human::si(self.tasks_per_s)
        )?;
        if let (Some(b), Some(ns)) = (self.blocks, self.ns_per_block) {
            writeln!(
                f,
                "  per block   {:>8} ns/block  ({} per task)",
                human::sig3(ns),
                human::count(b.into(), "block")
            )?;
        }
        writeln!(
            f,
            "  submit      {:>8} ns/task   (orchestrator CPU time)",
            human::sig3(self.submit_ns_per_task)
        )?;
        match (self.p50_ready_to_complete_ns, self.p99_ready_to_complete_ns) {
            (Some(p50), Some(p99)) => write!(
                f,
                "  ready->done p50 {}   p99 {}",
                human::nanos(p50 as f64),
                human::nanos(p99 as f64)
            )?,
            _ => write!(f, "  ready->done not recorded")?,
        }
        if let Some(s) = &self.overhead {
            write!(
                f,
                "\n  makespan    {:>8} µs (first kernel start to last end, last run)\
                 \n  overhead    AIC {:.1} %, AIV {:.1} %, all engines {:.1} %, has-overhead {:.1} % of the makespan\
                 \n  head/tail   {} dispatch to start, {} end to FIN (means)",
                human::sig3(s.makespan_ns / 1_000.0),
                100.0 * s.aic,
                100.0 * s.aiv,
                100.0 * s.all_engines,
                100.0 * s.has_overhead,
                human::nanos(s.head_ns),
                human::nanos(s.tail_ns),
            )?;
        }
        if let Some(s) = &self.overhead_at_no_cost {
            write!(
                f,
                "\n  at no cost  makespan {} µs, all engines {:.1} %, has-overhead {:.1} % (this DAG on \
                 these cores with the chip's latencies, its scheduler costing nothing)",
                human::sig3(s.makespan_ns / 1_000.0),
                100.0 * s.all_engines,
                100.0 * s.has_overhead,
            )?;
        }
        if let Some(h) = &self.host {
            write!(
                f,
                "\n  host        {} threads on {} CPUs: schedulers on a CPU {:.0} % of the time (the \
                 least); the modelled chip's events shown {} late on average, {:.1} % over {}",
                h.threads,
                h.cpus,
                100.0 * h.scheduler_on_cpu,
                human::nanos(h.lateness.mean_ns),
                100.0 * h.lateness.late_share,
                human::nanos(LATE_NS as f64),
            )?;
            if h.distorted {
                write!(
                    f,
                    "\n  warning: this host did not keep up with the run (a scheduler off its \
                     CPU, or the modelled chip shown late), so the schedulers saw FINs late for \
                     the host's sake: the overhead figures above measure the host as much as the \
                     runtime (give each thread a CPU of its own)"
                )?;
            }
        }
        if let Some(s) = &self.profile_summary {
            write!(f, "\nprofile {} (last run):\n{s}", self.profile)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_a2a3_models_latencies_are_the_ones_a_trace_is_read_with() {
        let ns = chip_latencies(&Silicon::a2a3(), CompletionMode::Poll, 1_000);
        assert_eq!(ns, ChipLatencies::A2A3_POLL_NS);
        // In ring mode the scheduler learns of a kernel from its record: 1 040 ns on
        // average, from half of it. In ticks of 3 GHz: three times the ns.
        let ring = chip_latencies(&Silicon::a2a3(), CompletionMode::Ring, 3_000);
        assert_eq!(
            (ring.dispatch, ring.seen_min, ring.seen_avg),
            (420, 1_560, 3_120)
        );
    }
}
