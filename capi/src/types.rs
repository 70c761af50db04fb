//! The C types of the ABI: plain `repr(C)` structs and enums, no behaviour.
#![forbid(unsafe_code)]

use core::ffi::c_void;

pub use pto_runtime_core::ffi::{
    PtoConfig, PtoRecord, PtoReport, PtoStatus, PtoTask, PtoTensor, PtoTensorArg,
};

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
    /// Lanes of one block of the task (3 for MIX, else 1).
    pub lanes: u8,
    /// Whether the kernel's start and end times are wanted (`lane_times`).
    pub profile: u8,
    /// This execution's SPMD block (0 for a task of one block).
    pub block: u16,
    /// Blocks of the task (1 unless it asked for more).
    pub blocks: u16,
    /// Scalar arguments.
    pub args: *const u64,
    /// How many.
    pub nargs: usize,
    /// Tensor arguments, in the order the task gave them (null when there are none).
    pub tensors: *const PtoTensor,
    /// How many.
    pub ntensors: usize,
}

/// A deferred condition, as `condition` reports it (the layout of the core's
/// `RawCondition`). Any other kind fails the run with a bad-condition error.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct PtoCondition {
    /// 1: 32-bit counter, 2: 64-bit counter, 3: engine watermark.
    pub kind: u32,
    /// Zero.
    pub reserved: u32,
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
    /// `core`'s status word, read with acquire ordering: the token in bits 0..31, bit 31 set
    /// for FIN (clear: ACK); 0 before the core reported anything. A core writes a token's
    /// result word before any report about that token or a later one, and continues its
    /// tokens after the last one its status word holds.
    pub core_status: Option<extern "C" fn(ctx: *mut c_void, core: u16) -> u32>,
    /// The result word of `token`'s slot (by parity) on `core`: the token in bits 0..31,
    /// bit 31 set if its kernel failed, the error code in bits 32..64.
    pub result: Option<extern "C" fn(ctx: *mut c_void, core: u16, token: u32) -> u64>,
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
    /// The output heap: device memory the orchestrator hands out (`pto_alloc`, a graph's
    /// internal buffers), split evenly between the rings; its base (64-byte aligned)...
    pub heap_base: u64,
    /// ... and its bytes (0: no heap, and every allocation is `PTO_ERR_HEAP_TOO_SMALL`).
    pub heap_len: u64,
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
