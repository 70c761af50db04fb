//! Everything the host launch path knows of `libpto_aicpu.so`'s ABI (`pto_device_sys::abi`),
//! in one file so an ABI change is ported here alone: the `init` and `exec` payloads, the
//! report read back from device memory, and the device's run status as a sentence.
#![forbid(unsafe_code)]

use pto_device_sys::abi::{
    PTO_AICPU_ABI, PtoAicpuCode, PtoAicpuExecArgs, PtoAicpuInitArgs, PtoAicpuReport,
};
use pto_runtime_core::ffi::PtoConfig;
use pto_runtime_core::{Config, FatalKind};

/// Bytes of the report block in device memory.
pub const REPORT_BYTES: usize = size_of::<PtoAicpuReport>();

/// The device addresses and counts one `exec` needs.
#[derive(Clone, Copy, Debug)]
pub struct ExecAddrs {
    /// The runtime's region and its bytes.
    pub region: (u64, u64),
    /// Handshake blocks, payload slots.
    pub handshakes: u64,
    /// Two payload slots per core.
    pub slots: u64,
    /// Register window table by physical core id, and its entries.
    pub regs: (u64, u32),
    /// Kernel address table and its entries.
    pub kernels: (u64, u32),
    /// The orchestration SO's bytes in device memory, and their length.
    pub orch_so: (u64, u64),
    /// The orchestration's arguments and their count.
    pub orch_args: (u64, u32),
    /// The output heap and its bytes.
    pub heap: (u64, u64),
    /// Where the report goes.
    pub report: u64,
    /// The tensor descriptor area (`2 * max_tensors` descriptors per core).
    pub tensors: u64,
    /// The watched ranges (`{base, len}` pairs in device memory) and their count.
    pub watched: (u64, u32),
    /// Where the task records go and how many fit (0: none).
    pub records: (u64, u32),
    /// The record stream's control block (0: records copied at the end, not streamed).
    pub record_stream: u64,
    /// Where each task's producers go and how many entries fit (0: none).
    pub producers: (u64, u32),
    /// The producers' stream's control block (0: none).
    pub producer_stream: u64,
}

/// The `init` payload.
pub fn init_payload(
    device: u32,
    ticks_per_us: u64,
    watchdog_us: u64,
    handshake_us: u64,
) -> PtoAicpuInitArgs {
    PtoAicpuInitArgs {
        abi: PTO_AICPU_ABI,
        device_id: device,
        ticks_per_us,
        watchdog_us,
        handshake_timeout_us: handshake_us,
        exit_timeout_us: handshake_us,
    }
}

/// The `exec` payload for `cfg` on `threads` AICPU threads.
pub fn exec_payload(cfg: &Config, threads: u32, a: &ExecAddrs) -> PtoAicpuExecArgs {
    PtoAicpuExecArgs {
        abi: PTO_AICPU_ABI,
        threads,
        cpu_mask: 0,
        region: a.region.0,
        region_len: a.region.1,
        config: PtoConfig::from_config(cfg),
        handshakes: a.handshakes,
        slots: a.slots,
        regs: a.regs.0,
        nregs: a.regs.1,
        coherence: 0,
        kernels: a.kernels.0,
        nkernels: a.kernels.1,
        norch_args: a.orch_args.1,
        orchestrate: 0,
        orch_args: a.orch_args.0,
        heap_base: a.heap.0,
        heap_len: a.heap.1,
        report: a.report,
        orch_so: a.orch_so.0,
        orch_so_len: a.orch_so.1,
        tensors: a.tensors,
        watched: a.watched.0,
        nwatched: a.watched.1,
        records: a.records.0,
        records_cap: a.records.1,
        record_stream: a.record_stream,
        producers: a.producers.0,
        producers_cap: a.producers.1,
        producer_stream: a.producer_stream,
        ..PtoAicpuExecArgs::default()
    }
}

/// The name of a run-status error kind (`pto_runtime_core::FatalKind`'s code and
/// [`FatalKind::name`]): "none" for 0, "unknown" for a code this build does not know.
pub fn fatal_kind_name(kind: u32) -> &'static str {
    match kind {
        0 => "none",
        k => FatalKind::from_u32(k).map_or("unknown", FatalKind::name),
    }
}

/// The device's run status, as the simulator reports it: what ended the run, and for a
/// failed run its kind, task and core.
#[derive(Clone, Copy, Debug)]
pub struct DeviceStatus(pub PtoAicpuReport);

impl DeviceStatus {
    /// Whether the device says the run succeeded.
    pub fn ok(&self) -> bool {
        self.0.run != 0 && self.0.code == PtoAicpuCode::Ok as u32
    }

    /// The run-status error kind (0: none).
    pub fn error_kind(&self) -> u32 {
        self.0.sched.error_kind
    }

    /// Tasks finished.
    pub fn finished(&self) -> u64 {
        self.0.sched.finished
    }

    /// Tasks the run skipped (a false predicate at dispatch).
    pub fn skipped(&self) -> u64 {
        self.0.sched.skipped
    }
}

impl core::fmt::Display for DeviceStatus {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let r = &self.0;
        write!(f, "{r}")?;
        if PtoAicpuCode::from_u32(r.code) == PtoAicpuCode::RunFailed {
            let s = &r.sched;
            write!(
                f,
                " [run status: {} on task {:#x}, core {}]",
                fatal_kind_name(s.error_kind),
                s.error_task,
                s.error_core
            )?;
        }
        Ok(())
    }
}
