//! The streams' control block: how the AICPU's record pump and the host hand task records
//! over while a run goes (and the orchestrator each task's producers, [`PtoProducers`], the
//! same way). The pump writes records into the ring at the exec
//! arguments' `records` (`records_cap` of them) and publishes how many it wrote
//! (`produced`); the host copies out what it has not taken yet and publishes how many it
//! took (`collected`). The pump writes record `i` into entry `i % records_cap` only once
//! `i < collected + records_cap`, so it never overwrites a record the host has not taken;
//! when the host falls behind, the pump waits (bounded by `wait_us`), and past the bound
//! counts what it could not keep in `lost`. Each side writes its own cache line only.
#![forbid(unsafe_code)]

use core::mem::{offset_of, size_of};

/// The record stream's control block in device memory (128 bytes, 64-byte aligned). The
/// host zeroes it and sets `wait_us` before the run.
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PtoRecordStream {
    /// Records the pump wrote to the ring so far (device-written; published after them).
    pub produced: u64,
    /// Records the pump could not keep: the host took none for `wait_us` while the ring
    /// was full (device-written).
    pub lost: u64,
    /// 1 once the pump wrote its last record (device-written, after `produced`).
    pub done: u32,
    /// Zero.
    pub reserved: u32,
    /// How long the pump waits for the host to take records before it counts them lost,
    /// µs (host-written before the run; 0: 30 s).
    pub wait_us: u64,
    /// Padding to the host's line.
    pub pad: [u64; 4],
    /// Records the host took so far (host-written, the only word it writes in the run).
    pub collected: u64,
    /// Padding to 128 bytes.
    pub pad2: [u64; 7],
}

impl PtoRecordStream {
    /// The pump's wait when `wait_us` is 0: 30 s.
    pub const DEFAULT_WAIT_US: u64 = 30_000_000;

    /// Byte offset of `produced`, which the host reads while the run goes.
    pub const PRODUCED: usize = offset_of!(PtoRecordStream, produced);
    /// Byte offset of `collected`, which the host writes while the run goes.
    pub const COLLECTED: usize = offset_of!(PtoRecordStream, collected);
}

/// One entry of the producers' stream: a task and up to [`PtoProducers::PER_ENTRY`] of the
/// tasks it depends on (explicitly or through its tensor arguments), in the order it was
/// submitted. A task with more producers has several entries in a row; one with none, one
/// entry with none. An unused place holds [`PtoProducers::NONE`].
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct PtoProducers {
    /// The task (`PtoTaskId`).
    pub task: u64,
    /// Its producers, `NONE` past the last.
    pub producers: [u64; 7],
}

impl PtoProducers {
    /// Producers one entry holds.
    pub const PER_ENTRY: usize = 7;
    /// An unused place.
    pub const NONE: u64 = u64::MAX;
}

const _: () = {
    assert!(size_of::<PtoProducers>() == 64);
    assert!(size_of::<PtoRecordStream>() == 128);
    assert!(offset_of!(PtoRecordStream, wait_us) == 24);
    assert!(offset_of!(PtoRecordStream, collected) == 64);
};
