//! What the AICPU and the AICore executor share on the chip, layouts pinned: the per-core
//! handshake block and the two payload slots each core reads its work from (device memory),
//! the arguments the host launches the executors with, and the offsets, strides and control
//! values of a core's register window. These declarations are the only ones: the executor's
//! C view of them (`device-sys/aicore/pto_aicore_layout.h`, included by `pto_aicore.h`) is
//! generated from this file by cbindgen (`PTO_BLESS=1 cargo test -p pto-runtime-capi --test
//! header` rewrites it, and that test fails while it is stale).
#![forbid(unsafe_code)]

use core::mem::{offset_of, size_of};

use pto_runtime_core::{MAX_ARGS, RawCondition, StatusWord, Token};

/// `FAST_PATH_ENABLE`: the AICPU writes [`FAST_PATH_OPEN`] when it opens a core's window and
/// [`FAST_PATH_CLOSED`] when it closes it.
pub const REG_FAST_PATH: usize = 0x18;
/// `DATA_MAIN_BASE`: the AICPU writes a token (dispatch), [`DMB_IDLE`] or [`DMB_EXIT`]; the
/// AICore reads it.
pub const REG_DATA_MAIN_BASE: usize = 0xA0;
/// `COND`: the AICore writes ACK (the token) or FIN (bit 31 and the token); the AICPU reads
/// it.
pub const REG_COND: usize = 0x4C8;
/// Bytes of a register window the AICPU touches (`COND` is the last word).
pub const WINDOW_BYTES: usize = REG_COND + 4;

/// The register windows of one AICore cluster are this far apart (the host's table).
pub const CLUSTER_STRIDE: usize = 8 << 20;
/// The subcores of a cluster (AIC, then two AIV) are this far apart inside it.
pub const SUBCORE_STRIDE: usize = 1 << 20;
/// Physical core ids the handshake accepts are below this (25 clusters of 3).
pub const MAX_PHYSICAL_CORES: u32 = 75;

/// `FAST_PATH_ENABLE` while the AICPU drives the core.
pub const FAST_PATH_OPEN: u32 = 0xE;
/// `FAST_PATH_ENABLE` once the AICPU let the core go.
pub const FAST_PATH_CLOSED: u32 = 0xF;
/// `DATA_MAIN_BASE`: nothing to do.
pub const DMB_IDLE: u32 = 0x7FFF_FFFD;
/// `DATA_MAIN_BASE`: leave the executor loop.
pub const DMB_EXIT: u32 = 0x7FFF_FFF0;
/// `COND`'s FIN bit: the core finished the token it carries (clear: it took it).
pub const COND_FIN: u32 = 0x8000_0000;
/// `COND` once the core acknowledged the exit: FIN with the exit acknowledgement value.
pub const COND_EXIT_ACK: u32 = 0xFFFF_FFFE;
/// The last token before the sequence wraps to 1 (the top 16 values are control values).
pub const TOKEN_LAST: u32 = 0x7FFF_FFEF;
/// The result code of a slot whose kernel address is 0: the executor fails it rather than
/// jump to address 0.
pub const FAIL_NO_KERNEL: u32 = 0xFFFF_0001;

/// `core_type` in a handshake: a cube core.
pub const CORE_AIC: u32 = 0;
/// `core_type` in a handshake: a vector core.
pub const CORE_AIV: u32 = 1;

/// The version of the kernel ABI (the slot and tensor descriptor layouts and the calls a
/// kernel makes, `pto_aicore.h`'s `PTO_KERNEL_ABI_VERSION`). A kernel built for the
/// simulator carries it as `pto_kernel_abi_version`; one with another version is refused.
/// 5: a tensor descriptor's access is a set of flags (`PtoAccess_READ`, `PtoAccess_WRITE`).
pub const KERNEL_ABI_VERSION: u32 = 5;

/// Deferred conditions a payload slot holds.
pub const SLOT_CONDITIONS: usize = 7;
/// Argument words a payload slot holds: a task's tensor addresses and scalar arguments
/// together (a run's `max_tensors + max_args` may not exceed it): room for 16 tensors and
/// the most scalar arguments a task may have (`16 + MAX_ARGS`, spelled out for C).
pub const SLOT_ARGS: usize = 48;
/// Bytes of one tensor descriptor in a run's descriptor area.
pub const TENSOR_DESC_BYTES: usize = 128;

/// One core's handshake block in device memory (a cache line of its own).
///
/// The host zeroes `aicore_done` and `aicpu_ready` before it launches the executors. The AICore writes
/// `core_type` and `physical_core_id`, then `aicore_done = block_idx + 1`, and writes the
/// line back. The AICPU then writes `task` (the address of the core's two [`Slot`]s) and
/// `base_token`, clears `aicore_exited`, and sets `aicpu_ready`; at exit it writes
/// `base_token` again (the last token it gave the core), so the next run's tokens continue
/// after it, and waits for `aicore_exited` and the acknowledgement in `COND`.
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug, Default)]
pub struct Handshake {
    /// Set to 1 by the AICPU once `task` and `base_token` are written.
    pub aicpu_ready: u32,
    /// `block_idx + 1`, written by the AICore once it is up (0: not yet).
    pub aicore_done: u32,
    /// Device address of the core's two payload slots.
    pub task: u64,
    /// [`CORE_AIC`] or [`CORE_AIV`], written by the AICore.
    pub core_type: u32,
    /// The core's physical id (`get_coreid() & 0xFFF`), written by the AICore: the index of
    /// its register window in the host's table.
    pub physical_core_id: u32,
    /// The token before the first one of this run.
    pub base_token: u32,
    /// Set to 1 by the AICore as it leaves its loop at the exit, before it acknowledges the
    /// exit in `COND`; cleared by the AICPU when it opens the core. `COND` alone cannot say
    /// whether this run's executor left: an earlier run's acknowledgement reads the same.
    pub aicore_exited: u32,
}

/// What the host launches the executor kernels with (`blockDim` = clusters): one block of
/// 16 bytes in device memory, read through the kernel's argument pointer.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct PtoAicoreArgs {
    /// Device address of `aic_cores + aiv_cores` [`Handshake`] blocks, AIC first.
    pub handshakes: u64,
    /// AIC cores (one per cluster): the first AIV's handshake follows theirs.
    pub aic_cores: u32,
    /// Zero.
    pub reserved: u32,
}

/// One payload slot (640 bytes in device memory; two per core, chosen by token parity).
///
/// The AICPU writes everything but `result`, `fail_code`, `times` and the conditions (and
/// the token's tensor descriptors, when the run has a descriptor area) before it writes the
/// token to `DATA_MAIN_BASE`. The AICore invalidates the slot, clears
/// `fail_code` and `ncond`, reports ACK, calls the kernel at `kernel_addr` with `args`, then
/// writes `result` (a [`pto_runtime_core::ResultWord`]), writes the slot back and reports FIN.
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug)]
pub struct Slot {
    /// The token's result word, written by the AICore before its FIN.
    pub result: u64,
    /// Device address of the kernel (`void (*)(int64_t *args)`).
    pub kernel_addr: u64,
    /// The task's raw id.
    pub task: u64,
    /// The kernel's id.
    pub kernel: u32,
    /// `lane | lanes << 8 | nargs << 16 | profile << 24`.
    pub shape: u32,
    /// `[start, end]` of the kernel in system counter ticks (if the shape asks).
    pub times: [u64; 2],
    /// Non-zero if the kernel failed: its code (kernels set it through `pto_kernel_fail`).
    pub fail_code: u32,
    /// The task's tensor arguments: the first `ntensors` words of `args` are their base
    /// addresses.
    pub ntensors: u32,
    /// Device address of the slot's `ntensors` tensor descriptors
    /// ([`pto_runtime_core::ffi::PtoTensor`], 64 bytes each; what `pto_kernel_tensor`
    /// returns), or 0 when the run has no descriptor area.
    pub tensors: u64,
    /// The kernel's arguments, `nargs` words: the tensors' base addresses, then the scalar
    /// arguments.
    pub args: [u64; SLOT_ARGS],
    /// Deferred conditions the kernel registered (may exceed what `conditions` holds).
    pub ncond: u32,
    /// `block | blocks << 16`: the SPMD block this execution runs, of how many (written
    /// by the AICPU with the head; what `pto_kernel_block_idx` and `pto_kernel_block_num`
    /// read).
    pub block: u32,
    /// The first [`SLOT_CONDITIONS`] of them.
    pub conditions: [RawCondition; SLOT_CONDITIONS],
    /// Zero.
    pub tail: [u64; 2],
}

impl Slot {
    /// A slot as device memory holds it when zeroed.
    pub const ZERO: Slot = Slot {
        result: 0,
        kernel_addr: 0,
        task: 0,
        kernel: 0,
        shape: 0,
        times: [0; 2],
        fail_code: 0,
        ntensors: 0,
        tensors: 0,
        args: [0; SLOT_ARGS],
        ncond: 0,
        block: 0,
        conditions: [RawCondition {
            kind: 0,
            reserved: 0,
            word: 0,
            expected: 0,
        }; SLOT_CONDITIONS],
        tail: [0; 2],
    };
}

const _: () = {
    assert!(SLOT_ARGS == 16 + MAX_ARGS as usize);
    assert!(COND_FIN == StatusWord::FIN);
    assert!(COND_EXIT_ACK == COND_FIN | 0x7FFF_FFFE);
    assert!(TOKEN_LAST == Token::LAST.bits());
    assert!(size_of::<PtoAicoreArgs>() == 16);
    assert!(offset_of!(PtoAicoreArgs, aic_cores) == 8);
    assert!(size_of::<Handshake>() == 64);
    assert!(offset_of!(Handshake, aicpu_ready) == 0);
    assert!(offset_of!(Handshake, aicore_done) == 4);
    assert!(offset_of!(Handshake, task) == 8);
    assert!(offset_of!(Handshake, core_type) == 16);
    assert!(offset_of!(Handshake, physical_core_id) == 20);
    assert!(offset_of!(Handshake, base_token) == 24);
    assert!(offset_of!(Handshake, aicore_exited) == 28);
    assert!(size_of::<Slot>() == 640);
    assert!(offset_of!(Slot, result) == 0);
    assert!(offset_of!(Slot, kernel_addr) == 8);
    assert!(offset_of!(Slot, task) == 16);
    assert!(offset_of!(Slot, kernel) == 24);
    assert!(offset_of!(Slot, shape) == 28);
    assert!(offset_of!(Slot, times) == 32);
    assert!(offset_of!(Slot, fail_code) == 48);
    assert!(offset_of!(Slot, ntensors) == 52);
    assert!(offset_of!(Slot, tensors) == 56);
    assert!(size_of::<pto_runtime_core::ffi::PtoTensor>() == TENSOR_DESC_BYTES);
    assert!(offset_of!(Slot, args) == 64);
    assert!(offset_of!(Slot, ncond) == 448);
    assert!(offset_of!(Slot, block) == 452);
    assert!(offset_of!(Slot, conditions) == 456);
    assert!(size_of::<RawCondition>() == 24);
};
