//! The ways a task enters its ready queue: [`prepare_ready`] then [`Ready::enqueue`] (the
//! schedulers, which decode the task's meta), [`make_submitted_ready`] (the orchestrator,
//! which just wrote it). Each stamps the task ready in its record on the way.
#![forbid(unsafe_code)]

use crate::error::{FatalCause, FatalError};
use crate::ids::{TaskId, WorkerClass};
use crate::observe::profile::ProfileLevel;
use crate::region::slot::{Blocks, Meta, TaskSlot};
use crate::sync::Ordering;
use crate::tables::{SlotIndex, Tables};

/// Stamps slot `g`'s task ready at `now`: in its record (if `recorded`, the level is
/// `Tasks`) and for the latency histogram.
fn stamp_ready(t: &Tables<'_>, g: SlotIndex, recorded: bool, now: u64) {
    // `now` is a lap-clock stamp taken a little before this moment: a producer that finished
    // while the orchestrator was submitting this task may carry a stamp older than the
    // submit stamp. The record's reader raises it to the submit stamp.
    if recorded && let Some(r) = t.record_of(g) {
        r.stamp_ready(now);
        let slot = t.slot(g);
        if Meta::is_spmd(slot.meta.load(Ordering::Relaxed)) {
            stamp_blocks_ready(t, slot, now);
        }
    }
    if t.cfg.record_latency {
        t.prof_row(g).ready.store(now, Ordering::Relaxed);
    }
}

/// Stamps the records of blocks 1 and up of the task in `slot` ready at `now`.
#[cold]
fn stamp_blocks_ready(t: &Tables<'_>, slot: &TaskSlot, now: u64) {
    let blocks = Blocks::unpack(slot.blocks.load(Ordering::Relaxed)).count;
    for b in 1..blocks {
        if let Some(r) = t.record_block(slot, b) {
            r.stamp_ready(now);
        }
    }
}

/// Publishes slot `g`'s task (`slot`) to the ready queue of its class, for the orchestrator, which
/// just wrote the slot's meta and so knows the task and its class (`ready`) without decoding
/// them: stamps the task ready at `now` (profiling at `level`) and queues it (DUMMY's queue
/// if it was cancelled meanwhile). The caller is the one thread whose fan-in decrement
/// reached zero.
#[inline(always)]
pub(crate) fn make_submitted_ready(
    t: &Tables<'_>,
    g: SlotIndex,
    slot: &TaskSlot,
    ready: Ready,
    now: u64,
    level: ProfileLevel,
) {
    // `now` is 0 when nothing is timed (a stamp of 0 means none: records read it so), which
    // spares the common case the configuration's test.
    if now != 0 && (t.cfg.record_latency || level == ProfileLevel::Tasks) {
        stamp_ready(t, g, level == ProfileLevel::Tasks, now);
    }
    // Set before the decrement that released the task (as `prepare_ready` reads it).
    let class = if slot.failed.load(Ordering::Relaxed) != 0 {
        WorkerClass::Dummy
    } else {
        ready.class
    };
    Ready { class, ..ready }.enqueue(t);
}

/// A task made ready and not queued yet: the class it goes to (DUMMY's if it was
/// cancelled). Whoever holds one queues it ([`Ready::enqueue`]) or dispatches it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ready {
    /// The task.
    pub(crate) id: TaskId,
    /// The queue it belongs in.
    pub(crate) class: WorkerClass,
}

impl Ready {
    /// Appends the task to its class's queue (a full queue fails the run: queues are sized
    /// to hold every live task).
    pub(crate) fn enqueue(self, t: &Tables<'_>) {
        if t.queue(self.class).push(self.id.raw()).is_err() {
            t.shared.status.fail(
                FatalError::new(FatalCause::ReadyQueueOverflow {
                    class: self.class as u8,
                })
                .with_task(self.id),
            );
        }
    }
}

/// Makes slot `g`'s task ready, up to its queue: stamps it ready at `now` (profiling at
/// `level`) and says where it goes; `None` if its slot is corrupt (the run failed). The
/// caller is the one thread whose fan-in decrement reached zero.
#[inline]
pub(crate) fn prepare_ready(
    t: &Tables<'_>,
    g: SlotIndex,
    now: u64,
    level: ProfileLevel,
) -> Option<Ready> {
    let slot = t.slot(g);
    let id = t.task_at(g);
    if t.cfg.record_latency || level == ProfileLevel::Tasks {
        stamp_ready(t, g, level == ProfileLevel::Tasks, now);
    }
    let meta = match Meta::decode(slot.meta.load(Ordering::Relaxed)) {
        Ok(meta) => meta,
        Err(class) => {
            t.shared
                .status
                .fail(FatalError::new(FatalCause::CorruptSlot { class }).with_task(id));
            return None;
        }
    };
    // A cancelled task never runs: it finishes as a DUMMY task would, releasing (and so
    // cancelling) its consumers. Ready queues hold every live task, so DUMMY's has room.
    let class = if slot.failed.load(Ordering::Relaxed) != 0 {
        WorkerClass::Dummy
    } else {
        meta.class
    };
    Some(Ready { id, class })
}
