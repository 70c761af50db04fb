//! loom model of deferred completion: the hand-off from a core's FIN to the deferred set, and
//! from a landed transfer to the consumer that reads its data.
//! Run with `RUSTFLAGS="--cfg loom" cargo test -p pto-runtime-core --release --lib`.

use loom::sync::Arc;
use loom::sync::atomic::Ordering;
use loom::thread;

use crate::ids::{KernelId, Token, WorkerClass};
use crate::orchestrator::{Orchestrator, TaskSpec};
use crate::protocol::{ResultWord, StatusWord};
use crate::scheduler::{Scheduler, Step};
use crate::testing::loom_machine::{Machine, one_core, two_preemptions};
use crate::testing::owned::Owned;

/// A producer's kernel registers `counter >= 1` and reports FIN while an engine lands the
/// producer's data and bumps the counter. Whenever the scheduler has completed the producer,
/// the data must be visible to it (and so to every consumer it then releases). Checks that
/// the FIN publishes the conditions (a missed one would complete the producer early) and that
/// reading the counter synchronises with the engine's landing.
/// Preemption bound 2: three threads, each with one publishing store.
#[test]
fn a_deferred_producer_completes_only_after_its_data_landed() {
    two_preemptions().check(|| {
        let cfg = one_core(2);
        let owned = Arc::new(Owned::new(cfg));
        let m = Arc::new(Machine::new());
        {
            let mut o = Orchestrator::new(owned.tables().orch(), &*m, owned.take_orchestrator());
            let a = o
                .submit(&TaskSpec::new(KernelId(0), WorkerClass::Aiv))
                .unwrap();
            o.submit(&TaskSpec::dummy().deps(&[a])).unwrap();
        }
        // The scheduler gets a thread of its own for the stack its handle needs.
        let (o2, m2) = (owned.clone(), m.clone());
        let sched = thread::Builder::new()
            .stack_size(1 << 20)
            .spawn(move || scheduler(&o2, m2))
            .unwrap();
        sched.join().unwrap();
        assert_eq!(owned.tables().finished(), 2);
    });
}

/// Dispatches the producer, starts its core and its engine, and runs the scheduler to the end,
/// checking the data whenever the producer has completed.
fn scheduler(owned: &Owned, m: Arc<Machine>) {
    let t = owned.tables();
    let mut s = Scheduler::new(*t, &*m, 0, &t.sched()[0], owned.take_store());
    assert_eq!(s.step(), Step::Progress, "A is dispatched");
    assert_eq!(m.rung.load(Ordering::Relaxed), 1);
    let core = {
        let m = m.clone();
        thread::spawn(move || {
            m.slab.store(1, Ordering::Relaxed);
            m.results[1].store(ResultWord::done(Token::FIRST).bits(), Ordering::Relaxed);
            m.status
                .store(StatusWord::fin(Token::FIRST).bits(), Ordering::Release);
        })
    };
    let engine = {
        let m = m.clone();
        thread::spawn(move || {
            m.data.store(42, Ordering::Relaxed);
            m.counter.store(1, Ordering::Release);
        })
    };
    loop {
        let step = s.step();
        if t.finished() > 0 {
            assert_eq!(
                m.data.load(Ordering::Relaxed),
                42,
                "completed before landing"
            );
        }
        match step {
            Step::Done => break,
            Step::Idle => thread::yield_now(),
            Step::Progress => {}
            Step::Failed => panic!("{:?}", t.shared().status().get()),
        }
    }
    core.join().unwrap();
    engine.join().unwrap();
}
