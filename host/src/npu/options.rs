//! What a session on the NPU is opened with: the device, the artifacts, the timeouts (in
//! the order CANN needs them: device watchdog < op-execute < stream sync), the cores.

use std::path::PathBuf;

use super::error::NpuError;

/// Timeouts, innermost first. The device's watchdog stops a run and reports before CANN's
/// op-execute timeout fires, which fires before the host stops waiting on a stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeouts {
    /// The AICPU runtime's watchdog for one run, µs.
    pub device_watchdog_us: u64,
    /// How long a task may run before the AICPU fails it, µs.
    pub task_us: u64,
    /// How long a submit (or an alloc) waits for room in a full task window (or heap), µs.
    pub submit_us: u64,
    /// How long a finished task's deferred conditions may take to hold, µs.
    pub deferred_us: u64,
    /// How long the AICPU waits for each core's executor to come up, and for its
    /// acknowledgement of the exit, µs.
    pub core_handshake_us: u64,
    /// CANN's op-execute timeout (`aclrtSetOpExecuteTimeOutV2`), µs.
    pub op_execute_us: u64,
    /// How long the host waits on a stream (`aclrtSynchronizeStreamWithTimeout`), ms.
    pub stream_sync_ms: i32,
    /// How long the recovery after a failure waits for the device to drain, ms.
    pub recovery_ms: i32,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            device_watchdog_us: 15_000_000,
            task_us: 10_000_000,
            submit_us: 10_000_000,
            deferred_us: 10_000_000,
            core_handshake_us: 5_000_000,
            op_execute_us: 45_000_000,
            stream_sync_ms: 50_000,
            recovery_ms: 5_000,
        }
    }
}

impl Timeouts {
    /// Refuses timeouts out of order (each must be shorter than the next).
    pub fn check(&self) -> Result<(), NpuError> {
        let t = self;
        let sync_us = (t.stream_sync_ms.max(0) as u64) * 1000;
        let inner = t.task_us.max(t.submit_us).max(t.deferred_us);
        if !(inner <= t.device_watchdog_us
            && t.device_watchdog_us < t.op_execute_us
            && t.op_execute_us < sync_us)
        {
            return Err(NpuError::Invalid(format!(
                "timeouts out of order: want task ({} us), submit ({} us) and deferred ({} us) \
                 <= device watchdog ({} us) < op-execute ({} us) < stream sync ({} ms), so the \
                 device reports before the host gives up",
                t.task_us,
                t.submit_us,
                t.deferred_us,
                t.device_watchdog_us,
                t.op_execute_us,
                t.stream_sync_ms
            )));
        }
        Ok(())
    }
}

/// The files a session loads.
#[derive(Clone, Debug)]
pub struct Artifacts {
    /// `libpto_aicpu.so` for the AICPU (aarch64 on a chip).
    pub aicpu_so: PathBuf,
    /// `libpto_dispatcher.so` (the bootstrap's dispatcher).
    pub dispatcher_so: PathBuf,
    /// The AICore executor, an ELF object (`aicore_executor.o` from `ccec`).
    pub aicore_executor: PathBuf,
}

/// How a session is opened.
#[derive(Clone, Debug)]
pub struct NpuOptions {
    /// ACL's logical device id.
    pub device: i32,
    /// The files to load.
    pub artifacts: Artifacts,
    /// Directories to look for CANN's libraries in first.
    pub cann_dirs: Vec<PathBuf>,
    /// Timeouts.
    pub timeouts: Timeouts,
    /// AICore clusters to use (1 AIC + 2 AIV each); 0: as many as the stream allows.
    pub clusters: u32,
    /// Scheduler threads on the AICPU (one more thread orchestrates); at most 5.
    pub schedulers: u8,
    /// The device counter's ticks per µs; 0: the AICPU reads its counter's frequency.
    pub ticks_per_us: u64,
    /// Most deferred conditions one task may register.
    pub max_conditions: u16,
}

impl NpuOptions {
    /// Defaults for `device` with `artifacts`.
    pub fn new(device: i32, artifacts: Artifacts) -> Self {
        NpuOptions {
            device,
            artifacts,
            cann_dirs: Vec::new(),
            timeouts: Timeouts::default(),
            clusters: 0,
            schedulers: 2,
            ticks_per_us: 0,
            max_conditions: pto_runtime_core::Config::default().max_conditions,
        }
    }
}
