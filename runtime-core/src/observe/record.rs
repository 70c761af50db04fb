//! A task's record in the profile ring: one cache line, written in place while the task
//! runs, read back whole once its finisher publishes it.
#![forbid(unsafe_code)]

use super::record_flags::RecordFlags;
use super::stamp_offset;
use crate::ids::{CoreId, KernelId, TaskId, WorkerClass};
use crate::sync::{AtomicU16, AtomicU32, AtomicU64, Ordering};

/// One finished task, as the host reads it back.
///
/// Stamps are clock ticks ([`crate::Platform::now`]). The submit, dispatch and complete stamps
/// are exact; the others are kept as offsets from the submit stamp, exact up to 2^27 ticks
/// after it (2.7 s on a2a3's 50 MHz counter) and rounded down by at most one part in 2^26
/// of the offset beyond.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct TaskRecord {
    /// The task.
    pub task: TaskId,
    /// Its kernel.
    pub kernel: KernelId,
    /// Its class.
    pub class: WorkerClass,
    /// The core of its first lane (none for DUMMY).
    pub core: Option<CoreId>,
    /// The scheduler that finished it.
    pub scheduler: u8,
    /// Submitted.
    pub submit: u64,
    /// Became ready.
    pub ready: u64,
    /// Dispatched (first lane).
    pub dispatch: u64,
    /// Kernel started (earliest lane; 0 if the platform does not report it).
    pub start: u64,
    /// Kernel ended (latest lane).
    pub end: u64,
    /// The scheduler saw the last FIN.
    pub fin: u64,
    /// Deferred conditions held (0: the task was not deferred).
    pub deferred_done: u64,
    /// Completed (released its consumers).
    pub complete: u64,
    /// Cancelled: a transfer it waited on failed, or a task it depends on was cancelled, so
    /// it finished without running (or without its result counting).
    pub cancelled: bool,
    /// Skipped: its predicate was false at dispatch, so no core ran it.
    pub skipped: bool,
    /// The SPMD block this record is of (0 for a task of one block): a task of several
    /// keeps a record per block, each with its block's core and kernel times.
    pub block: u16,
    /// The task's blocks (1 unless it asked for more).
    pub blocks: u16,
}

/// A closed record's `written` word: its [`RecordFlags`] in the low byte, the finishing
/// scheduler from this bit up.
const SCHEDULER_SHIFT: u32 = 8;
/// The bits of `flags` in a `written` word (they fit its low byte).
const fn bits(flags: RecordFlags) -> u16 {
    flags.bits() as u16
}
/// A filler cell's `task` word: a cell a claim skipped so that its cells do not cross the
/// ring's end (ring field 15, as for [`NO_TASK`]).
const FILLER: u64 = u64::MAX - 1;
/// A record's `task` word until it is opened (no task id has every bit set: its ring field
/// would say 15, and rings are at most `MAX_RINGS`).
const NO_TASK: u64 = u64::MAX;
/// A record's `core` word when no lane was dispatched (cores are fewer than `MAX_CORES`).
const NO_CORE: u16 = u16::MAX;
/// The bits a record's meta word keeps of a block index and of a block count (blocks are
/// at most `MAX_CORES`).
const BLOCK_MASK: u16 = 0xfff;
const _: () = assert!(crate::region::config::MAX_CORES <= BLOCK_MASK);

/// Who closes a record: the `written` word of a record that scheduler closes, but for the
/// cancelled and FIN bits. Made once per scheduler, so closing a record builds no word.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Closer(u16);

impl Closer {
    /// Scheduler `sched`.
    pub(crate) const fn of(sched: u8) -> Self {
        Closer(bits(RecordFlags::WRITTEN) | (sched as u16) << SCHEDULER_SHIFT)
    }
}

/// A task's record as it lives in the profile ring, one cache line, claimed when the task is
/// submitted (at `Tasks`) and stamped in place while it runs: its submitter, dispatcher and
/// finisher write straight into it, and the finisher's `written` store (Release) publishes it
/// whole.
///
/// The stamps the scheduler writes for every task on its own hot path (dispatch and close)
/// are kept whole, beside the submit stamp; the others are 32-bit offsets from the submit
/// ([`stamp_offset`]), which is what lets the record fit a line: a ring of records costs one
/// line per task in the cache.
///
/// Each scheduler stamp is the lap clock of the phase that saw its event: never later than
/// the event, never earlier than the phase began. So a stamp may predate one set during the
/// same phase by another thread (the ready stamp) or from the core (a kernel's end). The
/// writers store their clock as it is, and [`RecordCell::read`] raises each stamp to the
/// one of the event it follows, since no event precedes its cause.
#[repr(C, align(64))]
pub(crate) struct RecordCell {
    task: AtomicU64,
    submit: AtomicU64,
    /// `kernel | class << 32 | block << 40 | blocks << 52`.
    meta: AtomicU64,
    dispatch: AtomicU64,
    complete: AtomicU64,
    ready: AtomicU32,
    start: AtomicU32,
    end: AtomicU32,
    /// Unset when the FIN was seen at the close ([`RecordFlags::FIN_AT_CLOSE`]).
    fin: AtomicU32,
    deferred: AtomicU32,
    /// First lane's core ([`NO_CORE`]: none).
    core: AtomicU16,
    /// 0 until the record is whole, then [`RecordFlags::WRITTEN`] with the finishing
    /// scheduler and whether the task was cancelled ([`SCHEDULER_SHIFT`]).
    written: AtomicU16,
}

impl RecordCell {
    pub(crate) fn new() -> Self {
        let z = || AtomicU32::new(stamp_offset::NONE);
        RecordCell {
            task: AtomicU64::new(NO_TASK),
            submit: AtomicU64::new(0),
            meta: AtomicU64::new(0),
            dispatch: AtomicU64::new(0),
            complete: AtomicU64::new(0),
            ready: z(),
            start: z(),
            end: z(),
            fin: z(),
            deferred: z(),
            core: AtomicU16::new(NO_CORE),
            written: AtomicU16::new(0),
        }
    }

    /// Makes the cell fresh again, as [`RecordCell::new`] made it (a drain, once it took the
    /// record; the drain's Release store of its position publishes the reset to the next
    /// claim of the cell).
    pub(crate) fn reset(&self) {
        for w in [
            &self.ready,
            &self.start,
            &self.end,
            &self.fin,
            &self.deferred,
        ] {
            w.store(stamp_offset::NONE, Ordering::Relaxed);
        }
        for w in [&self.submit, &self.meta, &self.dispatch, &self.complete] {
            w.store(0, Ordering::Relaxed);
        }
        self.core.store(NO_CORE, Ordering::Relaxed);
        self.written.store(0, Ordering::Relaxed);
        self.task.store(NO_TASK, Ordering::Relaxed);
    }

    /// The task whose record this is, once the record was opened (closed or not); `None`
    /// for a fresh cell or a filler.
    pub(crate) fn opened_task(&self) -> Option<TaskId> {
        let raw = self.task.load(Ordering::Relaxed);
        (raw != NO_TASK && raw != FILLER).then_some(TaskId::from_raw(raw))
    }

    /// Marks a fresh cell as a filler: claimed, never a record (the drain passes over it).
    pub(crate) fn fill(&self) {
        self.task.store(FILLER, Ordering::Relaxed);
    }

    /// Whether the cell is a filler ([`RecordCell::fill`]).
    pub(crate) fn is_filler(&self) -> bool {
        self.task.load(Ordering::Relaxed) == FILLER
    }

    /// Opens the record of `task` (kernel `kernel`, class `class`), submitted at `submit`.
    /// The cell is fresh: new, or reset by the drain that took its last record.
    pub(crate) fn open(&self, task: TaskId, kernel: KernelId, class: WorkerClass, submit: u64) {
        self.open_block(task, kernel, class, submit, 0, 1);
    }

    /// [`RecordCell::open`] for block `block` of `blocks` (each at most `MAX_CORES`).
    pub(crate) fn open_block(
        &self,
        task: TaskId,
        kernel: KernelId,
        class: WorkerClass,
        submit: u64,
        block: u16,
        blocks: u16,
    ) {
        self.task.store(task.raw(), Ordering::Relaxed);
        let meta = kernel.0 as u64
            | (class as u64) << 32
            | u64::from(block & BLOCK_MASK) << 40
            | u64::from(blocks & BLOCK_MASK) << 52;
        self.meta.store(meta, Ordering::Relaxed);
        self.submit.store(submit, Ordering::Relaxed);
    }

    /// The code of the stamp `now` (its writer follows the submit, which wrote `submit`).
    #[inline(always)]
    fn code(&self, now: u64) -> u32 {
        stamp_offset::encode(now, self.submit.load(Ordering::Relaxed))
    }

    /// The task became ready at `now`.
    #[inline]
    pub(crate) fn stamp_ready(&self, now: u64) {
        self.ready.store(self.code(now), Ordering::Relaxed);
    }

    /// The task's first lane was dispatched to `core` at `now`.
    #[inline]
    pub(crate) fn stamp_dispatch(&self, now: u64, core: CoreId) {
        self.dispatch.store(now, Ordering::Relaxed);
        self.core.store(core.0, Ordering::Relaxed);
    }

    /// A lane's kernel ran from `start` to `end` (the core's clock): the record keeps the
    /// earliest start and the latest end of its lanes.
    #[inline]
    pub(crate) fn stamp_kernel(&self, start: u64, end: u64) {
        let (start, end) = (self.code(start), self.code(end));
        let first = self.start.load(Ordering::Relaxed);
        let first = if first == stamp_offset::NONE {
            start
        } else {
            first.min(start)
        };
        self.start.store(first, Ordering::Relaxed);
        let last = self.end.load(Ordering::Relaxed).max(end);
        self.end.store(last, Ordering::Relaxed);
    }

    /// The scheduler saw the task's last FIN at `now`, and its deferred conditions held then
    /// too if `deferred`.
    #[inline]
    pub(crate) fn stamp_fin(&self, now: u64, deferred: bool) {
        let code = self.code(now);
        self.fin.store(code, Ordering::Relaxed);
        if deferred {
            self.deferred.store(code, Ordering::Relaxed);
        }
    }

    /// The task's deferred conditions held at `now`.
    #[inline]
    pub(crate) fn stamp_deferred(&self, now: u64) {
        self.deferred.store(self.code(now), Ordering::Relaxed);
    }

    /// Marks the task skipped (its predicate was false); its close keeps the mark.
    pub(crate) fn mark_skipped(&self) {
        // Without `WRITTEN`: a reader still sees the record open.
        self.written
            .store(bits(RecordFlags::SKIPPED), Ordering::Relaxed);
    }

    /// Closes the record: finished by `by` at `now` (where its FIN was seen too if `fin`),
    /// cancelled if `failed` (the slot's word: 0 or 1), skipped if marked so, and published.
    #[inline]
    pub(crate) fn close(&self, by: Closer, failed: u32, now: u64, fin: bool) {
        debug_assert!(failed <= 1);
        // Raised over the earlier stamps when read.
        self.complete.store(now, Ordering::Relaxed);
        let fin = if fin {
            bits(RecordFlags::FIN_AT_CLOSE)
        } else {
            0
        };
        // `failed` is the bit of `CANCELLED` as it is.
        const _: () = assert!(bits(RecordFlags::CANCELLED) == 1);
        let skipped = self.written.load(Ordering::Relaxed) & bits(RecordFlags::SKIPPED);
        let written = by.0 | fin | failed as u16 | skipped;
        self.written.store(written, Ordering::Release);
    }

    /// The record, if its finisher closed it.
    pub(crate) fn read(&self) -> Option<TaskRecord> {
        let written = self.written.load(Ordering::Acquire);
        let flags = RecordFlags::from_bits_retain(u32::from(written & 0xff));
        if !flags.contains(RecordFlags::WRITTEN) {
            return None;
        }
        let meta = self.meta.load(Ordering::Relaxed);
        let core = self.core.load(Ordering::Relaxed);
        let submit = self.submit.load(Ordering::Relaxed);
        let whole = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let v = |a: &AtomicU32| stamp_offset::decode(a.load(Ordering::Relaxed), submit);
        // Each stamp raised to the one of the event it follows (0: the event did not happen).
        let after = |stamp: u64, cause: u64| if stamp == 0 { 0 } else { stamp.max(cause) };
        let ready = after(v(&self.ready), submit);
        let end = v(&self.end);
        let closed = whole(&self.complete);
        let fin = if flags.contains(RecordFlags::FIN_AT_CLOSE) {
            closed
        } else {
            v(&self.fin)
        };
        let fin = after(fin, end);
        let deferred = after(v(&self.deferred), fin);
        Some(TaskRecord {
            task: TaskId::from_raw(whole(&self.task)),
            kernel: KernelId(meta as u32),
            class: WorkerClass::from_index(((meta >> 32) & 0xff) as usize)
                .unwrap_or(WorkerClass::Dummy),
            scheduler: (written >> SCHEDULER_SHIFT) as u8,
            cancelled: flags.contains(RecordFlags::CANCELLED),
            skipped: flags.contains(RecordFlags::SKIPPED),
            core: (core != NO_CORE).then_some(CoreId(core)),
            submit,
            ready,
            dispatch: after(whole(&self.dispatch), ready),
            start: v(&self.start),
            end,
            fin,
            deferred_done: deferred,
            complete: closed.max(ready).max(fin).max(deferred),
            block: (meta >> 40) as u16 & BLOCK_MASK,
            blocks: ((meta >> 52) as u16 & BLOCK_MASK).max(1),
        })
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_record_stamped_with_early_lap_clocks_reads_back_in_order() {
        let cell = RecordCell::new();
        cell.open(TaskId::from_raw(9), KernelId(3), WorkerClass::Aiv, 100);
        // Each scheduler stamp predates the one before it (lap clocks cut before the event).
        cell.stamp_ready(90);
        cell.stamp_dispatch(80, CoreId(5));
        cell.stamp_kernel(125, 140);
        cell.stamp_kernel(120, 150);
        cell.stamp_fin(140, false);
        cell.stamp_deferred(130);
        cell.close(Closer::of(2), 0, 110, false);
        let r = cell.read().unwrap();
        assert_eq!(
            [
                r.submit,
                r.ready,
                r.dispatch,
                r.start,
                r.end,
                r.fin,
                r.deferred_done,
                r.complete
            ],
            [100, 100, 100, 120, 150, 150, 150, 150]
        );
        assert_eq!(
            (r.core, r.scheduler, r.cancelled),
            (Some(CoreId(5)), 2, false)
        );
    }

    #[test]
    fn stamps_of_events_that_did_not_happen_stay_zero() {
        let cell = RecordCell::new();
        cell.open(TaskId::from_raw(9), KernelId(3), WorkerClass::Dummy, 100);
        cell.stamp_ready(90);
        assert!(cell.read().is_none(), "not closed yet");
        cell.close(Closer::of(0), 1, 95, false);
        let r = cell.read().unwrap();
        assert_eq!((r.ready, r.complete), (100, 100));
        assert_eq!(
            (r.dispatch, r.start, r.end, r.fin, r.deferred_done, r.core),
            (0, 0, 0, 0, 0, None)
        );
        assert!(r.cancelled);
    }

    #[test]
    fn a_record_is_one_cache_line() {
        assert_eq!(core::mem::size_of::<RecordCell>(), 64);
        assert_eq!(core::mem::align_of::<RecordCell>(), 64);
    }

    #[test]
    fn a_task_closed_at_its_fin_reads_back_whole_after_a_long_wait() {
        let cell = RecordCell::new();
        let submit = 1 << 40;
        cell.open(TaskId::from_raw(1), KernelId(0), WorkerClass::Aic, submit);
        cell.stamp_ready(submit + 10);
        cell.stamp_dispatch(submit + 20, CoreId(0));
        // Ten seconds at 2.6 GHz: past the exact range, read back within 1 part in 2^26.
        let done = submit + 26_000_000_000;
        cell.close(Closer::of(0), 0, done, true);
        let r = cell.read().unwrap();
        assert_eq!(
            (r.ready, r.dispatch, r.core),
            (submit + 10, submit + 20, Some(CoreId(0)))
        );
        assert_eq!(r.fin, r.complete);
        assert!(
            r.complete <= done && done - r.complete < 26_000_000_000 >> 26,
            "{r:?}"
        );
        assert_eq!((r.start, r.end, r.deferred_done), (0, 0, 0));
    }
}
