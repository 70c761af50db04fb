//! `pto-launch run --backend sim`: the same orchestration SO and raw kernels (compiled for
//! this host) on the simulator, through the same orchestration and kernel ABIs.

use pto_host::profile::write_chrome_trace;
use pto_host::sim_backend::{SimBackendOptions, run as run_on_sim};

use super::spec::{bad, spec, write_outputs};
use super::{RunArgs, RunBackend, RunResults, TRACE_RECORDS};
use crate::error::CliError;

/// Runs the flags' program on a simulated machine of `a.clusters` clusters.
pub fn run(a: &RunArgs) -> Result<RunResults, CliError> {
    let records = if a.trace.is_some() { TRACE_RECORDS } else { 0 };
    let (spec, names) = spec(a, records)?;
    let opts = SimBackendOptions {
        clusters: a.clusters.max(1) as u16,
        schedulers: a.schedulers,
        task_timeout_us: a.task_timeout_ms * 1000,
        kernel_names: names,
        ..SimBackendOptions::default()
    };
    let out = run_on_sim(&spec, &opts).map_err(|e| bad(format!("simulator: {e}")))?;
    let outputs = write_outputs(a.output.as_deref(), &out.buffers)?;
    let trace = match &a.trace {
        Some(path) => {
            write_chrome_trace(path, &out.records, out.ticks_per_us, &out.kernels)?;
            let held = u32::try_from(out.report.finished).unwrap_or(u32::MAX);
            Some((path.clone(), out.records.len(), held))
        }
        None => None,
    };
    Ok(RunResults {
        backend: RunBackend::Sim,
        device: None,
        run: None,
        tasks_finished: out.report.finished,
        outputs,
        trace,
    })
}
