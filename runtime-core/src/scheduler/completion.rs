//! The one funnel every task finishes through.
//!
//! Normal tasks (last lane's FIN), DUMMY tasks (completed by a scheduler as soon as ready) and
//! deferred tasks all finish here ([`finish`], [`finish_at`]; [`finish_at_fin`] in two halves
//! so a FIN's scheduler can send a released consumer first); accounting and profiling live
//! here and nowhere else.
#![forbid(unsafe_code)]

use crate::ids::TaskId;
use crate::ids::WorkerClass;
use crate::observe::profile::ProfileLevel;
use crate::observe::record::Closer;
use crate::observe::stats::{SchedCtl, bucket_of};
use crate::region::slot::{Blocks, Meta, TaskSlot, state};
use crate::sync::Ordering;
use crate::tables::ready::{Ready, prepare_ready};
use crate::tables::reclaim::release_hold_of;
use crate::tables::{EDGE_CLOSED, EdgeRef, SlotIndex, Tables};

/// Who finishes a task, and when.
#[derive(Clone, Copy)]
pub(crate) struct Finisher<'a> {
    /// The finishing scheduler's block.
    pub(crate) ctl: &'a SchedCtl,
    /// Its index, as the records it closes carry it.
    pub(crate) closer: Closer,
    /// Its clock at this moment (0 when nothing is measured).
    pub(crate) now: u64,
    /// The profiling level it read for this loop iteration.
    pub(crate) level: ProfileLevel,
}

/// Finishes task `id` (the caller owns its completion: this runs once per task): closes its
/// record (at `Tasks`), marks it COMPLETED, releases its consumers (making the
/// last-waited-for ones ready), releases the producers it held, drops its own hold and
/// counts it.
pub(crate) fn finish(t: &Tables<'_>, id: TaskId, by: Finisher<'_>) {
    finish_at(t, t.gslot(id), id, &by);
}

/// [`finish`] for a caller that holds the task's slot `g` (`t.gslot(id)`) already.
#[inline]
pub(crate) fn finish_at(t: &Tables<'_>, g: SlotIndex, id: TaskId, by: &Finisher<'_>) {
    if by.level == ProfileLevel::Tasks {
        finish_recorded(t, g, id, by)
    } else {
        finish_unrecorded(t, g, id, by)
    }
}

/// [`finish_at`] for a task finishing at its last lane's FIN, seen at `by.now` by the
/// scheduler that polls its core, in two halves: this one closes its record (with that FIN
/// stamp), marks it COMPLETED and releases its consumers, one of which it may hand back
/// instead of queueing (see [`release_consumers`]); the caller sends that one to a core (or
/// queues it, [`Ready::enqueue`]) and then settles the rest ([`Unsettled::settle`]) in the
/// same step. So a chain's next task is on its way before the bookkeeping (holds, the
/// watermark's fences, counts) that nothing waits for.
#[inline]
pub(crate) fn finish_at_fin(
    t: &Tables<'_>,
    g: SlotIndex,
    id: TaskId,
    by: &Finisher<'_>,
) -> Unsettled {
    if by.level == ProfileLevel::Tasks {
        finish_recorded_fin(t, g, id, by)
    } else {
        finish_unrecorded_fin(t, g, id, by)
    }
}

/// A task half-way through the funnel ([`finish_at_fin`]): COMPLETED, its consumers
/// released; the holds it has and is, and its count, still to settle.
#[must_use = "a task counts as finished only once settled"]
pub(crate) struct Unsettled {
    g: SlotIndex,
    id: TaskId,
    pinned: u8,
    cancelled: bool,
    /// A consumer made ready and handed back rather than queued: the caller's to send.
    pub(crate) handed: Option<Ready>,
}

impl Unsettled {
    /// The funnel's second half: releases the producers the task held and its own hold
    /// (moving the watermark if it was the last), and counts it.
    #[inline]
    pub(crate) fn settle(self, t: &Tables<'_>, by: &Finisher<'_>) {
        settle(t, &self, by);
    }
}

/// [`finish_at`] closing the task's record.
#[inline(never)]
fn finish_recorded(t: &Tables<'_>, g: SlotIndex, id: TaskId, by: &Finisher<'_>) {
    let u = release::<true, false>(t, g, id, by);
    settle(t, &u, by);
}

/// [`finish_at_fin`] closing the task's record (inlined like [`finish_unrecorded_fin`]).
#[inline(always)]
fn finish_recorded_fin(t: &Tables<'_>, g: SlotIndex, id: TaskId, by: &Finisher<'_>) -> Unsettled {
    release::<true, true>(t, g, id, by)
}

/// [`finish_at`] keeping no record: a funnel with none of the record's code, and so none of
/// its registers.
#[inline(never)]
fn finish_unrecorded(t: &Tables<'_>, g: SlotIndex, id: TaskId, by: &Finisher<'_>) {
    let u = release::<false, false>(t, g, id, by);
    settle(t, &u, by);
}

/// [`finish_at_fin`] keeping no record: inlined, with the scheduler's hand-off and settle,
/// into its poll, so the half-finished task stays in registers (dispatch + complete 351 to
/// 281 instructions a task, against 301 before the funnel was split).
#[inline(always)]
fn finish_unrecorded_fin(t: &Tables<'_>, g: SlotIndex, id: TaskId, by: &Finisher<'_>) -> Unsettled {
    release::<false, true>(t, g, id, by)
}

/// The funnel's first half: closes the task's record if `RECORD`, marks it COMPLETED and
/// releases its consumers. `FIN`: the task finishes at a FIN its scheduler just saw (its
/// record takes the stamp `by.now`), and one consumer made ready may be handed back rather
/// than queued.
#[inline(always)]
fn release<const RECORD: bool, const FIN: bool>(
    t: &Tables<'_>,
    g: SlotIndex,
    id: TaskId,
    by: &Finisher<'_>,
) -> Unsettled {
    let slot = t.slot(g);
    let meta = Meta::unpack(slot.meta.load(Ordering::Relaxed));
    if t.cfg().record_latency {
        let ready = t.prof_row(g).ready.load(Ordering::Relaxed);
        SchedCtl::bump(&by.ctl.latency[bucket_of(by.now.saturating_sub(ready))], 1);
    }
    // Written before COMPLETED and the fanout swap below, and set only before the decrement
    // that made the task ready (or by its own scheduler), so this read sees it.
    let failed = slot.failed.load(Ordering::Relaxed);
    let cancelled = failed != 0;
    // Closed before the slot is released: its cell word then belongs to the next tenant.
    if RECORD && let Some(r) = t.record_in(slot) {
        if meta.spmd {
            close_block_records(t, slot, by, failed);
        }
        // A task of several blocks has each block's FIN stamped in its record already.
        r.close(by.closer, failed, by.now, FIN && !meta.spmd);
    }
    slot.state.store(state::COMPLETED, Ordering::Release);

    // Consumers: close the list, then walk it. Read `next` before the decrement: once a
    // consumer is released it may finish and its slot (which holds the edge) be reused. A
    // cancelled task cancels each consumer before releasing it: the decrement (AcqRel, a
    // release sequence with the others) carries the flag to whoever makes it ready.
    let link = slot.fanout.swap(EDGE_CLOSED, Ordering::AcqRel);
    let handed = match EdgeRef::listed(link) {
        Some(first) => release_consumers::<FIN>(t, first, cancelled, by),
        None => None,
    };
    Unsettled {
        g,
        id,
        pinned: meta.pinned,
        cancelled,
        handed,
    }
}

/// Closes the records of blocks 1 and up of the task in `slot` (block 0's is the task's,
/// closed by the caller). Each block's lanes reported FIN before the task's last lane did,
/// which `lanes_left` orders before this.
#[cold]
fn close_block_records(t: &Tables<'_>, slot: &TaskSlot, by: &Finisher<'_>, failed: u32) {
    let blocks = Blocks::unpack(slot.blocks.load(Ordering::Relaxed)).count;
    for b in 1..blocks {
        if let Some(r) = t.record_block(slot, b) {
            r.close(by.closer, failed, by.now, false);
        }
    }
}

/// The funnel's second half ([`Unsettled::settle`]).
#[inline(always)]
fn settle(t: &Tables<'_>, u: &Unsettled, by: &Finisher<'_>) {
    if u.pinned != 0 {
        release_producers(t, u.g, u.pinned);
    }
    release_hold_of(t, u.g, u.id.seq());
    if u.cancelled {
        SchedCtl::bump(&by.ctl.cancelled, 1);
    }
    SchedCtl::bump(&by.ctl.finished, 1);
}

/// Walks a finished task's fanout list from its first edge, releasing each consumer (and
/// cancelling it first if the task was cancelled) and queueing those made ready. With `HAND`,
/// the first one made ready for a single core (AIC or AIV) whose queue looks empty is
/// returned instead of queued, so no queued task is overtaken: the finishing scheduler,
/// whose core just went idle, can send it without a trip through the queue. Out of line:
/// the funnel's common case, a task nobody waits on, then keeps its registers for the
/// watermark.
#[inline(never)]
fn release_consumers<const HAND: bool>(
    t: &Tables<'_>,
    first: EdgeRef,
    cancelled: bool,
    by: &Finisher<'_>,
) -> Option<Ready> {
    let mut handed = None;
    let mut link = Some(first);
    while let Some(e) = link {
        // Read `next` before the decrement: once a consumer is released it may finish and
        // its slot (which holds the edge) be reused.
        let next = t.edge(e).next.load(Ordering::Relaxed);
        let consumer = t.edge_owner(e);
        if cancelled {
            t.slot(consumer).failed.store(1, Ordering::Relaxed);
        }
        if t.slot(consumer).pending.fetch_sub(1, Ordering::AcqRel) == 1
            && let Some(ready) = prepare_ready(t, consumer, by.now, by.level)
        {
            let single = matches!(ready.class, WorkerClass::Aic | WorkerClass::Aiv);
            if HAND && handed.is_none() && single && !t.queue(ready.class).maybe_nonempty() {
                handed = Some(ready);
            } else {
                ready.enqueue(t);
            }
        }
        link = EdgeRef::listed(next);
    }
    handed
}

/// Drops the holds a finished task (slot `g`) kept on its `pinned` producers.
#[inline(never)]
fn release_producers(t: &Tables<'_>, g: SlotIndex, pinned: u8) {
    for k in 0..pinned as usize {
        let producer = TaskId::from_raw(t.edge(t.edge_ref(g, k)).producer.load(Ordering::Relaxed));
        release_hold_of(t, t.gslot(producer), producer.seq());
    }
}
