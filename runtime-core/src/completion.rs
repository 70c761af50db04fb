//! The one function every task finishes through, and the hand-off to the ready queues.
//!
//! Normal tasks (last lane's FIN), DUMMY tasks (completed by a scheduler as soon as ready) and,
//! later, deferred tasks all call [`finish`]; accounting and profiling live here and nowhere
//! else.
#![forbid(unsafe_code)]

use crate::error::{FatalError, FatalKind};
use crate::ids::TaskId;
use crate::platform::Platform;
use crate::reclaim::release_hold;
use crate::slot::{Meta, state};
use crate::stats::{SchedCtl, bucket_of};
use crate::sync::Ordering;
use crate::tables::{EDGE_CLOSED, EDGE_SENTINELS, Tables};

/// Finishes task `id` (the caller owns its completion: this runs once per task): marks it
/// COMPLETED, releases its consumers (making the last-waited-for ones ready), releases the
/// producers it held, drops its own hold and counts it on `ctl`.
pub(crate) fn finish<P: Platform>(t: &Tables<'_>, p: &P, id: TaskId, ctl: &SchedCtl) {
    let g = t.gslot(id);
    let slot = t.slot(g);
    if t.cfg.record_latency {
        let ready_at = slot.ready_at.load(Ordering::Relaxed);
        let lat = p.now().saturating_sub(ready_at);
        let cell = &ctl.latency[bucket_of(lat)];
        SchedCtl::bump(cell, 1);
    }
    slot.state.store(state::COMPLETED, Ordering::Release);

    // Consumers: close the list, then walk it. Read `next` before the decrement: once a
    // consumer is released it may finish and its slot (which holds the edge) be reused.
    let mut e = slot.fanout.swap(EDGE_CLOSED, Ordering::AcqRel);
    while e < EDGE_SENTINELS {
        let next = t.edge(e).next.load(Ordering::Relaxed);
        let consumer = t.edge_owner(e);
        if t.slot(consumer).pending.fetch_sub(1, Ordering::AcqRel) == 1 {
            make_ready(t, p, consumer);
        }
        e = next;
    }

    // Producers this task held.
    let meta = Meta::unpack(slot.meta.load(Ordering::Relaxed));
    for k in 0..meta.pinned as usize {
        let producer = TaskId::from_raw(t.edge(t.edge_ref(g, k)).producer.load(Ordering::Relaxed));
        release_hold(t, t.gslot(producer));
    }

    release_hold(t, g);
    ctl.finished
        .store(ctl.finished.load(Ordering::Relaxed) + 1, Ordering::Release);
}

/// Publishes slot `g`'s task to the ready queue of its class. The caller is the one thread
/// whose fan-in decrement reached zero.
pub(crate) fn make_ready<P: Platform>(t: &Tables<'_>, p: &P, g: usize) {
    let slot = t.slot(g);
    if t.cfg.record_latency {
        slot.ready_at.store(p.now(), Ordering::Relaxed);
    }
    let meta = Meta::unpack(slot.meta.load(Ordering::Relaxed));
    let id = t.task_at(g);
    if t.queue(meta.class).push(id.raw()).is_err() {
        t.shared.status.fail(
            FatalError::new(FatalKind::ReadyQueueOverflow)
                .with_task(id)
                .with_detail(meta.class as u64, 0),
        );
    }
}
