//! loom model of the record drain: the orchestrator claims records in a ring of two cells
//! (waiting for room), opens and closes them (closing from another thread is the funnel's
//! Release/Acquire, modelled in `scheduler/loom_protocol.rs`), while the drain takes and
//! resets them. Every record is taken once, in claim order, whole (never a reset cell or a
//! later lap's record).

use loom::sync::Arc;
use loom::thread;
use std::vec::Vec;

use crate::ids::{KernelId, TaskId, WorkerClass};
use crate::observe::profile::ProfileLevel;
use crate::observe::record::Closer;
use crate::region::config::Config;
use crate::sync::spin_loop;
use crate::tables::drain::RecordDrain;
use crate::testing::loom_machine::{bounded, small_cfg};
use crate::testing::owned::{Owned, plant};

const TASKS: u64 = 3;

#[test]
fn loom_drain_takes_every_record_once_in_order_through_a_ring_of_two() {
    bounded(2).check(|| {
        let cfg = Config {
            profile: ProfileLevel::Tasks,
            profile_capacity: 2,
            ..small_cfg(4)
        };
        let owned = Arc::new(Owned::new(cfg));
        let t = owned.tables();
        let ids: Vec<TaskId> = (0..TASKS).map(|s| plant(&t, s, WorkerClass::Aiv)).collect();
        assert!(t.shared().prof().stream());
        let drainer = {
            let owned = owned.clone();
            thread::spawn(move || {
                let t = owned.tables();
                let mut drain = RecordDrain::new(*t, t.records());
                let mut got = Vec::new();
                while (got.len() as u64) < TASKS {
                    if drain.drain(|r| got.push(r)) == 0 {
                        spin_loop();
                    }
                }
                got
            })
        };
        let prof = t.shared().prof();
        for (i, &id) in ids.iter().enumerate() {
            while !prof.make_room(t.records(), 1) {
                spin_loop();
            }
            let cell = prof.claim(t.records());
            assert_eq!(
                cell as usize,
                i % 2,
                "no claim is lost while the drain runs"
            );
            let r = &t.records()[cell as usize];
            r.open(id, KernelId(7), WorkerClass::Aiv, 10 + i as u64);
            r.close(Closer::of(0), 0, 100 + i as u64, false);
        }
        let got = drainer.join().unwrap();
        let seen: Vec<(TaskId, u64, u64)> =
            got.iter().map(|r| (r.task, r.submit, r.complete)).collect();
        let want: Vec<(TaskId, u64, u64)> = ids
            .iter()
            .enumerate()
            .map(|(i, &id)| (id, 10 + i as u64, 100 + i as u64))
            .collect();
        assert_eq!(seen, want);
        assert_eq!(prof.dropped(2), 0);
    });
}
