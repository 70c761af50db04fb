//! loom models of the lock-free protocols, on the real code with small capacities.
//! Run with `RUSTFLAGS="--cfg loom" cargo test -p pto-runtime-core --release --lib`.

use loom::sync::Arc;
use loom::thread;
use std::vec::Vec;

use crate::completion::finish;
use crate::config::Config;
use crate::ids::{Seq, TaskId, WorkerClass};
use crate::owned::{Owned, plant, unmeasured};
use crate::profile::ProfileLevel;
use crate::ready_queue::{QueueCell, QueueCtl, ReadyQueue};
use crate::reclaim::release_hold;
use crate::slot::state;
use crate::sync::Ordering;
use crate::wire;

/// A model checker bounded to `preemptions` preemptions per execution (each model says why
/// its bound is enough), with room for the spin loops of full and empty queues.
fn bounded(preemptions: usize) -> loom::model::Builder {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(preemptions);
    b.max_branches = 100_000;
    b
}

const PREEMPTIONS_FAN_IN: usize = 3;

fn cfg(window: u32) -> Config {
    Config {
        rings: 1,
        task_window: window,
        profile_capacity: 0,
        max_deps: 2,
        max_args: 0,
        ..Config::tiny()
    }
}

fn queue(cap: usize) -> (Arc<Vec<QueueCell>>, Arc<QueueCtl>) {
    let cells: Arc<Vec<QueueCell>> = Arc::new((0..cap).map(QueueCell::new).collect());
    let ctl = Arc::new(QueueCtl::new());
    {
        // Start one lap in, so cell sequence numbers wrap during the model.
        let q = ReadyQueue::new(&cells, &ctl);
        q.push(99).unwrap();
        assert_eq!(q.pop(), Some(99));
    }
    (cells, ctl)
}

fn drain(q: &ReadyQueue<'_>) -> Vec<u64> {
    core::iter::from_fn(|| q.pop()).collect()
}

/// Two producers and a consumer race on a 2-slot queue: every value comes out exactly once.
#[test]
fn ready_queue_loses_and_duplicates_nothing() {
    bounded(3).check(|| {
        let (cells, ctl) = queue(2);
        let producers: Vec<_> = [0u64, 10]
            .into_iter()
            .map(|v| {
                let (cells, ctl) = (cells.clone(), ctl.clone());
                thread::spawn(move || ReadyQueue::new(&cells, &ctl).push(v).unwrap())
            })
            .collect();
        let consumer = {
            let (cells, ctl) = (cells.clone(), ctl.clone());
            thread::spawn(move || ReadyQueue::new(&cells, &ctl).pop())
        };
        for p in producers {
            p.join().unwrap();
        }
        let mut all: Vec<u64> = consumer.join().unwrap().into_iter().collect();
        all.extend(drain(&ReadyQueue::new(&cells, &ctl)));
        all.sort();
        assert_eq!(all, [0, 10]);
    });
}

/// One producer, one consumer: values come out in the order they went in.
#[test]
fn ready_queue_is_fifo_per_producer() {
    bounded(3).check(|| {
        let (cells, ctl) = queue(2);
        let producer = {
            let (cells, ctl) = (cells.clone(), ctl.clone());
            thread::spawn(move || {
                let q = ReadyQueue::new(&cells, &ctl);
                q.push(1).unwrap();
                q.push(2).unwrap();
            })
        };
        let q = ReadyQueue::new(&cells, &ctl);
        // A scheduling point before the pops: without one the model never runs the
        // producer ahead of them (it explored one interleaving).
        thread::yield_now();
        let mut order: Vec<u64> = [q.pop(), q.pop()].into_iter().flatten().collect();
        producer.join().unwrap();
        order.extend(drain(&q));
        assert_eq!(order, [1, 2]);
    });
}

/// A push into a full queue racing a pop either succeeds or gives its value back; nothing is
/// overwritten or lost.
#[test]
fn a_full_ready_queue_refuses_and_never_overwrites() {
    bounded(3).check(|| {
        let (cells, ctl) = queue(2);
        let q = ReadyQueue::new(&cells, &ctl);
        q.push(1).unwrap();
        q.push(2).unwrap();
        let consumer = {
            let (cells, ctl) = (cells.clone(), ctl.clone());
            thread::spawn(move || ReadyQueue::new(&cells, &ctl).pop())
        };
        // A scheduling point, so the consumer may also pop before this push.
        thread::yield_now();
        let refused = q.push(3).err();
        let popped = consumer.join().unwrap();
        assert_eq!(popped, Some(1), "the oldest value, never the new one");
        let mut all: Vec<u64> = drain(&q);
        all.extend(refused);
        all.sort();
        assert_eq!(all, [2, 3]);
    });
}

/// Two consumers race for two values: each value is taken once.
#[test]
fn ready_queue_consumers_never_share_a_value() {
    bounded(3).check(|| {
        let cells: Arc<Vec<QueueCell>> = Arc::new((0..2).map(QueueCell::new).collect());
        let ctl = Arc::new(QueueCtl::new());
        {
            let q = ReadyQueue::new(&cells, &ctl);
            q.push(1).unwrap();
            q.push(2).unwrap();
        }
        let other = {
            let (cells, ctl) = (cells.clone(), ctl.clone());
            thread::spawn(move || ReadyQueue::new(&cells, &ctl).pop())
        };
        thread::yield_now();
        let mine = ReadyQueue::new(&cells, &ctl).pop();
        let theirs = other.join().unwrap();
        let mut all: Vec<u64> = mine.into_iter().chain(theirs).collect();
        all.sort();
        assert_eq!(all, [1, 2]);
    });
}

/// The orchestrator wires a consumer to two producers while two schedulers finish them: the
/// consumer becomes ready exactly once, only after both, and every slot is reclaimed.
#[test]
fn fan_in_makes_the_consumer_ready_exactly_once() {
    // Three threads; three preemptions interleave both producers' finishes anywhere inside
    // the orchestrator's wiring (about 10 s in release).
    bounded(PREEMPTIONS_FAN_IN).check(|| {
        let owned = Arc::new(Owned::new(cfg(4)));
        let t = owned.tables();
        let p1 = plant(&t, 0, WorkerClass::Dummy);
        let p2 = plant(&t, 1, WorkerClass::Dummy);
        let finishers: Vec<_> = [p1, p2]
            .into_iter()
            .map(|p| {
                let owned = owned.clone();
                thread::spawn(move || {
                    let t = owned.tables();
                    finish(&t, p, unmeasured(&t), None);
                })
            })
            .collect();
        // The orchestrator's half of submit, as `Orchestrator::submit` does it.
        let c = plant(&t, 2, WorkerClass::Dummy);
        let g = t.gslot(c);
        t.slot(g).pending.store(1, Ordering::Relaxed);
        let mut pinned = 0;
        for p in [p1, p2] {
            if wire::pin_producer(&t, p) {
                wire::add_edge(&t, p, g, pinned);
                pinned += 1;
            }
        }
        let meta = crate::slot::Meta {
            kernel: crate::ids::KernelId(0),
            class: WorkerClass::Dummy,
            nargs: 0,
            pinned: pinned as u8,
            ntensors: 0,
        };
        t.slot(g).meta.store(meta.pack(), Ordering::Relaxed);
        if wire::release_wiring_hold(&t, g) {
            crate::ready_queue::make_ready(&t, g, 0, ProfileLevel::Off);
        }
        for f in finishers {
            f.join().unwrap();
        }
        let q = t.queue(WorkerClass::Dummy);
        assert_eq!(q.pop(), Some(c.raw()), "ready once both producers finished");
        assert_eq!(q.pop(), None, "and only once");
        finish(&t, c, unmeasured(&t), None);
        assert_eq!(
            t.rings[0].retired.0.load(Ordering::SeqCst),
            3,
            "every slot reclaimed"
        );
    });
}

/// Two threads consume the two oldest slots at once: the watermark passes both.
#[test]
fn watermark_advance_is_never_lost() {
    bounded(3).check(|| {
        let owned = Arc::new(Owned::new(cfg(2)));
        let t = owned.tables();
        let ids: Vec<TaskId> = (0..2).map(|s| plant(&t, s, WorkerClass::Dummy)).collect();
        for id in &ids {
            t.slot(t.gslot(*id))
                .state
                .store(state::COMPLETED, Ordering::Relaxed);
        }
        let other = {
            let owned = owned.clone();
            let id = ids[1];
            thread::spawn(move || {
                let t = owned.tables();
                release_hold(&t, t.gslot(id));
            })
        };
        release_hold(&t, t.gslot(ids[0]));
        other.join().unwrap();
        assert_eq!(t.rings[0].retired.0.load(Ordering::SeqCst), 2);
        assert_eq!(Seq(2).index(t.shift), 0);
    });
}

/// Two ranks pass a barrier twice: neither leaves a round before the other arrived in it,
/// and the second round cannot be released by the first one's last arrival. Preemption
/// bound 3: each round is one ticket and one release per rank.
#[test]
fn the_barrier_releases_no_rank_before_all_arrived() {
    use crate::barrier::BarrierWords;
    use crate::sync::AtomicU64;
    bounded(3).check(|| {
        let b = Arc::new(BarrierWords::new());
        let reached: Arc<[AtomicU64; 2]> = Arc::new([AtomicU64::new(0), AtomicU64::new(0)]);
        let ranks: Vec<_> = (0..2u32)
            .map(|r| {
                let (b, reached) = (b.clone(), reached.clone());
                thread::spawn(move || {
                    for round in 1..=2u64 {
                        reached[r as usize].store(round, Ordering::Release);
                        b.wait(r, 2, |_| {
                            thread::yield_now();
                            true
                        })
                        .unwrap();
                        let other = reached[1 - r as usize].load(Ordering::Acquire);
                        assert!(other >= round, "released early");
                    }
                })
            })
            .collect();
        for t in ranks {
            t.join().unwrap();
        }
        assert_eq!(b.generation(), 2);
    });
}
