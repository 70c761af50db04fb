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
use crate::sync::Ordering;
use crate::tables::{EDGE_CLOSED, SlotIndex, Tables};

/// Takes a hold on producer `dep` if it is still alive. `false` means it was consumed (it
/// completed and nothing holds it): the dependency is already satisfied, and if `dep` was
/// cancelled, consumer slot `g` is cancelled too.
///
/// Only the orchestrator reuses slots, so `dep`'s slot cannot change tenant during this call.
/// A producer whose slot already has a later tenant has left no trace: a consumer submitted
/// that late cannot learn it was cancelled (the run still ends with the producer's error).
pub(crate) fn pin_producer(t: &Tables<'_>, dep: TaskId, g: SlotIndex) -> bool {
    let slot = t.slot(t.gslot(dep));
    if slot.seq.load(Ordering::Acquire) != dep.seq().0 {
        // The slot has a later tenant: `dep` was reclaimed long ago, so it completed.
        return false;
    }
    let mut holds = slot.holds.load(Ordering::Acquire);
    loop {
        if holds == 0 {
            // Consumed: its last hold was released after it finished (Acquire above).
            inherit_cancel(t, slot, g);
            return false;
        }
        match slot.holds.compare_exchange_weak(
            holds,
            holds + 1,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => return true,
            Err(now) => holds = now,
        }
    }
}

/// Links edge `k` of consumer slot `g` into pinned producer `producer`'s fanout list. A
/// producer that had already finished has a closed list: the edge stays unlinked and the
/// consumer does not wait for it (the hold on the producer is kept either way).
pub(crate) fn add_edge(t: &Tables<'_>, producer: TaskId, g: SlotIndex, k: usize) {
    let consumer = t.slot(g);
    let p = t.slot(t.gslot(producer));
    let e = t.edge_ref(g, k);
    let edge = t.edge(e);
    edge.producer.store(producer.raw(), Ordering::Relaxed);
    // Counted before it is published, so the producer's decrement can never come first.
    consumer.pending.fetch_add(1, Ordering::Relaxed);
    let mut head = p.fanout.load(Ordering::Acquire);
    loop {
        if head == EDGE_CLOSED {
            // Finished (the Acquire load saw its fanout swap): a cancelled producer cancels
            // the consumer, before the wiring hold that will release it.
            inherit_cancel(t, p, g);
            // Cannot reach zero: the wiring hold is still counted.
            consumer.pending.fetch_sub(1, Ordering::Relaxed);
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
fn inherit_cancel(t: &Tables<'_>, p: &crate::region::slot::TaskSlot, g: SlotIndex) {
    if p.failed.load(Ordering::Relaxed) != 0 {
        t.slot(g).failed.store(1, Ordering::Relaxed);
    }
}

/// Drops the wiring hold of `slot`. `true` means the caller must make the task ready.
pub(crate) fn release_wiring_hold(slot: &crate::region::slot::TaskSlot) -> bool {
    slot.pending.fetch_sub(1, Ordering::AcqRel) == 1
}
