//! Dependency wiring on the orchestrator side.
//!
//! A consumer's `pending` starts at 1 (the wiring hold). For each producer still alive the
//! orchestrator takes a hold on it (so its slot outlives the consumer's need of it), adds one
//! to `pending` and pushes an edge onto the producer's fanout list; a producer that already
//! finished has a closed list, and the edge counts as satisfied at once. Releasing the wiring
//! hold last means no thread can see the consumer ready half-wired; exactly one thread (the one
//! whose decrement reaches zero) makes it ready.
#![forbid(unsafe_code)]

use crate::ids::TaskId;
use crate::region::edge::{Edge, EdgeRef};
use crate::region::slot::TaskSlot;
use crate::sync::Ordering;
use crate::tables::{EDGE_CLOSED, SlotIndex, Tables};

/// A task being wired: its slot and its edges, found once for all its producers.
pub(crate) struct Consumer<'r> {
    g: SlotIndex,
    slot: &'r TaskSlot,
    edges: &'r [Edge],
    first: EdgeRef,
}

impl<'r> Consumer<'r> {
    /// The tenant of slot `g`.
    #[inline(always)]
    pub(crate) fn of(t: &Tables<'r>, g: SlotIndex) -> Self {
        Self::in_slot(t, g, t.slot(g))
    }

    /// The tenant of slot `g`, which is `slot` (found already).
    #[inline(always)]
    pub(crate) fn in_slot(t: &Tables<'r>, g: SlotIndex, slot: &'r TaskSlot) -> Self {
        let (edges, first) = t.edge_row(g);
        Consumer {
            g,
            slot,
            edges,
            first,
        }
    }
}

/// Wires producer `dep` into consumer `c` as its edge `k`, if `dep` is still alive: takes a
/// hold on it (so its slot outlives the consumer's need of it) and links the edge into its
/// fanout list. `false` means it was consumed (it completed and nothing holds it): the
/// dependency is already satisfied, edge `k` stays unused, and if `dep` was cancelled, the
/// consumer is cancelled too. Inlined: the producer's slot is found once.
///
/// Only the orchestrator reuses slots, so `dep`'s slot cannot change tenant during this call.
/// A producer whose slot already has a later tenant has left no trace: a consumer submitted
/// that late cannot learn it was cancelled (the run still ends with the producer's error).
#[inline(always)]
pub(crate) fn wire_producer(t: &Tables<'_>, dep: TaskId, c: &Consumer<'_>, k: usize) -> bool {
    wire_producer_at(t, (dep, t.gslot(dep)), c, k)
}

/// [`wire_producer`] of `dep` in slot `g` (its [`Tables::gslot`], known to the caller).
#[inline(always)]
pub(crate) fn wire_producer_at(
    t: &Tables<'_>,
    (dep, g): (TaskId, SlotIndex),
    c: &Consumer<'_>,
    k: usize,
) -> bool {
    let p = t.slot(g);
    if !pin(t, p, dep, c.g) {
        return false;
    }
    link(t, p, dep, c, k);
    true
}

/// [`wire_producer`] losing the link, for [`super::Fault::LoseEdge`]: producer `dep` is
/// counted in the consumer's `pending` as edge `k` (and pinned if still alive), but the edge
/// never joins its fanout list, so nothing ever releases the consumer. Never a hold to give
/// back: the consumer, which would release it, never finishes.
#[cfg(feature = "fault-injection")]
pub(crate) fn wire_unlinked(t: &Tables<'_>, dep: TaskId, c: &Consumer<'_>, k: usize) {
    let _pinned = pin(t, t.slot(t.gslot(dep)), dep, c.g);
    c.edges[k].producer.store(dep.raw(), Ordering::Relaxed);
    c.slot.pending.fetch_add(1, Ordering::Relaxed);
}

/// Takes a hold on producer `dep` (in slot `p`) if it is still alive; `false` if consumed.
#[inline(always)]
fn pin(t: &Tables<'_>, p: &TaskSlot, dep: TaskId, g: SlotIndex) -> bool {
    if p.seq.load(Ordering::Acquire) != dep.seq().0 {
        // The slot has a later tenant: `dep` was reclaimed long ago, so it completed.
        return false;
    }
    let mut holds = p.holds.load(Ordering::Acquire);
    loop {
        if holds == 0 {
            // Consumed: its last hold was released after it finished (Acquire above).
            inherit_cancel(t, p, g);
            return false;
        }
        match p
            .holds
            .compare_exchange_weak(holds, holds + 1, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => return true,
            Err(now) => holds = now,
        }
    }
}

/// Links edge `k` of consumer `c` into pinned producer `producer`'s (in slot `p`) fanout
/// list. A producer that had already finished has a closed list: the edge stays unlinked and
/// the consumer does not wait for it (the hold on the producer is kept either way).
#[inline(always)]
fn link(t: &Tables<'_>, p: &TaskSlot, producer: TaskId, c: &Consumer<'_>, k: usize) {
    let edge = &c.edges[k];
    let e = EdgeRef::at(c.first.word() + k as u32);
    edge.producer.store(producer.raw(), Ordering::Relaxed);
    // Counted before it is published, so the producer's decrement can never come first.
    c.slot.pending.fetch_add(1, Ordering::Relaxed);
    let mut head = p.fanout.load(Ordering::Acquire);
    loop {
        if head == EDGE_CLOSED {
            // Finished (the Acquire load saw its fanout swap): a cancelled producer cancels
            // the consumer, before the wiring hold that will release it.
            inherit_cancel(t, p, c.g);
            // Cannot reach zero: the wiring hold is still counted.
            c.slot.pending.fetch_sub(1, Ordering::Relaxed);
            return;
        }
        edge.next.store(head, Ordering::Relaxed);
        match p
            .fanout
            .compare_exchange_weak(head, e.word(), Ordering::Release, Ordering::Acquire)
        {
            Ok(_) => return,
            Err(now) => head = now,
        }
    }
}

/// Cancels consumer slot `g` if the finished producer in `p` was cancelled.
fn inherit_cancel(t: &Tables<'_>, p: &TaskSlot, g: SlotIndex) {
    if p.failed.load(Ordering::Relaxed) != 0 {
        t.slot(g).failed.store(1, Ordering::Relaxed);
    }
}

/// Drops the wiring hold of `slot`. `true` means the caller must make the task ready.
pub(crate) fn release_wiring_hold(slot: &TaskSlot) -> bool {
    slot.pending.fetch_sub(1, Ordering::AcqRel) == 1
}
