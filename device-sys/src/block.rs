//! The register block the AICPU and the AICore cores share: per core, two payload slots (by
//! token parity) whose `doorbell` word the AICPU writes last, the status line the core
//! writes (its status word, and a result word per slot), and two slabs of deferred
//! conditions the core fills before its FIN. Plain `repr(C)` data, offsets pinned below: the
//! AICore side (C or Rust) builds against the same layout. The words' encodings are
//! `pto-runtime-core`'s ([`pto_runtime_core::protocol`]).
#![forbid(unsafe_code)]

use core::mem::{offset_of, size_of};

use pto_runtime_core::MAX_ARGS;
pub use pto_runtime_core::RawCondition;

/// Scalar arguments a payload slot carries.
pub const SLOT_ARGS: usize = MAX_ARGS as usize;

/// Deferred conditions a core can report per token.
pub const CONDITIONS_PER_LANE: usize = 16;

/// One payload, written by the AICPU before it rings the doorbell.
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug)]
pub struct PayloadSlot {
    /// The token rung: written last, after a release barrier.
    pub doorbell: u32,
    /// `lane | lanes << 8 | nargs << 16 | profile << 24`.
    pub shape: u32,
    /// The kernel to run.
    pub kernel: u32,
    /// Zero.
    pub reserved: u32,
    /// The task (its raw id), for records and errors.
    pub task: u64,
    /// Scalar arguments; the first `nargs` are valid.
    pub args: [u64; SLOT_ARGS],
}

/// What the core reports, on its own cache line.
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug)]
pub struct StatusLine {
    /// A [`pto_runtime_core::StatusWord`]: the token, FIN in bit 31.
    pub word: u32,
    /// Zero.
    pub reserved: u32,
    /// The [`pto_runtime_core::ResultWord`] of the token of each parity, written before
    /// any report about that token or a later one.
    pub results: [u64; 2],
    /// `[start, end]` clock readings of the token of each parity, written before its FIN
    /// when the payload asked for times.
    pub times: [[u64; 2]; 2],
}

/// The conditions of one token, written by the core before its FIN.
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug)]
pub struct ConditionSlab {
    /// Conditions the kernel registered (may exceed what `items` holds: the run then fails).
    pub count: u32,
    /// Zero.
    pub reserved: u32,
    /// The first [`CONDITIONS_PER_LANE`] of them.
    pub items: [RawCondition; CONDITIONS_PER_LANE],
}

/// The block of one core.
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug)]
pub struct CoreBlock {
    /// Payload slots, by token parity.
    pub payload: [PayloadSlot; 2],
    /// The core's status line.
    pub status: StatusLine,
    /// Deferred conditions, by token parity.
    pub conditions: [ConditionSlab; 2],
}

impl CoreBlock {
    /// A block as the AICPU must find it at start-up: all zero (token 0, phase idle).
    pub const ZERO: CoreBlock = CoreBlock {
        payload: [PayloadSlot {
            doorbell: 0,
            shape: 0,
            kernel: 0,
            reserved: 0,
            task: 0,
            args: [0; SLOT_ARGS],
        }; 2],
        status: StatusLine {
            word: 0,
            reserved: 0,
            results: [0; 2],
            times: [[0; 2]; 2],
        },
        conditions: [ConditionSlab {
            count: 0,
            reserved: 0,
            items: [RawCondition {
                kind: 0,
                reserved: 0,
                word: 0,
                expected: 0,
            }; CONDITIONS_PER_LANE],
        }; 2],
    };
}

// The layout every side builds against.
const _: () = {
    assert!(size_of::<PayloadSlot>() == 320);
    assert!(offset_of!(PayloadSlot, doorbell) == 0);
    assert!(offset_of!(PayloadSlot, shape) == 4);
    assert!(offset_of!(PayloadSlot, kernel) == 8);
    assert!(offset_of!(PayloadSlot, task) == 16);
    assert!(offset_of!(PayloadSlot, args) == 24);
    assert!(size_of::<StatusLine>() == 64);
    assert!(offset_of!(StatusLine, results) == 8);
    assert!(offset_of!(StatusLine, times) == 24);
    assert!(size_of::<RawCondition>() == 24);
    assert!(size_of::<ConditionSlab>() == 448);
    assert!(offset_of!(ConditionSlab, items) == 8);
    assert!(offset_of!(CoreBlock, payload) == 0);
    assert!(offset_of!(CoreBlock, status) == 640);
    assert!(offset_of!(CoreBlock, conditions) == 704);
    assert!(size_of::<CoreBlock>() == 1600);
};
