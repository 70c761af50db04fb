//! What a run did, as C reads it back: the report's counters and the error
//! ([`PtoReport`]), and the task records of a run profiled at `Tasks` ([`PtoRecord`]).
#![forbid(unsafe_code)]

use crate::observe::record::TaskRecord;
use crate::observe::record_flags::RecordFlags;
use crate::runtime::RunReport;

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
    /// Scheduler loop iterations, all schedulers.
    pub loops: u64,
    /// Tasks finished cancelled (a transfer they waited on failed).
    pub cancelled: u64,
    /// Task records that did not fit the profile ring.
    pub profile_dropped: u64,
    /// Tasks skipped: their predicate was false at dispatch.
    pub skipped: u64,
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
            loops: r.loops,
            cancelled: r.cancelled,
            profile_dropped: r.profile_dropped,
            skipped: r.skipped,
        }
    }
}

/// One finished task's record (the C view of `pto_runtime_core::TaskRecord`): times are
/// counter ticks, 0 where the run did not measure them. The device writes these and the host
/// reads them back as this very type (in Rust, `bytemuck::Pod` with the `bytemuck` feature),
/// so this declaration is the layout; its offsets are pinned where it is declared.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "bytemuck", derive(bytemuck::Pod, bytemuck::Zeroable))]
pub struct PtoRecord {
    /// The task's id.
    pub task: u64,
    /// Its kernel.
    pub kernel: u32,
    /// The core of its first lane, or `0xffff` (DUMMY).
    pub core: u16,
    /// 0: AIC, 1: AIV, 2: MIX, 3: DUMMY.
    pub class: u8,
    /// The scheduler that finished it.
    pub scheduler: u8,
    /// Its flags ([`RecordFlags`]; `PtoRecordFlags_*` in C): `WRITTEN`, and `CANCELLED` if
    /// it finished cancelled.
    pub flags: RecordFlags,
    /// The SPMD block the record is of (0 for a task of one block).
    pub block: u16,
    /// The task's blocks (1 unless it asked for more).
    pub blocks: u16,
    /// Submitted.
    pub submit: u64,
    /// Became ready.
    pub ready: u64,
    /// Dispatched (first lane).
    pub dispatch: u64,
    /// Kernel started (earliest lane).
    pub start: u64,
    /// Kernel ended (latest lane).
    pub end: u64,
    /// The scheduler saw the last FIN.
    pub fin: u64,
    /// Its deferred conditions held (0: it was not deferred).
    pub deferred_done: u64,
    /// Completed (released its consumers).
    pub complete: u64,
}

/// Each field of [`PtoRecord`] at its byte offset, in order: the ABI C programs and the
/// host's reader were built against. A field moved or resized fails the build here.
const RECORD_OFFSETS: [(&str, usize); 16] = [
    ("task", 0),
    ("kernel", 8),
    ("core", 12),
    ("class", 14),
    ("scheduler", 15),
    ("flags", 16),
    ("block", 20),
    ("blocks", 22),
    ("submit", 24),
    ("ready", 32),
    ("dispatch", 40),
    ("start", 48),
    ("end", 56),
    ("fin", 64),
    ("deferred_done", 72),
    ("complete", 80),
];

const _: () = {
    use core::mem::offset_of;
    let at = [
        offset_of!(PtoRecord, task),
        offset_of!(PtoRecord, kernel),
        offset_of!(PtoRecord, core),
        offset_of!(PtoRecord, class),
        offset_of!(PtoRecord, scheduler),
        offset_of!(PtoRecord, flags),
        offset_of!(PtoRecord, block),
        offset_of!(PtoRecord, blocks),
        offset_of!(PtoRecord, submit),
        offset_of!(PtoRecord, ready),
        offset_of!(PtoRecord, dispatch),
        offset_of!(PtoRecord, start),
        offset_of!(PtoRecord, end),
        offset_of!(PtoRecord, fin),
        offset_of!(PtoRecord, deferred_done),
        offset_of!(PtoRecord, complete),
    ];
    let mut i = 0;
    while i < at.len() {
        assert!(at[i] == RECORD_OFFSETS[i].1, "PtoRecord's layout moved");
        i += 1;
    }
    assert!(core::mem::size_of::<PtoRecord>() == 88);
    assert!(core::mem::align_of::<PtoRecord>() == 8);
};

impl PtoRecord {
    /// The C view of `r`.
    pub fn from_record(r: &TaskRecord) -> Self {
        PtoRecord {
            task: r.task.raw(),
            kernel: r.kernel.0,
            core: r.core.map_or(0xffff, |c| c.0),
            class: r.class as u8,
            scheduler: r.scheduler,
            flags: RecordFlags::WRITTEN
                | if r.cancelled {
                    RecordFlags::CANCELLED
                } else {
                    RecordFlags::empty()
                }
                | if r.skipped {
                    RecordFlags::SKIPPED
                } else {
                    RecordFlags::empty()
                },
            block: r.block,
            blocks: r.blocks,
            submit: r.submit,
            ready: r.ready,
            dispatch: r.dispatch,
            start: r.start,
            end: r.end,
            fin: r.fin,
            deferred_done: r.deferred_done,
            complete: r.complete,
        }
    }

    /// The runtime's record of `self` (the C view read back): an unknown class reads as
    /// DUMMY, core `0xffff` as none.
    pub fn to_record(&self) -> TaskRecord {
        TaskRecord {
            task: crate::TaskId::from_raw(self.task),
            kernel: crate::KernelId(self.kernel),
            class: super::task::class_of(self.class).unwrap_or(crate::WorkerClass::Dummy),
            core: (self.core != 0xffff).then_some(crate::CoreId(self.core)),
            scheduler: self.scheduler,
            submit: self.submit,
            ready: self.ready,
            dispatch: self.dispatch,
            start: self.start,
            end: self.end,
            fin: self.fin,
            deferred_done: self.deferred_done,
            complete: self.complete,
            cancelled: self.flags.contains(RecordFlags::CANCELLED),
            skipped: self.flags.contains(RecordFlags::SKIPPED),
            block: self.block,
            blocks: self.blocks.max(1),
        }
    }
}
