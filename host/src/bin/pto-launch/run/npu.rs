//! `pto-launch run --backend npu`: the run on an Ascend NPU through CANN (feature `cann`).

use std::path::PathBuf;

use pto_device_sys::abi::PtoAicpuCode;
use pto_host::npu::{Artifacts, NpuError, NpuOptions, NpuSession, Timeouts};
use pto_host::profile::{TraceExtras, Unnamed, write_chrome_trace_with};
use pto_host::program_ranks::{ProgramRank, ProgramRankError, run_on_npu};

use super::returned::with_hint;
use super::spec::{bad, spec, trace_path, write_outputs};
use super::{RunArgs, RunResults};
use crate::error::CliError;

fn artifact(flag: &Option<PathBuf>, var: &str, name: &str) -> Result<PathBuf, CliError> {
    flag.clone()
        .or_else(|| std::env::var_os(var).map(PathBuf::from))
        .ok_or_else(|| {
            bad(format!(
                "where is {name}? give --{} or set {var}",
                flag_name(var)
            ))
        })
}

fn flag_name(var: &str) -> String {
    var.trim_start_matches("PTO_")
        .to_lowercase()
        .replace('_', "-")
}

/// The device counter's ticks per µs for a trace.
fn ticks_per_us(a: &RunArgs) -> Result<u64, CliError> {
    match (&a.trace, a.device_ticks_per_us) {
        (None, _) => Ok(0),
        (Some(_), 0) => {
            pto_device_sys::raw::arch::counter_frequency()
                .map(|hz| hz / 1_000_000)
                .filter(|&t| t > 0)
                .ok_or_else(|| {
                    bad("--trace needs the device counter's rate, and this host's counter does not \
                     say it: give --device-ticks-per-us"
                    .into())
                })
        }
        (Some(_), t) => Ok(t),
    }
}

/// Runs the flags' program on NPU `a.device` (0 if not given), or as `rank` of a job on
/// device `a.device + rank`.
pub fn run(a: &RunArgs, rank: Option<&ProgramRank>) -> Result<RunResults, CliError> {
    let me = rank.map(|r| r.rank);
    let device = a
        .device
        .unwrap_or(0)
        .checked_add(me.unwrap_or(0) as i32)
        .filter(|&d| d < 64)
        .ok_or_else(|| bad("--device plus the rank is past device 63".into()))?;
    let records = a.records();
    // A run alone reads its files first, so a missing one is named before any artifact.
    let alone_or_rank = match rank {
        None => Ok(spec(a, records, None)?),
        Some(r) => Err(r),
    };
    let ticks_per_us = ticks_per_us(a)?;
    let artifacts = Artifacts {
        aicpu_so: artifact(&a.aicpu_so, "PTO_AICPU_SO", "libpto_aicpu.so")?,
        dispatcher_so: artifact(
            &a.dispatcher_so,
            "PTO_DISPATCHER_SO",
            "libpto_dispatcher.so",
        )?,
        aicore_executor: artifact(
            &a.aicore_executor,
            "PTO_AICORE_EXECUTOR",
            "the AICore executor",
        )?,
    };
    let mut opts = NpuOptions::new(device, artifacts);
    opts.cann_dirs = a.cann_dir.iter().cloned().collect();
    opts.clusters = a.clusters;
    opts.schedulers = a.schedulers;
    opts.ticks_per_us = a.device_ticks_per_us;
    opts.max_conditions = a.max_conditions;
    opts.timeouts = Timeouts {
        task_us: a.task_timeout_ms * 1000,
        submit_us: a.submit_timeout_ms * 1000,
        deferred_us: a.deferred_timeout_ms * 1000,
        ..Timeouts::default()
    };
    if let Some(ms) = a.device_watchdog_ms {
        opts.timeouts.device_watchdog_us = ms * 1000;
    }
    let out = match alone_or_rank {
        Ok(spec) => {
            let mut session = NpuSession::open(opts).map_err(|e| bad(e.to_string()))?;
            let clusters = session.clusters();
            session.run(&spec).map_err(|e| CliError::RunFailed {
                message: with_hint(e.to_string(), returned(&e), Some(clusters)),
                stall: e.device_status().and_then(|s| s.0.stall_class()),
            })?
        }
        Err(r) => run_on_npu(r, opts, |w| {
            spec(a, records, Some(w)).map_err(|e| e.to_string())
        })
        .map_err(|e| {
            let code = match &e {
                ProgramRankError::Npu(e) => returned(e),
                _ => None,
            };
            // Each rank opens its own session: the clusters are known here only if given.
            let clusters = Some(a.clusters).filter(|&c| c > 0);
            bad(with_hint(format!("rank {}: {e}", r.rank), code, clusters))
        })?,
    };
    let outputs = write_outputs(a, me, &out.buffers)?;
    let trace = match trace_path(a, me) {
        Some(path) => {
            let records: Vec<_> = out.records.iter().map(|r| r.to_record()).collect();
            // The DAG the device streamed (whole, or not at all): the trace then carries
            // what `pto-launch trace` needs for the overhead shares and the critical path.
            let cores = out.cores;
            let extras = TraceExtras {
                queues: &[],
                dependencies: out.producers.as_deref().map(|p| (p, cores)),
            };
            write_chrome_trace_with(&path, &records, ticks_per_us, &Unnamed, extras)?;
            Some((path, records.len(), out.status.finished()))
        }
        None => None,
    };
    Ok(RunResults {
        backend: super::RunBackend::Npu,
        rank: me,
        device: Some(device),
        run: Some(out.status.0.run),
        tasks_finished: out.status.finished(),
        tasks_skipped: out.status.skipped(),
        outputs,
        trace,
        golden: a.golden.check(me, &out.buffers)?,
        accesses: None,
    })
}

/// What the orchestration returned, if the device reports `e`'s run ended by its non-zero
/// return.
fn returned(e: &NpuError) -> Option<i32> {
    let report = e.device_status()?.0;
    if PtoAicpuCode::from_u32(report.code) != PtoAicpuCode::OrchestrationFailed {
        return None;
    }
    i32::try_from(report.value as i64).ok()
}
