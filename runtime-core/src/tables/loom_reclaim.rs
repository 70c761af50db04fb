//! loom model of reclaim: the ring watermark passes every consumed slot, whoever consumed it.

use loom::sync::Arc;
use loom::thread;
use std::vec::Vec;

use crate::ids::{Seq, TaskId, WorkerClass};
use crate::region::slot::state;
use crate::sync::Ordering;
use crate::tables::reclaim::{release_hold, release_hold_of};
use crate::testing::loom_machine::{bounded, small_cfg};
use crate::testing::owned::{Owned, plant};

/// Two threads consume the two oldest slots at once (one as the orchestrator does, one as
/// the funnel does, knowing its tenant's sequence number): the watermark passes both.
#[test]
fn watermark_advance_is_never_lost() {
    bounded(3).check(|| {
        let owned = Arc::new(Owned::new(small_cfg(2)));
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
                release_hold_of(&t, t.gslot(id), id.seq());
            })
        };
        release_hold(&t, t.gslot(ids[0]));
        other.join().unwrap();
        assert_eq!(t.rings[0].retired.0.load(Ordering::SeqCst), 2);
        assert_eq!(Seq(2).index(t.shift), 0);
    });
}
