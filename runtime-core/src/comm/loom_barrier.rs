//! loom model of the shared-memory barrier.

use loom::sync::Arc;
use loom::thread;
use std::vec::Vec;

use crate::sync::Ordering;
use crate::testing::loom_machine::bounded;

/// Two ranks pass a barrier twice: neither leaves a round before the other arrived in it,
/// and the second round cannot be released by the first one's last arrival. Preemption
/// bound 3: each round is one ticket and one release per rank.
#[test]
fn the_barrier_releases_no_rank_before_all_arrived() {
    use crate::comm::barrier::BarrierWords;
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
