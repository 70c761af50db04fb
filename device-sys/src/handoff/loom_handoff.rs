//! loom models of the hand-off: exactly one thread is the last out of a run; it sees what
//! every thread wrote before departing; every thread of a ready run sees what ticket 0 wrote
//! before publishing; latecomers are refused once arrivals closed, and the run waits for
//! exactly those that came; the next run starts at ticket 0 and sees what the last out wrote.

use loom::sync::Arc;
use loom::thread;
use pto_runtime_core::sync::{AtomicU32, AtomicU64, Ordering, spin_loop};

use super::Handoff;

/// The hand-off and what the threads write around it, in loom atomics.
struct Run {
    handoff: Handoff,
    /// Ticket 0 writes it before publishing.
    setup: AtomicU64,
    /// Ticket `i` writes `i + 1` at `parts[i]` before departing.
    parts: [AtomicU64; 3],
    /// The last out writes it before resetting.
    report: AtomicU64,
    last_outs: AtomicU32,
    refused: AtomicU32,
    /// Runs set up (tickets 0 taken).
    setups: AtomicU32,
}

impl Run {
    fn new() -> Arc<Self> {
        Arc::new(Run {
            handoff: Handoff::new(),
            setup: AtomicU64::new(0),
            parts: core::array::from_fn(|_| AtomicU64::new(0)),
            report: AtomicU64::new(0),
            last_outs: AtomicU32::new(0),
            refused: AtomicU32::new(0),
            setups: AtomicU32::new(0),
        })
    }

    /// One `exec` thread of a run of `threads`: ticket 0 looks `patience` times (forever
    /// with `None`) for the others before it gives up on them.
    fn exec(&self, threads: u32, patience: Option<usize>) {
        let h = &self.handoff;
        let Some(mut ticket) = h.arrive(threads) else {
            self.refused.fetch_add(1, Ordering::Relaxed);
            return;
        };
        if let Some(setup) = h.setup(&mut ticket) {
            self.setups.fetch_add(1, Ordering::Relaxed);
            self.setup.store(7, Ordering::Relaxed);
            let mut looks = 0;
            let mut all = h.all_arrived(threads);
            while !all && patience.is_none_or(|p| looks < p) {
                thread::yield_now();
                looks += 1;
                all = h.all_arrived(threads);
            }
            h.publish(setup, threads, all, true);
        }
        self.part(ticket);
    }

    /// A ticket's part once published: checks the setup, writes its part, departs, and
    /// as the last out checks every part, writes the report and resets.
    fn part(&self, ticket: super::Ticket) {
        let h = &self.handoff;
        if h.wait(&ticket, spin_loop).is_some() {
            assert_eq!(self.setup.load(Ordering::Relaxed), 7, "the setup is seen");
        }
        let n = ticket.number() as usize;
        self.parts[n].store(n as u64 + 1, Ordering::Relaxed);
        if let Some(last) = h.depart(ticket) {
            for (i, p) in self.parts.iter().take(last.threads() as usize).enumerate() {
                assert_eq!(p.load(Ordering::Relaxed), i as u64 + 1, "part {i} is seen");
            }
            self.last_outs.fetch_add(1, Ordering::Relaxed);
            self.report
                .store(100 + last.threads() as u64, Ordering::Relaxed);
            last.reset();
        }
    }
}

#[test]
fn two_threads_race_for_ticket_zero_and_one_of_them_is_the_last_out() {
    loom::model(|| {
        let run = Run::new();
        let other = {
            let run = run.clone();
            thread::spawn(move || run.exec(2, None))
        };
        run.exec(2, None);
        other.join().unwrap();
        assert_eq!(
            run.refused.load(Ordering::Relaxed),
            0,
            "ticket 0 waits for all"
        );
        assert_eq!(
            run.last_outs.load(Ordering::Relaxed),
            1,
            "exactly one last out"
        );
        assert_eq!(run.report.load(Ordering::Relaxed), 102, "a run of two");
    });
}

#[test]
fn closed_arrivals_refuse_latecomers_and_the_run_waits_for_exactly_those_that_came() {
    // A run of three that only two threads come to: ticket 0 looks once for the other,
    // then closes arrivals. The other takes part, is refused, or comes after the last out
    // reset and starts a run of its own (which fails alone): each run has one last out.
    loom::model(|| {
        let run = Run::new();
        let other = {
            let run = run.clone();
            thread::spawn(move || run.exec(3, Some(1)))
        };
        run.exec(3, Some(1));
        other.join().unwrap();
        let runs = run.setups.load(Ordering::Relaxed);
        let refused = run.refused.load(Ordering::Relaxed);
        assert_eq!(
            run.last_outs.load(Ordering::Relaxed),
            runs,
            "one last out per run"
        );
        assert!(
            runs == 1 || (runs == 2 && refused == 0),
            "{runs} runs, {refused} refused"
        );
        if runs == 1 {
            let came = 2 - refused as u64;
            assert_eq!(
                run.report.load(Ordering::Relaxed),
                100 + came,
                "those that came"
            );
        }
        let t = run.handoff.arrive(3).expect("the next run takes tickets");
        assert_eq!(t.number(), 0, "the next run starts at ticket 0");
    });
}

#[test]
fn the_next_run_starts_clean_and_sees_what_the_last_out_wrote() {
    // A run of two (both tickets taken up front, one handed to a thread), and a thread of
    // the next run that keeps arriving: refused until the last out resets, then ticket 0.
    loom::model(|| {
        let run = Run::new();
        let mut zero = run.handoff.arrive(2).unwrap();
        let one = run.handoff.arrive(2).unwrap();
        let next = {
            let run = run.clone();
            thread::spawn(move || {
                let t = loop {
                    match run.handoff.arrive(1) {
                        Some(t) => break t,
                        None => thread::yield_now(),
                    }
                };
                assert_eq!(t.number(), 0, "the next run starts at ticket 0");
                assert_eq!(
                    run.report.load(Ordering::Relaxed),
                    102,
                    "the report is seen"
                );
                assert_eq!(run.last_outs.load(Ordering::Relaxed), 1);
            })
        };
        let second = {
            let run = run.clone();
            thread::spawn(move || run.part(one))
        };
        let setup = run.handoff.setup(&mut zero).unwrap();
        run.setup.store(7, Ordering::Relaxed);
        run.handoff.publish(setup, 2, true, true);
        run.part(zero);
        second.join().unwrap();
        next.join().unwrap();
    });
}
