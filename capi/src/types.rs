//! The C types of the ABI: plain `repr(C)` structs and enums, no behaviour.
#![forbid(unsafe_code)]

use core::ffi::c_void;

use pto_runtime_core::{Config, ProfileLevel};

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

/// One lane's payload, as `write_payload` gets it.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PtoPayload {
    /// The task's id.
    pub task: u64,
    /// The kernel.
    pub kernel: u32,
    /// This lane (0 for single-core tasks; 0 = AIC, 1 and 2 = AIV of a MIX task).
    pub lane: u8,
    /// Lanes of the task.
    pub lanes: u8,
    /// Whether the kernel's start and end times are wanted (`lane_times`).
    pub profile: u8,
    /// Scalar arguments.
    pub args: *const u64,
    /// How many.
    pub nargs: usize,
}

/// A deferred condition, as `condition` reports it.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct PtoCondition {
    /// 1: 32-bit counter, 2: 64-bit counter, 3: engine watermark.
    pub kind: u32,
    /// The counter's address, or the engine's index.
    pub word: u64,
    /// The value it must reach.
    pub expected: u64,
}

/// The machine, as the C image describes it. Every callback may be called from any
/// scheduler thread and the orchestrator thread at once, and must never block.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PtoPlatform {
    /// Passed back to every callback.
    pub ctx: *mut c_void,
    /// Counter ticks per microsecond (at least 1).
    pub ticks_per_us: u64,
    /// Kernels `0..kernels` can be dispatched.
    pub kernels: u32,
    /// The cycle counter.
    pub now: Option<extern "C" fn(ctx: *mut c_void) -> u64>,
    /// Writes the payload of `token` for `core` (buffer by token parity).
    pub write_payload:
        Option<extern "C" fn(ctx: *mut c_void, core: u16, token: u32, payload: *const PtoPayload)>,
    /// Rings `core`'s doorbell with `token`, with release ordering.
    pub ring_doorbell: Option<extern "C" fn(ctx: *mut c_void, core: u16, token: u32)>,
    /// `core`'s status word, `token | phase << 32 | code << 36` (phase 0 idle, 1 ack, 2 fin,
    /// 3 error), read with acquire ordering.
    pub core_status: Option<extern "C" fn(ctx: *mut c_void, core: u16) -> u64>,
    /// Optional: the kernel times of `token`; false if none.
    pub lane_times: Option<
        extern "C" fn(
            ctx: *mut c_void,
            core: u16,
            token: u32,
            start: *mut u64,
            end: *mut u64,
        ) -> bool,
    >,
    /// Optional: how many deferred conditions `token`'s kernel registered.
    pub conditions: Option<extern "C" fn(ctx: *mut c_void, core: u16, token: u32) -> u32>,
    /// Optional: condition `i` of `token`; false if not stored.
    pub condition: Option<
        extern "C" fn(
            ctx: *mut c_void,
            core: u16,
            token: u32,
            i: u32,
            out: *mut PtoCondition,
        ) -> bool,
    >,
    /// Optional: reads a watched word (kind as in [`PtoCondition`]); false if it cannot.
    pub read_watch:
        Option<extern "C" fn(ctx: *mut c_void, kind: u32, word: u64, out: *mut u64) -> bool>,
    /// Optional: called when a scheduler loop found nothing to do.
    pub spin_hint: Option<extern "C" fn(ctx: *mut c_void)>,
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

/// Storage for a runtime handle, owned by the C caller (opaque).
#[repr(C, align(64))]
#[derive(Debug)]
pub struct PtoRuntime {
    /// Opaque.
    pub opaque: [u64; 256],
}

/// Storage for the orchestrator handle, owned by the C caller (opaque).
#[repr(C, align(64))]
#[derive(Debug)]
pub struct PtoOrchestrator {
    /// Opaque.
    pub opaque: [u64; 192],
}
