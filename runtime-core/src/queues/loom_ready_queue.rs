//! loom models of the ready queue: nothing lost or duplicated, FIFO per producer, a full
//! queue refuses, consumers never share a value. Small capacities; cell sequence numbers wrap.

use loom::sync::Arc;
use loom::thread;
use std::vec::Vec;

use crate::queues::ready_queue::{QueueCell, QueueCtl, ReadyQueue};
use crate::testing::loom_machine::bounded;

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

/// Two schedulers each pop a task from a 2-slot queue holding two and queue it again (an
/// SPMD task with blocks left): the queue never holds more than two, so neither push may
/// find it full, even when one pop is still in flight while the other thread's push wraps
/// onto its cell (pops finish out of order).
#[test]
fn a_pop_in_flight_never_makes_a_queue_look_full() {
    bounded(3).check(|| {
        let (cells, ctl) = queue(2);
        {
            let q = ReadyQueue::new(&cells, &ctl);
            q.push(1).unwrap();
            q.push(2).unwrap();
        }
        let requeue = |cells: Arc<Vec<QueueCell>>, ctl: Arc<QueueCtl>| {
            move || {
                let q = ReadyQueue::new(&cells, &ctl);
                let v = q.pop();
                if let Some(v) = v {
                    assert_eq!(q.push(v), Ok(()), "a queue holding two of two looked full");
                }
                v
            }
        };
        let other = thread::spawn(requeue(cells.clone(), ctl.clone()));
        let mine = requeue(cells.clone(), ctl.clone())();
        let theirs = other.join().unwrap();
        assert!(mine.is_some() || theirs.is_some());
        let mut all = drain(&ReadyQueue::new(&cells, &ctl));
        all.sort();
        assert_eq!(all, [1, 2]);
    });
}
