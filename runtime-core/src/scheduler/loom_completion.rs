//! loom model of the completion funnel against the orchestrator's wiring: a fan-in consumer
//! becomes ready exactly once.

use loom::sync::Arc;
use loom::thread;
use std::vec::Vec;

use crate::ids::WorkerClass;
use crate::observe::profile::ProfileLevel;
use crate::orchestrator::wire;
use crate::scheduler::completion::finish;
use crate::sync::Ordering;
use crate::testing::loom_machine::{bounded, small_cfg};
use crate::testing::owned::{Owned, plant, unmeasured};

const PREEMPTIONS_FAN_IN: usize = 3;

/// The orchestrator wires a vector consumer to two producers while two schedulers finish
/// them, the first one cancelled (its transfer failed): the consumer becomes ready exactly
/// once, only after both, cancelled however the wiring and the finishes interleave (so it goes
/// to the DUMMY queue, never to a core), and every slot is reclaimed.
#[test]
fn fan_in_makes_the_consumer_ready_exactly_once_and_a_cancelled_producer_cancels_it() {
    // Three threads; three preemptions interleave both producers' finishes anywhere inside
    // the orchestrator's wiring (about 10 s in release).
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    bounded(PREEMPTIONS_FAN_IN).check(|| {
        RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let owned = Arc::new(Owned::new(small_cfg(4)));
        let t = owned.tables();
        let p1 = plant(&t, 0, WorkerClass::Dummy);
        let p2 = plant(&t, 1, WorkerClass::Dummy);
        let finishers: Vec<_> = [p1, p2]
            .into_iter()
            .map(|p| {
                let owned = owned.clone();
                thread::spawn(move || {
                    let t = owned.tables();
                    if p == p1 {
                        // As its scheduler does when the transfer's error entry arrives.
                        t.slot(t.gslot(p)).failed.store(1, Ordering::Relaxed);
                    }
                    finish(&t, p, unmeasured(&t));
                })
            })
            .collect();
        // The orchestrator's half of submit, as `Orchestrator::submit` does it.
        let c = plant(&t, 2, WorkerClass::Aiv);
        let g = t.gslot(c);
        t.slot(g).pending.store(1, Ordering::Relaxed);
        let mut pinned = 0;
        let consumer = wire::Consumer::of(&t, g);
        for p in [p1, p2] {
            if wire::wire_producer(&t, p, &consumer, pinned) {
                pinned += 1;
            }
        }
        let meta = crate::region::slot::Meta::plain(
            (crate::ids::KernelId(0), WorkerClass::Aiv),
            (0, 0),
            pinned,
        );
        t.slot(g).meta.store(meta.pack(), Ordering::Relaxed);
        if wire::release_wiring_hold(t.slot(g)) {
            let ready = crate::tables::ready::Ready {
                id: c,
                class: WorkerClass::Aiv,
            };
            crate::tables::ready::make_submitted_ready(
                &t,
                g,
                t.slot(g),
                ready,
                0,
                ProfileLevel::Off,
            );
        }
        for f in finishers {
            f.join().unwrap();
        }
        let q = t.queue(WorkerClass::Dummy);
        assert_eq!(q.pop(), Some(c.raw()), "ready once both producers finished");
        assert_eq!(q.pop(), None, "and only once");
        assert_eq!(t.queue(WorkerClass::Aiv).pop(), None, "never to a core");
        // The scheduler that pops it finishes it, Acquire through the queue.
        assert_eq!(t.slot(g).failed.load(Ordering::Relaxed), 1, "cancelled");
        finish(&t, c, unmeasured(&t));
        assert_eq!(
            t.rings()[0].retired.0.load(Ordering::SeqCst),
            3,
            "every slot reclaimed"
        );
    });
    let runs = RUNS.load(std::sync::atomic::Ordering::Relaxed);
    std::println!("fan-in with a cancelled producer: {runs} interleavings");
    assert!(runs > 1_000, "loom explored only {runs} interleavings");
}
