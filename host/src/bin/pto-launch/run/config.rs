//! What `pto-launch run --json` reports it was asked to do: every setting, defaults filled
//! in, and for each capacity where its value came from (a flag, the orchestration SO's
//! declaration, or the default).

use std::path::PathBuf;

use serde::Serialize;

use pto_host::orch_config::{Origin, RunCapacities};

use super::{RunArgs, RunBackend};

/// Where a capacity's value came from, as `--json` says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum From {
    /// A flag on the command line.
    Flag,
    /// The orchestration SO's `PTO_ORCHESTRATION_CONFIG`.
    So,
    /// Neither.
    Default,
}

/// One capacity: its value and where it came from.
#[derive(Debug, Serialize)]
pub struct Setting<T> {
    value: T,
    from: From,
}

fn setting<T: Copy>(c: pto_host::orch_config::Capacity<T>) -> Setting<T> {
    Setting {
        value: c.value,
        from: match c.from {
            Origin::Given => From::Flag,
            Origin::Declared => From::So,
            Origin::Default => From::Default,
        },
    }
}

/// The capacities of the run.
#[derive(Debug, Serialize)]
pub struct Capacities {
    max_deps: Setting<u16>,
    max_tensors: Setting<u16>,
    max_args: Setting<u16>,
    task_window: Setting<u32>,
    heap_bytes: Setting<u64>,
}

/// `run`'s `config` in the JSON envelope.
#[derive(Debug, Serialize)]
pub struct RunConfig {
    backend: RunBackend,
    /// The NPU's device id (`npu` only; with --ranks, rank r's is this plus r).
    device: Option<i32>,
    orchestration: PathBuf,
    kernels: String,
    buffers: Vec<String>,
    args: Vec<String>,
    output: Option<PathBuf>,
    /// 0: all the stream allows on an NPU, 1 on the simulator.
    clusters: u32,
    schedulers: u8,
    capacities: Capacities,
    task_timeout_ms: u64,
    submit_timeout_ms: u64,
    deferred_timeout_ms: u64,
    max_conditions: u16,
    trace: Option<PathBuf>,
    /// Task records the trace keeps (0 without --trace).
    trace_records: u32,
    ranks: u32,
    /// Each rank's window (with --ranks above 1).
    window_bytes: u64,
    timeout_s: u64,
    /// The --expect checks, as `N=FILE`.
    expect: Vec<String>,
    /// Their element type and tolerance.
    dtype: pto_sim::Dtype,
    tolerance: Option<pto_sim::Tolerance>,
    check_accesses: bool,
}

impl RunConfig {
    /// The configuration of the run `a` asks for, with its resolved capacities.
    pub fn new(a: &RunArgs, caps: &RunCapacities) -> Self {
        RunConfig {
            backend: a.backend,
            device: match a.backend {
                RunBackend::Npu => Some(a.device.unwrap_or(0)),
                RunBackend::Sim => None,
            },
            orchestration: a.orchestration.clone(),
            kernels: a.kernels.clone(),
            buffers: a.buffers.clone(),
            args: a.args.clone(),
            output: a.output.clone(),
            clusters: a.clusters,
            schedulers: a.schedulers,
            capacities: Capacities {
                max_deps: setting(caps.max_deps),
                max_tensors: setting(caps.max_tensors),
                max_args: setting(caps.max_args),
                task_window: setting(caps.task_window),
                heap_bytes: setting(caps.heap_bytes),
            },
            task_timeout_ms: a.task_timeout_ms,
            submit_timeout_ms: a.submit_timeout_ms,
            deferred_timeout_ms: a.deferred_timeout_ms,
            max_conditions: a.max_conditions,
            trace: a.trace.clone(),
            trace_records: a.records(),
            ranks: a.ranks,
            window_bytes: a.window_bytes,
            timeout_s: a.timeout_s,
            expect: a
                .golden
                .expect
                .iter()
                .map(|e| format!("{}={}", e.buffer, e.file.display()))
                .collect(),
            dtype: a.golden.dtype,
            tolerance: a.golden.tolerance().ok(),
            check_accesses: a.check_accesses,
        }
    }
}
