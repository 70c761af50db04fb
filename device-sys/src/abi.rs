//! The C ABI of `libpto_aicpu.so` (the `aicpu/` crate): what `init` and `exec` are given,
//! the table of operations an orchestration function submits through, and the report the
//! last thread out writes to device memory. `repr(C)`, offsets pinned below; shared by the
//! SO and whatever launches it (the host, the tests' harness).
#![forbid(unsafe_code)]

use core::ffi::c_void;
use core::mem::{offset_of, size_of};

use pto_runtime_core::ffi::{PtoConfig, PtoReport, PtoTask};

/// The ABI version both sides must agree on (`abi` in every argument block).
pub const PTO_AICPU_ABI: u32 = 1;

/// What `pto_aicpu_init` is given: once per launch sequence (process and device).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct PtoAicpuInitArgs {
    /// [`PTO_AICPU_ABI`].
    pub abi: u32,
    /// The device (die) this AICPU serves.
    pub device_id: u32,
    /// System counter ticks per µs; 0 reads the counter's frequency.
    pub ticks_per_us: u64,
    /// The device-side watchdog: a run that takes longer is aborted, µs (shorter than the
    /// host's op-execute timeout). 0: 10 s.
    pub watchdog_us: u64,
    /// How long a run waits for every AICore executor (and every AICPU thread) to show up,
    /// µs. 0: 1 s.
    pub handshake_timeout_us: u64,
    /// How long the exit handshake waits for each core, µs. 0: 1 s.
    pub exit_timeout_us: u64,
}

/// An orchestration function: submits the run's tasks through `ops`; 0 for success, any
/// other value fails the run (reported as [`PtoAicpuCode::OrchestrationFailed`]).
pub type PtoOrchestrate =
    unsafe extern "C" fn(ops: *const PtoOrchOps, args: *const u64, nargs: u32) -> i32;

/// What `pto_aicpu_exec` is given, on each of its threads (CANN copies it per launch).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PtoAicpuExecArgs {
    /// [`PTO_AICPU_ABI`].
    pub abi: u32,
    /// AICPU threads that take part: `config.schedulers + 1` (one orchestrates).
    pub threads: u32,
    /// Threads only take part on CPUs whose bit is set (`sched_getcpu`); 0: any CPU.
    pub cpu_mask: u64,
    /// The runtime's region in device memory (64-byte aligned, zeroing not needed).
    pub region: u64,
    /// Its bytes.
    pub region_len: u64,
    /// The runtime's configuration.
    pub config: PtoConfig,
    /// `aic_cores + aiv_cores` handshake blocks (64 bytes each), AIC first.
    pub handshakes: u64,
    /// Two 512-byte payload slots per core, in the same order.
    pub slots: u64,
    /// Register window addresses by physical core id.
    pub regs: u64,
    /// Entries of `regs`.
    pub nregs: u32,
    /// 0: caches coherent with the cores; 1: the AICPU maintains them.
    pub coherence: u32,
    /// Kernel addresses (`void (*)(int64_t *)`) by kernel id.
    pub kernels: u64,
    /// Entries of `kernels`.
    pub nkernels: u32,
    /// Arguments of the orchestration function.
    pub norch_args: u32,
    /// The orchestration function ([`PtoOrchestrate`]).
    pub orchestrate: u64,
    /// Its arguments.
    pub orch_args: u64,
    /// The output heap in device memory: base (0: none).
    pub heap_base: u64,
    /// Its bytes.
    pub heap_len: u64,
    /// Where the last thread out writes the [`PtoAicpuReport`] (device memory).
    pub report: u64,
    /// The user's orchestration SO, as bytes in device memory (0: call `orchestrate`
    /// instead). The orchestrating thread writes it to a temporary file, `dlopen`s it,
    /// deletes the file and calls its [`PTO_ORCH_ENTRY`].
    pub orch_so: u64,
    /// Its bytes.
    pub orch_so_len: u64,
}

/// The symbol an orchestration SO exports: a [`PtoOrchestrate`].
pub const PTO_ORCH_ENTRY: &core::ffi::CStr = c"pto_orchestrate";

/// The runtime operations an orchestration function is given.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PtoOrchOps {
    /// [`PTO_AICPU_ABI`].
    pub abi: u32,
    /// Zero.
    pub reserved: u32,
    /// The runtime's handle: pass it back to every operation.
    pub ctx: *mut c_void,
    /// Submits `task`; its id goes to `id` (if not null). A `PtoStatus` (0: success).
    pub submit: unsafe extern "C" fn(ctx: *mut c_void, task: *const PtoTask, id: *mut u64) -> i32,
    /// Opens a scope: the tasks submitted until its end are reclaimed only after it ended.
    pub scope_begin: unsafe extern "C" fn(ctx: *mut c_void) -> i32,
    /// Ends the innermost open scope.
    pub scope_end: unsafe extern "C" fn(ctx: *mut c_void) -> i32,
    /// Allocates `bytes` (aligned to `align`, a power of two) of `ring`'s output heap for the
    /// next task submitted to `ring`; its device address goes to `addr`.
    pub alloc: unsafe extern "C" fn(
        ctx: *mut c_void,
        ring: u8,
        bytes: u64,
        align: u64,
        addr: *mut u64,
    ) -> i32,
}

/// How a run ended, as the report's `code` says.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PtoAicpuCode {
    /// Every task finished.
    Ok = 0,
    /// The arguments are malformed (null where a block is needed, wrong ABI, sizes).
    BadArgs = 1,
    /// `exec` ran before `init`.
    NotInitialized = 2,
    /// The configuration or region was refused (`detail`: the runtime's reason).
    BadConfig = 3,
    /// Fewer AICPU threads took part than `threads` within the handshake timeout
    /// (`value`: how many did).
    MissingThreads = 4,
    /// A core's executor did not answer the handshake (`core`).
    CoreNotUp = 5,
    /// A core reported a physical id without a register window (`core`, `value`: the id).
    BadCoreId = 6,
    /// A core reported the wrong type (`core`, `value`: what it reported).
    WrongCoreType = 7,
    /// A core's `COND` held a value an earlier run left (`core`, `value`).
    StaleCond = 8,
    /// The run failed: `run.error_kind` and friends say how (kernel error, task timeout).
    RunFailed = 9,
    /// The orchestration function returned non-zero (`value`).
    OrchestrationFailed = 10,
    /// The device watchdog aborted the run (`value`: the limit in ms).
    Watchdog = 11,
    /// A core did not acknowledge the exit (`core`, `value`: its `COND`); the run may
    /// otherwise have succeeded.
    ExitNotAcked = 12,
    /// The orchestration SO could not be loaded (`value`: 1 the temporary file could not
    /// be written, 2 `dlopen` refused it, 3 it has no `pto_orchestrate`).
    OrchestrationLoad = 13,
}

impl PtoAicpuCode {
    /// The code from its number (unknown numbers are `BadArgs`).
    pub fn from_u32(v: u32) -> Self {
        use PtoAicpuCode::*;
        [
            Ok,
            BadArgs,
            NotInitialized,
            BadConfig,
            MissingThreads,
            CoreNotUp,
            BadCoreId,
            WrongCoreType,
            StaleCond,
            RunFailed,
            OrchestrationFailed,
            Watchdog,
            ExitNotAcked,
            OrchestrationLoad,
        ]
        .get(v as usize)
        .copied()
        .unwrap_or(BadArgs)
    }
}

/// What a run did, written by the last AICPU thread out.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct PtoAicpuReport {
    /// A [`PtoAicpuCode`] (the first thing that went wrong).
    pub code: u32,
    /// The core it concerns, or `0xffff`.
    pub core: u32,
    /// A value the code explains.
    pub value: u64,
    /// Threads that took part.
    pub threads: u32,
    /// Cores whose exit was acknowledged.
    pub cores_closed: u32,
    /// Which run of the loaded SO this was (1 for the first). 0 means no thread wrote a
    /// report (none took part: the CPU mask excluded them all): the host zeroes the block
    /// before each run.
    pub run: u64,
    /// The scheduler's report.
    pub sched: PtoReport,
}

impl core::fmt::Display for PtoAicpuReport {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        use PtoAicpuCode::*;
        let (c, v) = (self.core, self.value);
        let s = &self.sched;
        if self.run == 0 && self.code == 0 {
            return write!(
                f,
                "no report: no AICPU thread took part (check cpu_mask and the thread count)"
            );
        }
        match PtoAicpuCode::from_u32(self.code) {
            Ok => write!(f, "run {}: {} tasks finished", self.run, s.finished),
            BadArgs => write!(f, "run {}: malformed exec arguments", self.run),
            NotInitialized => write!(f, "run {}: exec before init", self.run),
            BadConfig => write!(f, "run {}: configuration or region refused", self.run),
            MissingThreads => write!(
                f,
                "run {}: only {v} AICPU threads took part in time",
                self.run
            ),
            CoreNotUp => write!(f, "run {}: core {c}: no AICore executor answered", self.run),
            BadCoreId => write!(
                f,
                "run {}: core {c}: physical id {v} has no register window",
                self.run
            ),
            WrongCoreType => write!(f, "run {}: core {c}: wrong core type {v}", self.run),
            StaleCond => write!(
                f,
                "run {}: core {c}: COND holds {v:#010x} left by an earlier run",
                self.run
            ),
            RunFailed => write!(
                f,
                "run {}: failed: error kind {} on task {:#x}, core {}, detail {}",
                self.run, s.error_kind, s.error_task, s.error_core, s.error_detail
            ),
            OrchestrationFailed => {
                write!(
                    f,
                    "run {}: the orchestration returned {}",
                    self.run, v as i64
                )
            }
            Watchdog => write!(
                f,
                "run {}: aborted by the device watchdog after {v} ms",
                self.run
            ),
            OrchestrationLoad => write!(
                f,
                "run {}: the orchestration SO could not be loaded: {}",
                self.run,
                match v {
                    1 => "its temporary file could not be written",
                    2 => "dlopen refused it",
                    _ => "it exports no `pto_orchestrate`",
                }
            ),
            ExitNotAcked => write!(
                f,
                "run {}: core {c}: exit not acknowledged (COND {v:#010x})",
                self.run
            ),
        }
    }
}

const _: () = {
    assert!(size_of::<PtoAicpuInitArgs>() == 40);
    assert!(offset_of!(PtoAicpuExecArgs, region) == 16);
    assert!(offset_of!(PtoOrchOps, submit) == 16);
    assert!(offset_of!(PtoOrchOps, alloc) == 40);
    assert!(offset_of!(PtoAicpuReport, sched) == 32);
};
