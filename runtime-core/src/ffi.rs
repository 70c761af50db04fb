//! The C view of the core: `repr(C)` types shared by its C ABIs (the static library of
//! `pto-runtime-capi`, the AICPU device image): status codes, the configuration, a task to
//! submit, a run's report. Conversions only; [`submit_c`] takes a task from C.
#![forbid(unsafe_code)]

use crate::observe::profile::ProfileLevel;
use crate::region::config::Config;
use crate::runtime::RunReport;

pub use crate::region::raw::ffi::submit_c;

/// What an entry point returns: 0 for success, a negative code otherwise.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PtoStatus {
    /// Success.
    PtoOk = 0,
    /// A required pointer was null.
    PtoErrNull = -1,
    /// The configuration is invalid, or the region too small or misaligned.
    PtoErrConfig = -2,
    /// The orchestrator or that scheduler is taken already, or no such scheduler.
    PtoErrClaimed = -3,
    /// The task was refused (bad kernel, arguments or dependencies, window full past the
    /// timeout); nothing of it was kept.
    PtoErrSubmit = -4,
    /// The run failed: `pto_runtime_report` says how.
    PtoErrRun = -5,
    /// The handle is not open (closed already, or never opened).
    PtoErrClosed = -6,
}

/// The runtime's sizes and limits (see `pto_runtime_core::Config`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PtoConfig {
    /// Task rings.
    pub rings: u8,
    /// Scheduler threads.
    pub schedulers: u8,
    /// Task slots per ring (a power of two).
    pub task_window: u32,
    /// Most dependencies per task.
    pub max_deps: u16,
    /// Most scalar arguments per task.
    pub max_args: u16,
    /// Most tensor arguments per task.
    pub max_tensors: u16,
    /// Most deferred conditions per task.
    pub max_conditions: u16,
    /// AIC (cube) cores.
    pub aic_cores: u16,
    /// AIV (vector) cores.
    pub aiv_cores: u16,
    /// Deferred tasks each scheduler can hold.
    pub deferred_capacity: u32,
    /// How long a submit waits for a free slot, µs.
    pub submit_timeout_us: u64,
    /// How long a dispatched task may run, µs.
    pub task_timeout_us: u64,
    /// How long a deferred condition may take to hold, µs.
    pub deferred_timeout_us: u64,
    /// 0: no profiling, 1: phase counters, 2: counters and one record per task.
    pub profile: u8,
    /// Task records the profile ring holds.
    pub profile_capacity: u32,
}

impl PtoConfig {
    /// The C view of `c`.
    pub fn from_config(c: &Config) -> Self {
        PtoConfig {
            rings: c.rings,
            schedulers: c.schedulers,
            task_window: c.task_window,
            max_deps: c.max_deps,
            max_args: c.max_args,
            max_tensors: c.max_tensors,
            max_conditions: c.max_conditions,
            aic_cores: c.aic_cores,
            aiv_cores: c.aiv_cores,
            deferred_capacity: c.deferred_capacity,
            submit_timeout_us: c.submit_timeout_us,
            task_timeout_us: c.task_timeout_us,
            deferred_timeout_us: c.deferred_timeout_us,
            profile: c.profile as u8,
            profile_capacity: c.profile_capacity,
        }
    }

    /// The runtime's configuration; `None` for an unknown profile level.
    pub fn to_config(&self) -> Option<Config> {
        let profile = match self.profile {
            0 => ProfileLevel::Off,
            1 => ProfileLevel::Counters,
            2 => ProfileLevel::Tasks,
            _ => return None,
        };
        Some(Config {
            rings: self.rings,
            schedulers: self.schedulers,
            task_window: self.task_window,
            max_deps: self.max_deps,
            max_args: self.max_args,
            max_tensors: self.max_tensors,
            max_conditions: self.max_conditions,
            aic_cores: self.aic_cores,
            aiv_cores: self.aiv_cores,
            deferred_capacity: self.deferred_capacity,
            submit_timeout_us: self.submit_timeout_us,
            task_timeout_us: self.task_timeout_us,
            deferred_timeout_us: self.deferred_timeout_us,
            profile,
            profile_capacity: self.profile_capacity,
            ..Config::default()
        })
    }
}

/// A task to submit.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PtoTask {
    /// The kernel.
    pub kernel: u32,
    /// 0: AIC, 1: AIV, 2: MIX (one AIC and two AIV lanes), 3: DUMMY (no core).
    pub class: u8,
    /// The ring.
    pub ring: u8,
    /// Scalar arguments.
    pub args: *const u64,
    /// How many.
    pub nargs: usize,
    /// Ids of tasks that must finish first.
    pub deps: *const u64,
    /// How many.
    pub ndeps: usize,
}

/// What a run did.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct PtoReport {
    /// Tasks submitted.
    pub submitted: u64,
    /// Tasks finished.
    pub finished: u64,
    /// Lane dispatches.
    pub dispatched: u64,
    /// Slots still held (0 after a clean run).
    pub live_slots: u64,
    /// 0 if the run succeeded, else the fatal error's kind (`pto_runtime_core::FatalKind`).
    pub error_kind: u32,
    /// The task of the error, or 0.
    pub error_task: u64,
    /// The core of the error, or `0xffff`.
    pub error_core: u16,
    /// The error's first detail word.
    pub error_detail: u64,
}

impl PtoReport {
    /// The C view of `r`.
    pub fn from_report(r: &RunReport) -> Self {
        let e = r.error;
        PtoReport {
            submitted: r.submitted,
            finished: r.finished,
            dispatched: r.dispatched,
            live_slots: r.live_slots,
            error_kind: e.map_or(0, |e| e.kind() as u32),
            error_task: e.and_then(|e| e.task).map_or(0, |t| t.raw()),
            error_core: e.and_then(|e| e.core).map_or(0xffff, |c| c.0),
            error_detail: e.map_or(0, |e| crate::observe::status::Packed::of(e.cause).detail),
        }
    }
}
