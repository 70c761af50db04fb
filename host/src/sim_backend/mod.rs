//! A user's program ([`RunSpec`]: an orchestration SO, raw kernels, buffers, arguments) run
//! on the simulator, through the same orchestration ABI and the same kernel ABI as on the
//! chip, so a program can be tried before the NPU.
//!
//! - The orchestration SO is loaded from its bytes (`orch_so.rs`, from an in-memory file) and
//!   its `pto_orchestrate` called on the simulator's orchestrator thread with the table of
//!   runtime operations `libpto_aicpu.so` hands out (`orch_ops.rs`).
//! - Each kernel is a shared object built for this host (any compiler, any flags), loaded
//!   with the dynamic loader and its entry found by symbol ([`pto_sim::CKernel`]), then
//!   called by a simulated core with a payload slot laid out as on the chip: tensor
//!   addresses then scalar arguments, tensor descriptors, `pto_kernel_fail` and
//!   `pto_kernel_defer` as in `device-sys/aicore/pto_aicore.h`. A file it cannot take is
//!   refused before the run, naming the file and how to build it.
//! - A fatal signal in a kernel or in the orchestration names it (kernel, task, core and
//!   address; or the orchestration SO) and ends the process with 128 + the signal
//!   ([`pto_sim::crash`]).
//! - The simulator's memory sits at host addresses ([`pto_sim::SimOptions::host_addresses`]),
//!   so the C code dereferences buffer and heap addresses directly; the buffers are
//!   allocated and filled before the orchestration runs and read back after.
//! - [`RunSpec::watched`] does not apply: a deferred condition may watch any word the
//!   machine addresses (its own memory and [`SimBackendOptions::windows`]).
//!
//! ```no_run
//! use pto_host::program::{BufferSpec, KernelSpec, OrchArg, RunSpec};
//! use pto_host::sim_backend::{SimBackendOptions, run};
//!
//! let so = std::fs::read("liborchestration.so")?;
//! // cc -shared -fPIC -I device-sys/aicore -o fill.so fill.c (entry: pto_kernel_entry)
//! let kernel = KernelSpec::read("fill.so".as_ref(), None)?;
//! let mut spec = RunSpec::new(so, vec![kernel]);
//! spec.buffers = vec![BufferSpec { bytes: 4096, init: Vec::new() }];
//! spec.args = vec![OrchArg::Kernel(0), OrchArg::Buffer(0)];
//! let out = run(&spec, &SimBackendOptions::default())?;
//! println!("{} tasks; buffer 0 starts {:?}", out.report.finished, &out.buffers[0][..8]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod orch_ops;
mod orch_so;

use std::sync::Arc;

use pto_device_sys::chip::ChipPlatform;
use pto_runtime_core::ffi::{PtoStatus, status_str};
use pto_runtime_core::{Config, FatalCause, KernelId, ProfileLevel, RunReport, TaskRecord};
use pto_sim::{CKernel, DeviceMemory, KernelTable, SimError, SimOptions};

use crate::orch_config::{OrchConfigError, RunCapacities, resolve};
use crate::program::{OrchArg, RunSpec};

/// How the simulated machine of a program's run is shaped.
#[derive(Clone)]
pub struct SimBackendOptions {
    /// Clusters of 1 AIC + 2 AIV cores (at least 1).
    pub clusters: u16,
    /// Scheduler threads (one more thread orchestrates).
    pub schedulers: u8,
    /// How long a task may run before the run fails with a timeout, µs.
    pub task_timeout_us: u64,
    /// How long a submit (or an alloc) waits for room in a full window (or heap), µs.
    pub submit_timeout_us: u64,
    /// How long a finished task's deferred conditions may take to hold, µs.
    pub deferred_timeout_us: u64,
    /// Most deferred conditions one task may register.
    pub max_conditions: u16,
    /// Memory outside the machine's own that kernels and deferred conditions may address
    /// (a multi-rank job's communication windows, mapped at their host addresses).
    pub windows: Vec<Arc<DeviceMemory>>,
    /// Check the tasks' accesses ([`pto_sim::SimOptions::check_accesses`]). A C kernel's
    /// own accesses are raw pointers the simulator cannot see: its task counts as touching
    /// exactly the tiles it declared, so two tasks that declare the same bytes through
    /// different buffers, with no dependency between them, are found.
    pub check_accesses: bool,
}

impl Default for SimBackendOptions {
    fn default() -> Self {
        SimBackendOptions {
            clusters: 1,
            schedulers: 2,
            task_timeout_us: Config::default().task_timeout_us,
            submit_timeout_us: Config::default().submit_timeout_us,
            deferred_timeout_us: Config::default().deferred_timeout_us,
            max_conditions: Config::default().max_conditions,
            windows: Vec::new(),
            check_accesses: false,
        }
    }
}

/// What a program's run on the simulator left.
pub struct SimOutcome {
    /// The runtime's report (every task submitted finished).
    pub report: RunReport,
    /// Every buffer's bytes after the run.
    pub buffers: Vec<Vec<u8>>,
    /// The task records (one per task with [`RunSpec::records`] > 0: the simulator drains
    /// its ring of that many cells while the run goes), in submit order.
    pub records: Vec<TaskRecord>,
    /// With records: every task in submission order with its producers (for a trace's
    /// critical path and overhead shares, `pto_trace::add_dependencies`).
    pub producers: Vec<(pto_runtime_core::TaskId, Vec<pto_runtime_core::TaskId>)>,
    /// The run's AIC and AIV cores.
    pub cores: (u16, u16),
    /// Clock ticks per µs of the records' timestamps.
    pub ticks_per_us: u64,
    /// The kernel table the run used (its names, for traces).
    pub kernels: KernelTable,
    /// With [`SimBackendOptions::check_accesses`]: what the check found (a run whose tasks
    /// race fails instead, with [`SimError::Races`]).
    pub accesses: Option<pto_sim::AccessReport>,
}

/// Why a program's run on the simulator did not succeed.
#[derive(Debug, thiserror::Error)]
pub enum SimBackendError {
    /// The program cannot run as given (a spec naming what does not exist).
    #[error("{0}")]
    Spec(String),
    /// The run's capacities cannot be used (a malformed declaration in the SO, a value out of
    /// range, more argument words than the chip's payload slots carry).
    #[error(transparent)]
    Capacities(#[from] OrchConfigError),
    /// The orchestration SO or a kernel's code could not be loaded.
    #[error("{0}")]
    Load(String),
    /// The buffers do not fit the simulated memory.
    #[error("cannot place the run's buffers: {0}")]
    Buffers(String),
    /// The orchestration function returned `code` (not 0): the run was aborted.
    #[error("the orchestration returned {}; {finished} of {submitted} tasks finished",
        returned(*.code))]
    Orchestration {
        /// What `pto_orchestrate` returned.
        code: i32,
        /// Tasks that finished.
        finished: u64,
        /// Tasks submitted.
        submitted: u64,
    },
    /// The simulator could not start the run, or the run failed (a kernel error, a timeout:
    /// the error says which task, and what every live task waited for).
    #[error(transparent)]
    Sim(#[from] SimError),
}

/// What an orchestration's return `code` means: a runtime status (0 or negative, one that
/// some operation returned to it) in words, or the orchestration's own code.
pub fn returned(code: i32) -> String {
    match PtoStatus::from_code(code) {
        Some(_) => format!("{code} ({})", status_str(code).to_string_lossy()),
        None => format!(
            "{code}, a code of its own (the runtime's statuses are 0 and the negative PTO_ERR_*)"
        ),
    }
}

/// What the orchestrator thread hands back: the buffers' addresses and the entry's result.
type Orchestrated = Result<(Vec<u64>, i32), String>;

/// Runs `spec` on a fresh simulated machine shaped by `opts`.
pub fn run(spec: &RunSpec, opts: &SimBackendOptions) -> Result<SimOutcome, SimBackendError> {
    spec.check().map_err(SimBackendError::Spec)?;
    let caps = resolve(&spec.capacities, &spec.orchestration)?;
    let cfg = config(spec, &caps, opts)?;
    let heap_total = caps.heap_total(cfg.rings);
    let heap_bytes = usize::try_from(heap_total).map_err(|_| {
        SimBackendError::Spec(format!(
            "a heap of {heap_total} bytes does not fit this host's address space"
        ))
    })?;
    let kernels = kernel_table(spec)?;
    let so = orch_so::OrchSo::load(&spec.orchestration).map_err(SimBackendError::Load)?;
    let orch_label = spec.orchestration_name.clone();
    let buffers: Vec<(usize, Vec<u8>)> = spec
        .buffers
        .iter()
        .map(|b| (b.bytes, b.init.clone()))
        .collect();
    let memory_bytes = buffers
        .iter()
        .map(|(n, _)| n.next_multiple_of(64))
        .sum::<usize>()
        .saturating_add(heap_bytes)
        .saturating_add(1 << 16);
    let sim = SimOptions {
        host_addresses: true,
        memory_bytes,
        heap_bytes,
        check_accesses: opts.check_accesses,
        // A traced run's records carry its DAG, so the trace can be read back whole.
        record_producers: spec.records > 0,
        ..SimOptions::default()
    };
    let cores = (cfg.aic_cores, cfg.aiv_cores);
    let args = spec.args.clone();
    let entry = so.entry;
    let result = pto_sim::run_with(cfg, kernels, sim, opts.windows.clone(), move |o| {
        let memory = o.platform().memory();
        let mut addrs = Vec::with_capacity(buffers.len());
        for (i, (bytes, init)) in buffers.iter().enumerate() {
            let at = memory
                .alloc(*bytes, 64)
                .map_err(|e| format!("buffer {i} ({bytes} bytes): {e}"))?;
            memory
                .write_bytes(at, init)
                .map_err(|e| format!("buffer {i}'s initial bytes: {e}"))?;
            addrs.push(at);
        }
        let words: Vec<u64> = args
            .iter()
            .map(|a| match *a {
                OrchArg::Value(v) => v,
                OrchArg::Buffer(n) => addrs[n],
                OrchArg::Kernel(n) => n as u64,
            })
            .collect();
        let rc = {
            // A fatal signal in the orchestration names its SO.
            let _running = pto_sim::crash::orchestration(&orch_label);
            orch_ops::orchestrate(o, entry, &words)
        };
        if rc != 0 {
            o.abort(rc as i64 as u64);
        }
        Ok::<_, String>((addrs, rc))
    });
    drop(so);
    match result {
        Ok(run) => {
            let (addrs, _) = run.value.clone().map_err(SimBackendError::Buffers)?;
            let mut out = Vec::with_capacity(addrs.len());
            for (&at, b) in addrs.iter().zip(&spec.buffers) {
                let mut bytes = vec![0; b.bytes];
                run.memory
                    .read_bytes(at, &mut bytes)
                    .map_err(|e| SimBackendError::Buffers(e.to_string()))?;
                out.push(bytes);
            }
            Ok(SimOutcome {
                report: run.report,
                buffers: out,
                records: run.records,
                producers: run.producers,
                cores,
                ticks_per_us: run.ticks_per_us,
                kernels: run.kernels,
                accesses: run.accesses,
            })
        }
        Err(SimError::Run { error, mut run }) => {
            let returned = run.take_value::<Orchestrated>();
            match (error.cause, returned) {
                (FatalCause::Aborted { .. }, Some(Ok((_, code)))) if code != 0 => {
                    Err(SimBackendError::Orchestration {
                        code,
                        finished: run.report.finished,
                        submitted: run.report.submitted,
                    })
                }
                _ => Err(SimBackendError::Sim(SimError::Run { error, run })),
            }
        }
        Err(e) => Err(e.into()),
    }
}

/// The runtime's configuration for `spec` with `caps` on `opts`'s machine, as an NPU session
/// makes it.
fn config(
    spec: &RunSpec,
    caps: &RunCapacities,
    opts: &SimBackendOptions,
) -> Result<Config, SimBackendError> {
    if opts.clusters == 0 {
        return Err(SimBackendError::Spec(
            "a run needs at least one cluster".into(),
        ));
    }
    let cfg = caps.apply(Config {
        aic_cores: opts.clusters,
        aiv_cores: opts.clusters.saturating_mul(2),
        schedulers: opts.schedulers,
        task_timeout_us: opts.task_timeout_us,
        submit_timeout_us: opts.submit_timeout_us,
        deferred_timeout_us: opts.deferred_timeout_us,
        max_conditions: opts.max_conditions,
        profile: if spec.records > 0 {
            ProfileLevel::Tasks
        } else {
            ProfileLevel::Off
        },
        profile_capacity: spec.records.max(1),
        ..Config::default()
    });
    // `resolve` refused capacities a slot cannot carry.
    debug_assert!(ChipPlatform::fits(&cfg).is_ok());
    Ok(cfg)
}

/// The kernel table: each kernel's shared object loaded, its entry found by symbol, called
/// through a chip-shaped payload slot.
fn kernel_table(spec: &RunSpec) -> Result<KernelTable, SimBackendError> {
    let mut table = KernelTable::new();
    for (i, k) in spec.kernels.iter().enumerate() {
        let id = u32::try_from(i)
            .map_err(|_| SimBackendError::Spec(format!("{} kernels", spec.kernels.len())))?;
        let kernel = CKernel::load(&k.bytes, &k.file, &k.entry)
            .map_err(|e| SimBackendError::Load(e.to_string()))?;
        table.register_c(KernelId(id), k.name.as_str(), kernel);
    }
    Ok(table)
}
