//! loom models of the completion protocol's concurrent parts: a token's result word published
//! by the FIN of a later token, the run status's claim and publish, and the publication of
//! task records. Run with `RUSTFLAGS="--cfg loom" cargo test -p pto-runtime-core --release
//! --lib loom_`.

use loom::sync::Arc;
use loom::sync::atomic::Ordering;
use loom::thread;

use crate::condition::Watch;
use crate::error::{FatalCause, FatalError};
use crate::ids::{CoreId, KernelId, TaskId, Token, WorkerClass};
use crate::observe::profile::{NO_CELL, ProfCtl, ProfileLevel};
use crate::observe::record::{Closer, RecordCell};
use crate::observe::status::RunStatus;
use crate::orchestrator::{Orchestrator, TaskSpec};
use crate::protocol::{ResultWord, StatusWord};
use crate::scheduler::{Scheduler, Step};
use crate::testing::loom_machine::{Machine, one_core, two_preemptions};
use crate::testing::owned::Owned;

/// The core fails token 1 and finishes token 2 at once, each result written before its FIN.
/// Whatever the scheduler happens to read (nothing yet, FIN(1), or only FIN(2)), it reports
/// the failure of task A and never releases A's consumer: the FIN of the later token
/// publishes the earlier token's result.
#[test]
fn loom_a_failed_token_is_seen_behind_the_next_fin() {
    two_preemptions().check(|| {
        let cfg = one_core(4);
        let owned = Arc::new(Owned::new(cfg));
        let core = Arc::new(Machine::new());
        let a = {
            let mut o = Orchestrator::new(owned.tables().orch(), &*core, owned.take_orchestrator());
            let aiv = TaskSpec::new(KernelId(0), WorkerClass::Aiv);
            let a = o.submit(&aiv).unwrap();
            o.submit(&aiv).unwrap();
            o.submit(&aiv.deps(&[a])).unwrap();
            a
        };
        let (o2, c2) = (owned.clone(), core.clone());
        let sched = thread::Builder::new()
            .stack_size(1 << 20)
            .spawn(move || run_until_failed(&o2, c2))
            .unwrap();
        let err = sched.join().unwrap();
        assert_eq!(
            (err.cause, err.task),
            (FatalCause::KernelFailed { code: 42 }, Some(a))
        );
        assert_eq!(owned.tables().finished(), 0, "nothing completed");
    });
}

/// Dispatches A and B (running and pending), starts the core, steps until the run failed.
fn run_until_failed(owned: &Owned, core: Arc<Machine>) -> FatalError {
    let t = owned.tables();
    let mut s = Scheduler::new(*t, &*core, 0, &t.sched()[0], owned.take_store());
    assert_eq!(s.step(), Step::Progress);
    assert_eq!(core.rung.load(Ordering::Relaxed), 2, "A running, B pending");
    let c = core.clone();
    let player = thread::spawn(move || {
        let (one, two) = (Token::FIRST, Token::FIRST.next());
        c.results[1].store(ResultWord::failed(one, 42).bits(), Ordering::Relaxed);
        c.status
            .store(StatusWord::fin(one).bits(), Ordering::Release);
        c.results[0].store(ResultWord::done(two).bits(), Ordering::Relaxed);
        c.status
            .store(StatusWord::fin(two).bits(), Ordering::Release);
    });
    loop {
        match s.step() {
            Step::Failed => break,
            Step::Done => panic!("the run ended without the kernel error"),
            Step::Progress => {}
            Step::Idle => thread::yield_now(),
        }
    }
    assert_eq!(
        core.rung.load(Ordering::Relaxed),
        2,
        "A's consumer was never dispatched"
    );
    player.join().unwrap();
    t.shared()
        .status()
        .get()
        .expect("published by the thread that failed")
}

/// Two threads fail the run with different errors while a third reads it: exactly one wins,
/// a reader sees either nothing or the winner's whole record (never fields of both), and
/// once both returned the status is the winner's.
#[test]
fn loom_the_first_error_wins_and_is_read_whole() {
    loom::model(|| {
        let s = Arc::new(RunStatus::new());
        let errs = [
            FatalError::new(FatalCause::CoreProtocol {
                seen: 11,
                newest: 12,
            })
            .with_task(TaskId::from_raw(1))
            .with_core(CoreId(1)),
            FatalError::new(FatalCause::DeferredTimeout {
                watch: Watch::Engine(2),
                expected: 21,
                last: 22,
            })
            .with_task(TaskId::from_raw(2))
            .with_core(CoreId(2)),
        ];
        let racers: std::vec::Vec<_> = errs
            .iter()
            .map(|&e| {
                let s = s.clone();
                thread::spawn(move || s.fail(e))
            })
            .collect();
        let seen = s.get();
        assert!(seen.is_none() || seen == Some(errs[0]) || seen == Some(errs[1]));
        let won: std::vec::Vec<bool> = racers.into_iter().map(|h| h.join().unwrap()).collect();
        assert_eq!(won.iter().filter(|&&w| w).count(), 1, "exactly one winner");
        let winner = if won[0] { errs[0] } else { errs[1] };
        assert_eq!(s.get(), Some(winner));
        if let Some(e) = seen {
            assert_eq!(e, winner, "a reader saw the loser's record");
        }
    });
}

/// Two threads claim cells and write task records in place (opened at submit, stamped,
/// closed at finish) while the host reads the ring: a record read is one that was closed,
/// whole; once both finished, every record is there once; a claim past the end is refused.
#[test]
fn loom_task_records_are_read_whole_or_not_at_all() {
    loom::model(|| {
        let cells = Arc::new([RecordCell::new(), RecordCell::new(), RecordCell::new()]);
        let prof = Arc::new(ProfCtl::new(ProfileLevel::Tasks));
        let writers: std::vec::Vec<_> = [[1, 2].as_slice(), [3].as_slice()]
            .into_iter()
            .map(|tasks| {
                let (cells, prof) = (cells.clone(), prof.clone());
                thread::spawn(move || {
                    for &t in tasks {
                        let cell = &cells[prof.claim(&cells[..]) as usize];
                        cell.open(TaskId::from_raw(t), KernelId(7), WorkerClass::Aiv, t * 10);
                        cell.stamp_fin(t * 50, false);
                        cell.close(Closer::of(1), 0, t * 100, false);
                    }
                })
            })
            .collect();
        for r in prof.records(&*cells) {
            let t = r.task.raw();
            assert!((1..=3).contains(&t), "{r:?}");
            assert!(
                r.submit == t * 10 && r.fin == t * 50 && r.complete == t * 100,
                "{r:?}"
            );
            assert_eq!((r.kernel, r.scheduler), (KernelId(7), 1));
        }
        for w in writers {
            w.join().unwrap();
        }
        let mut tasks: std::vec::Vec<u64> = prof.records(&*cells).map(|r| r.task.raw()).collect();
        tasks.sort_unstable();
        assert_eq!(tasks, [1, 2, 3]);
        assert_eq!(prof.claim(&cells[..]), NO_CELL);
        assert_eq!(prof.dropped(cells.len()), 1);
    });
}
