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
use crate::region::tables::{EDGE_CLOSED, Tables};
use crate::sync::Ordering;

/// Takes a hold on producer `dep` if it is still alive. `false` means it was consumed (it
/// completed and nothing holds it): the dependency is already satisfied.
///
/// Only the orchestrator reuses slots, so `dep`'s slot cannot change tenant during this call.
pub(crate) fn pin_producer(t: &Tables<'_>, dep: TaskId) -> bool {
    let slot = t.slot(t.gslot(dep));
    if slot.seq.load(Ordering::Acquire) != dep.seq().0 {
        // The slot has a later tenant: `dep` was reclaimed long ago, so it completed.
        return false;
    }
    let mut holds = slot.holds.load(Ordering::Acquire);
    loop {
        if holds == 0 {
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
pub(crate) fn add_edge(t: &Tables<'_>, producer: TaskId, g: usize, k: usize) {
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
            // Cannot reach zero: the wiring hold is still counted.
            consumer.pending.fetch_sub(1, Ordering::Relaxed);
            return;
        }
        edge.next.store(head, Ordering::Relaxed);
        match p
            .fanout
            .compare_exchange_weak(head, e, Ordering::Release, Ordering::Acquire)
        {
            Ok(_) => return,
            Err(now) => head = now,
        }
    }
}

/// Drops the wiring hold of slot `g`. `true` means the caller must make the task ready.
pub(crate) fn release_wiring_hold(t: &Tables<'_>, g: usize) -> bool {
    t.slot(g).pending.fetch_sub(1, Ordering::AcqRel) == 1
}
