//! loom model of the SPMD block protocol: schedulers that pop a task of several blocks claim
//! its next blocks and queue it again for the rest (`blocks::claim`), and the task finishes
//! with its last lane, whoever retires it.

use loom::sync::Arc;
use loom::sync::atomic::AtomicU32;
use loom::thread;
use std::vec::Vec;

use super::blocks::claim;
use crate::ids::{TaskId, WorkerClass};
use crate::region::slot::Blocks;
use crate::scheduler::completion::finish;
use crate::sync::Ordering;
use crate::tables::ready::Ready;
use crate::tables::views::RunTables;
use crate::testing::loom_machine::{bounded, small_cfg};
use crate::testing::owned::{Owned, plant, unmeasured};

const BLOCKS: u16 = 3;
const PREEMPTIONS: usize = 3;

/// Pops the task from the vector queue (if it is there), claims up to `free` of its blocks,
/// counts each in `runs` and retires it at once, finishing the task with its last lane.
fn pop_claim_retire(t: &RunTables<'_>, free: u16, runs: &[AtomicU32]) -> bool {
    let Some(raw) = t.queue(WorkerClass::Aiv).pop() else {
        return false;
    };
    let task = TaskId::from_raw(raw);
    let g = t.gslot(task);
    let b = Blocks::unpack(t.slot(g).blocks.load(Ordering::Relaxed));
    let c = claim(t, task, g, WorkerClass::Aiv, b, free);
    assert_eq!(c.count, BLOCKS);
    for b in c.mine {
        runs[b as usize].fetch_add(1, Ordering::Relaxed);
        // The block's lane reports FIN on its core; its scheduler retires it.
        if t.slot(g).lanes_left.fetch_sub(1, Ordering::AcqRel) == 1 {
            finish(t, task, unmeasured(t));
        }
    }
    true
}

/// Two schedulers pop a task of three blocks, one block at a time, while the orchestrator
/// queued it: however they interleave, each block is claimed exactly once, and the task
/// finishes exactly once, after its last block (the third claimant, the orchestrator's
/// thread here, drains what the two left).
#[test]
fn each_block_is_claimed_once_and_the_task_finishes_once() {
    // Three threads; three preemptions interleave a claim's store and re-queue with the
    // other scheduler's pop anywhere.
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    bounded(PREEMPTIONS).check(|| {
        RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let owned = Arc::new(Owned::new(small_cfg(4)));
        let runs: Arc<Vec<AtomicU32>> = Arc::new((0..BLOCKS).map(|_| AtomicU32::new(0)).collect());
        let t = owned.tables();
        let task = plant(&t, 0, WorkerClass::Aiv);
        let slot = t.slot(t.gslot(task));
        slot.blocks
            .store(Blocks::first(BLOCKS).pack(), Ordering::Relaxed);
        slot.lanes_left.store(BLOCKS as u32, Ordering::Relaxed);
        Ready {
            id: task,
            class: WorkerClass::Aiv,
        }
        .enqueue(&t);
        let schedulers: Vec<_> = (0..2)
            .map(|_| {
                let (owned, runs) = (owned.clone(), runs.clone());
                thread::spawn(move || {
                    let t = owned.tables();
                    pop_claim_retire(&t, 1, &runs);
                })
            })
            .collect();
        for s in schedulers {
            s.join().unwrap();
        }
        while pop_claim_retire(&t, BLOCKS, &runs) {}
        for (b, r) in runs.iter().enumerate() {
            assert_eq!(r.load(Ordering::Relaxed), 1, "block {b} claimed once");
        }
        assert_eq!(t.finished(), 1, "finished once");
        assert_eq!(
            t.rings()[0].retired.0.load(Ordering::SeqCst),
            1,
            "and reclaimed"
        );
    });
    let runs = RUNS.load(std::sync::atomic::Ordering::Relaxed);
    std::println!("block claims: {runs} interleavings");
    assert!(runs > 100, "loom explored only {runs} interleavings");
}
