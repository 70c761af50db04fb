//! `pto-launch run --backend sim`: the same orchestration SO and kernels (shared objects
//! built for this host, entries found by symbol) on the simulator, through the same orchestration and kernel ABIs; one run, or
//! one rank's run of a job whose windows are POSIX shared memory.

use pto_host::profile::{TraceExtras, write_chrome_trace_with};
use pto_host::program_ranks::{ProgramRank, ProgramRankError, run_on_sim};
use pto_host::sim_backend::{SimBackendError, SimBackendOptions, run as run_alone};

use super::returned::with_hint;
use super::spec::{bad, spec, trace_path, write_outputs};
use super::{AccessSummary, RunArgs, RunBackend, RunResults};
use crate::error::CliError;

/// Runs the flags' program on a simulated machine of `a.clusters` clusters, as `rank` if
/// this process is one.
pub fn run(a: &RunArgs, rank: Option<&ProgramRank>) -> Result<RunResults, CliError> {
    let records = a.records();
    let clusters = a.clusters.max(1);
    let opts = SimBackendOptions {
        clusters: clusters as u16,
        schedulers: a.schedulers,
        task_timeout_us: a.task_timeout_ms * 1000,
        submit_timeout_us: a.submit_timeout_ms * 1000,
        deferred_timeout_us: a.deferred_timeout_ms * 1000,
        max_conditions: a.max_conditions,
        check_accesses: a.check_accesses,
        ..SimBackendOptions::default()
    };
    let out = match rank {
        None => run_alone(&spec(a, records, None)?, &opts).map_err(|e| {
            failed(
                with_hint(format!("simulator: {e}"), returned(&e), Some(clusters)),
                &e,
            )
        })?,
        Some(r) => run_on_sim(r, opts, |w| {
            spec(a, records, Some(w)).map_err(|e| e.to_string())
        })
        .map_err(|e| {
            let message = |code| {
                with_hint(
                    format!("rank {}: simulator: {e}", r.rank),
                    code,
                    Some(clusters),
                )
            };
            match &e {
                ProgramRankError::Sim(s) => failed(message(returned(s)), s),
                _ => bad(message(None)),
            }
        })?,
    };
    let me = rank.map(|r| r.rank);
    let outputs = write_outputs(a, me, &out.buffers)?;
    let trace = match trace_path(a, me) {
        Some(path) => {
            let extras = TraceExtras {
                queues: &[],
                dependencies: Some((out.producers.as_slice(), out.cores)),
            };
            write_chrome_trace_with(&path, &out.records, out.ticks_per_us, &out.kernels, extras)?;
            Some((path, out.records.len(), out.report.finished))
        }
        None => None,
    };
    Ok(RunResults {
        backend: RunBackend::Sim,
        rank: me,
        device: None,
        run: None,
        tasks_finished: out.report.finished,
        tasks_skipped: out.report.skipped,
        outputs,
        trace,
        golden: a.golden.check(me, &out.buffers)?,
        accesses: out.accesses.as_ref().map(AccessSummary::from),
    })
}

/// The error of a run that failed with `e`, its message `message`: with its stall class if
/// it stalled.
fn failed(message: String, e: &SimBackendError) -> CliError {
    let stall = match e {
        SimBackendError::Sim(pto_sim::SimError::Run { run, .. }) => run.stalls.class,
        _ => None,
    };
    CliError::RunFailed { message, stall }
}

/// What the orchestration returned, if `e` is its non-zero return.
fn returned(e: &SimBackendError) -> Option<i32> {
    match e {
        SimBackendError::Orchestration { code, .. } => Some(*code),
        _ => None,
    }
}
