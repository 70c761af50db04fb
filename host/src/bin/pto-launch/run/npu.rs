//! `pto-launch run --backend npu`: the run on an Ascend NPU through CANN (feature `cann`).

use std::path::PathBuf;

use pto_host::npu::{Artifacts, NpuOptions, NpuSession, Timeouts};
use pto_host::profile::{chrome_trace, write_trace};

use super::spec::{bad, spec, write_outputs};
use super::{RunArgs, RunResults, TRACE_RECORDS};
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

/// Runs the flags' program on NPU `a.device` (0 if not given).
pub fn run(a: &RunArgs) -> Result<RunResults, CliError> {
    let device = a.device.unwrap_or(0);
    let records = if a.trace.is_some() { TRACE_RECORDS } else { 0 };
    let (spec, _) = spec(a, records)?;
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
    opts.timeouts = Timeouts {
        task_us: a.task_timeout_ms * 1000,
        ..Timeouts::default()
    };
    let mut session = NpuSession::open(opts).map_err(|e| bad(e.to_string()))?;
    let out = session.run(&spec).map_err(|e| bad(e.to_string()))?;
    let outputs = write_outputs(a.output.as_deref(), &out.buffers)?;
    let trace = match &a.trace {
        Some(path) => {
            let records: Vec<_> = out.records.iter().map(|r| r.to_record()).collect();
            write_trace(path, &chrome_trace(&records, ticks_per_us))?;
            Some((path.clone(), records.len(), out.status.0.records_total))
        }
        None => None,
    };
    Ok(RunResults {
        backend: super::RunBackend::Npu,
        device: Some(device),
        run: Some(out.status.0.run),
        tasks_finished: out.status.finished(),
        outputs,
        trace,
    })
}
