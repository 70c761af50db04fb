//! The C ABI of `libpto_aicpu.so` (the `aicpu/` crate): what `init` and `exec` are given,
//! the table of operations an orchestration function submits through, the capacities an
//! orchestration SO declares ([`orch_config`]), and the report the last thread out writes to
//! device memory ([`report`]). `repr(C)`, offsets pinned below;
//! shared by the SO and whatever launches it (the host, the tests' harness). The C header
//! `aicpu/include/pto_aicpu.h` is generated from these by cbindgen (`capi/tests/header.rs`);
//! the one implementation of the operations table is [`crate::orch_ops`].
#![forbid(unsafe_code)]

use core::ffi::{c_char, c_void};
use core::mem::{offset_of, size_of};

use pto_runtime_core::Config;
use pto_runtime_core::ffi::{
    PtoBuffer, PtoConfig, PtoGraph, PtoInstance, PtoReplay, PtoTask, PtoTensorArg,
};

pub mod orch_config;
pub mod record_stream;
pub mod report;

pub use orch_config::{PTO_ORCH_CONFIG_ABI, PTO_ORCH_CONFIG_SYMBOL, PtoOrchConfig};
pub use record_stream::{PtoProducers, PtoRecordStream};
pub use report::{PtoAicpuCode, PtoAicpuReport};

/// The ABI version both sides must agree on (`abi` in every argument block). 2: the exec
/// arguments grew (tensor descriptors, watched words, engines, records), the report its
/// records and stall summary, the operations `status_str`, the handshake `aicore_exited`.
/// 3: a submitted task's SPMD blocks (`PtoTask::blocks`, in what was padding), the
/// operations `settle` and `wrote`. 4: a tensor argument's dtype and fifth dimension
/// (`PtoTensorArg`, 96 bytes). 5: a tensor argument's access is a set of flags
/// (`PtoAccess_READ`, `PtoAccess_WRITE`; none is refused), and a task may carry a predicate
/// (`PtoTask::predicate`, a `PtoPredicate`). 6: the graph operations (`graph_storage_size`
/// to `graph_close`). 7: task records stream to the host while the run goes
/// (`PtoAicpuExecArgs::record_stream`, a [`PtoRecordStream`], and one more thread that
/// pumps them; the report's `records_lost`), and so do the tasks' producers
/// (`producers`, `producer_stream`). 8: `graph_replay_with`, a replay's bindings in a
/// `PtoReplay`, with shifts.
pub const PTO_AICPU_ABI: u32 = 8;

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
    /// AICPU threads that take part: `config.schedulers + 1` (one orchestrates), and one
    /// more when `record_stream` is given (it pumps the records to the host).
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
    /// Two 640-byte payload slots per core, in the same order.
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
    /// The tensor descriptor area (0: none, and kernels see their tensors' addresses
    /// only): `2 * config.max_tensors` descriptors of 128 bytes per core, in core order,
    /// 64-byte aligned. Kernels read them through `pto_kernel_tensor`.
    pub tensors: u64,
    /// Ranges of device memory (`{base, len}` pairs of u64) the deferred counters of
    /// kernels may live in (0: none).
    pub watched: u64,
    /// Entries of `watched`.
    pub nwatched: u32,
    /// Engine completion watermarks at `engines` (one u64 each, raised as posts complete).
    pub nengines: u32,
    /// The engines' watermark words (0: none).
    pub engines: u64,
    /// The run's task records (`PtoRecord`, 88 bytes each; recorded when `config.profile`
    /// is 2), in the order tasks were submitted (0: none). Without `record_stream`, the
    /// last thread out copies the first `records_cap` there; with it, the ring the record
    /// pump writes while the run goes.
    pub records: u64,
    /// Records `records` holds.
    pub records_cap: u32,
    /// Zero.
    pub reserved: u32,
    /// The record stream's control block ([`PtoRecordStream`], 64-byte aligned; 0: no
    /// stream). With it, every record reaches the host, however many tasks the run has.
    pub record_stream: u64,
    /// The ring the orchestrating thread writes each task's producers into
    /// ([`PtoProducers`], 64 bytes each; 0: none), for the host to draw the run's DAG.
    pub producers: u64,
    /// Entries `producers` holds.
    pub producers_cap: u32,
    /// Zero.
    pub reserved2: u32,
    /// The producers' stream's control block ([`PtoRecordStream`], 64-byte aligned; 0: no
    /// producers streamed).
    pub producer_stream: u64,
}

impl Default for PtoAicpuExecArgs {
    /// No run: every address 0, the default configuration, [`PTO_AICPU_ABI`].
    fn default() -> Self {
        PtoAicpuExecArgs {
            abi: PTO_AICPU_ABI,
            threads: 0,
            cpu_mask: 0,
            region: 0,
            region_len: 0,
            config: PtoConfig::from_config(&Config::default()),
            handshakes: 0,
            slots: 0,
            regs: 0,
            nregs: 0,
            coherence: 0,
            kernels: 0,
            nkernels: 0,
            norch_args: 0,
            orchestrate: 0,
            orch_args: 0,
            heap_base: 0,
            heap_len: 0,
            report: 0,
            orch_so: 0,
            orch_so_len: 0,
            tensors: 0,
            watched: 0,
            nwatched: 0,
            nengines: 0,
            engines: 0,
            records: 0,
            records_cap: 0,
            reserved: 0,
            record_stream: 0,
            producers: 0,
            producers_cap: 0,
            reserved2: 0,
            producer_stream: 0,
        }
    }
}

/// The symbol an orchestration SO exports: a [`PtoOrchestrate`].
pub const PTO_ORCH_ENTRY: &core::ffi::CStr = c"pto_orchestrate";

/// The runtime operations an orchestration function is given. Each returns a `PtoStatus`
/// (0: success; one negative code per reason, see `pto_runtime.h`), through the core's one
/// C layer (`pto_runtime_core::ffi`), as the static library's entry points do.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PtoOrchOps {
    /// [`PTO_AICPU_ABI`].
    pub abi: u32,
    /// Zero.
    pub reserved: u32,
    /// The runtime's handle: pass it back to every operation.
    pub ctx: *mut c_void,
    /// Submits `task` (scalar arguments, dependencies by id, tensor arguments whose
    /// dependencies the runtime finds and which the kernel receives); its id goes to `id`
    /// (if not null).
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
    /// A static, NUL-terminated sentence for a status code (never null).
    pub status_str: unsafe extern "C" fn(code: i32) -> *const c_char,
    /// Waits (bounded by the submit timeout, the run going on) until no task submitted so
    /// far still works on the tile `arg` names: for a read, its writers; for a write, its
    /// readers too. Then the orchestration may read (or write) its bytes itself
    /// (`Orchestrator::settle`).
    pub settle: unsafe extern "C" fn(ctx: *mut c_void, arg: *const PtoTensorArg) -> i32,
    /// Says the orchestration wrote the tile `arg` names, before submitting the tasks that
    /// read it (`Orchestrator::wrote`).
    pub wrote: unsafe extern "C" fn(ctx: *mut c_void, arg: *const PtoTensorArg) -> i32,
    /// Writes to `bytes` the size of the storage (64-byte aligned) a graph of `tasks` tasks,
    /// `args` tensor arguments and `words` words (scalars and edges) needs
    /// (`pto_graph_storage_size`).
    pub graph_storage_size:
        unsafe extern "C" fn(tasks: u32, args: u32, words: u32, bytes: *mut usize) -> i32,
    /// Opens `g` recording a graph into `storage`, its boundary buffers `boundaries`
    /// (`pto_graph_record`).
    pub graph_record: unsafe extern "C" fn(
        ctx: *mut c_void,
        g: *mut PtoGraph,
        storage: *mut c_void,
        bytes: usize,
        tasks: u32,
        args: u32,
        words: u32,
        boundaries: *const PtoBuffer,
        nboundaries: usize,
    ) -> i32,
    /// Gives the recording an internal buffer, allocated per instance
    /// (`pto_graph_internal`).
    pub graph_internal: unsafe extern "C" fn(
        ctx: *mut c_void,
        g: *mut PtoGraph,
        bytes: u64,
        align: u64,
        out: *mut PtoBuffer,
    ) -> i32,
    /// Adds `task` to the recording, after the earlier nodes `after` (`pto_graph_add`).
    pub graph_add: unsafe extern "C" fn(
        ctx: *mut c_void,
        g: *mut PtoGraph,
        task: *const PtoTask,
        after: *const u32,
        nafter: usize,
        node: *mut u32,
    ) -> i32,
    /// Makes scalar `arg` of node `node` a patch, set by each replay from its scalar `slot`
    /// (`pto_graph_patch`).
    pub graph_patch: unsafe extern "C" fn(
        ctx: *mut c_void,
        g: *mut PtoGraph,
        node: u32,
        arg: u32,
        slot: u32,
    ) -> i32,
    /// Ends the recording (`pto_graph_finish`).
    pub graph_finish: unsafe extern "C" fn(ctx: *mut c_void, g: *mut PtoGraph) -> i32,
    /// Submits an instance of the graph with `buffers` bound to its boundaries and
    /// `scalars` to its patches, into `ring`, after `after` too; `flags` as
    /// `pto_graph_replay`'s (`pto_graph_replay`).
    pub graph_replay: unsafe extern "C" fn(
        ctx: *mut c_void,
        g: *mut PtoGraph,
        buffers: *const PtoBuffer,
        nbuffers: usize,
        scalars: *const u64,
        nscalars: usize,
        ring: u8,
        flags: u32,
        after: *const u64,
        nafter: usize,
        out: *mut PtoInstance,
    ) -> i32,
    /// Closes `g`: its storage is the orchestration's again (`pto_graph_close`).
    pub graph_close: unsafe extern "C" fn(ctx: *mut c_void, g: *mut PtoGraph) -> i32,
    /// Submits an instance of the graph as `r` says: `graph_replay`'s bindings, and shifts
    /// moving its tiles along each binding (`pto_graph_replay_with`).
    pub graph_replay_with: unsafe extern "C" fn(
        ctx: *mut c_void,
        g: *mut PtoGraph,
        r: *const PtoReplay,
        out: *mut PtoInstance,
    ) -> i32,
}

const _: () = {
    assert!(size_of::<PtoAicpuInitArgs>() == 40);
    assert!(offset_of!(PtoAicpuExecArgs, region) == 16);
    assert!(offset_of!(PtoOrchOps, submit) == 16);
    assert!(offset_of!(PtoOrchOps, alloc) == 40);
    assert!(offset_of!(PtoOrchOps, status_str) == 48);
    assert!(offset_of!(PtoOrchOps, settle) == 56);
    assert!(offset_of!(PtoOrchOps, wrote) == 64);
    assert!(offset_of!(PtoOrchOps, graph_storage_size) == 72);
    assert!(offset_of!(PtoOrchOps, graph_close) == 128);
    assert!(offset_of!(PtoOrchOps, graph_replay_with) == 136);
    assert!(size_of::<PtoReplay>() == 64);
    assert!(offset_of!(PtoAicpuExecArgs, orch_so_len) == 184);
    assert!(offset_of!(PtoAicpuExecArgs, tensors) == 192);
    assert!(offset_of!(PtoAicpuExecArgs, records_cap) == 232);
    assert!(offset_of!(PtoAicpuExecArgs, record_stream) == 240);
    assert!(offset_of!(PtoAicpuExecArgs, producer_stream) == 264);
    assert!(size_of::<PtoAicpuExecArgs>() == 272);
};
