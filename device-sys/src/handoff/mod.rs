//! How the AICPU threads of one run of `libpto_aicpu.so` share it out and hand it back.
//!
//! CANN calls `exec` on N threads. Each takes a [`Ticket`] ([`Handoff::arrive`]); ticket 0
//! sets the run up ([`Handoff::setup`]) and publishes it, ready or failed
//! ([`Handoff::publish`]); the others wait for that ([`Handoff::wait`]). Every thread that
//! took a ticket departs ([`Handoff::depart`]), and the one whose departure makes the
//! count is the [`LastOut`]: it alone tears the run down, and its [`LastOut::reset`] opens
//! the hand-off for the next run. If not every thread arrives in time, ticket 0 closes
//! arrivals: those that came depart, later ones are refused.
//!
//! Ordering: what ticket 0 wrote before publishing is seen by a thread whose `wait` returned
//! (Release/Acquire on the state); what any thread wrote before departing is seen by the last
//! out (the departure count is one AcqRel read-modify-write chain); what the last out wrote
//! before `reset` is seen by the next run's threads (Release on the arrival count).
//!
//! The tokens carry the protocol in types: a [`Setup`] borrows ticket 0 exclusively until it
//! is published, a [`Published`] borrows its ticket (so it ends before the ticket departs),
//! and a [`LastOut`] exists once per run, after every other ticket departed. The SO's shared
//! run state hands out references against them.
#![forbid(unsafe_code)]

use core::marker::PhantomData;

use pto_runtime_core::sync::{AtomicU32, Ordering};

/// Nobody set the run up yet.
const EMPTY: u32 = 0;
/// Ticket 0 is setting the run up.
const SETTING_UP: u32 = 1;
/// Published: the run can go.
const READY: u32 = 2;
/// Published: the run cannot go; every thread departs at once.
const FAILED: u32 = 3;
/// Set in the arrival count once no more tickets are handed out.
const CLOSED: u32 = 1 << 31;

/// The hand-off of one run at a time between the AICPU threads.
#[derive(Debug)]
pub struct Handoff {
    /// Tickets handed out, with [`CLOSED`] once arrivals closed.
    arrived: AtomicU32,
    /// Tickets given back.
    departed: AtomicU32,
    /// Tickets the run waits for before its last out (set when published).
    expect: AtomicU32,
    /// `EMPTY`, `SETTING_UP`, `READY` or `FAILED`.
    state: AtomicU32,
}

/// One thread's place in a run, from [`Handoff::arrive`] to [`Handoff::depart`].
#[derive(Debug, PartialEq, Eq)]
pub struct Ticket(u32);

impl Ticket {
    /// The ticket's number: 0 for the thread that sets the run up.
    pub fn number(&self) -> u32 {
        self.0
    }
}

/// Ticket 0's exclusive right to set the run up, until [`Handoff::publish`].
#[derive(Debug)]
pub struct Setup<'t>(PhantomData<&'t mut Ticket>);

/// Proof that the run was published ready, for as long as the ticket that saw it lives.
#[derive(Clone, Copy, Debug)]
pub struct Published<'t>(PhantomData<&'t Ticket>);

/// The last thread out of a run: every other ticket departed. Its [`LastOut::reset`] ends
/// the run.
#[derive(Debug)]
pub struct LastOut<'h> {
    handoff: &'h Handoff,
}

impl Default for Handoff {
    fn default() -> Self {
        Self::new()
    }
}

impl Handoff {
    /// A hand-off with no run.
    #[cfg(not(loom))]
    pub const fn new() -> Self {
        Handoff {
            arrived: AtomicU32::new(0),
            departed: AtomicU32::new(0),
            expect: AtomicU32::new(0),
            state: AtomicU32::new(EMPTY),
        }
    }

    /// A hand-off with no run (loom's atomics have no `const` constructor).
    #[cfg(loom)]
    pub fn new() -> Self {
        Handoff {
            arrived: AtomicU32::new(0),
            departed: AtomicU32::new(0),
            expect: AtomicU32::new(0),
            state: AtomicU32::new(EMPTY),
        }
    }

    /// A ticket in a run of `threads` threads; `None` once `threads` were handed out or
    /// arrivals closed (the thread takes no part).
    pub fn arrive(&self, threads: u32) -> Option<Ticket> {
        let mut n = self.arrived.load(Ordering::Acquire);
        loop {
            if n & CLOSED != 0 || n >= threads {
                return None;
            }
            match self
                .arrived
                .compare_exchange(n, n + 1, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return Some(Ticket(n)),
                Err(now) => n = now,
            }
        }
    }

    /// For ticket 0 only: the right to set the run up (the others get `None`).
    pub fn setup<'t>(&self, ticket: &'t mut Ticket) -> Option<Setup<'t>> {
        if ticket.0 != 0 {
            return None;
        }
        self.state.store(SETTING_UP, Ordering::Relaxed);
        Some(Setup(PhantomData))
    }

    /// Tickets handed out so far in the current run.
    pub fn arrived(&self) -> u32 {
        self.arrived.load(Ordering::Acquire) & !CLOSED
    }

    /// Whether `threads` tickets were handed out.
    pub fn all_arrived(&self, threads: u32) -> bool {
        self.arrived() >= threads
    }

    /// Ends the setup: the run goes if `ready` and every one of `threads` arrived (the
    /// caller's last [`Handoff::all_arrived`]); otherwise it fails, and if not every thread
    /// arrived, arrivals close and the run waits only for those that did.
    pub fn publish(&self, setup: Setup<'_>, threads: u32, all_arrived: bool, ready: bool) {
        let _ = setup;
        let expect = if all_arrived {
            threads
        } else {
            self.arrived.fetch_or(CLOSED, Ordering::AcqRel) & !CLOSED
        };
        self.expect.store(expect, Ordering::Release);
        let state = if ready && all_arrived { READY } else { FAILED };
        self.state.store(state, Ordering::Release);
    }

    /// Waits, calling `idle` between looks, until ticket 0 published the run: `Some` if it
    /// is ready. Bounded as far as ticket 0's setup is.
    pub fn wait<'t>(&self, ticket: &'t Ticket, mut idle: impl FnMut()) -> Option<Published<'t>> {
        let _ = ticket;
        loop {
            match self.state.load(Ordering::Acquire) {
                READY => return Some(Published(PhantomData)),
                FAILED => return None,
                _ => idle(),
            }
        }
    }

    /// Gives `ticket` back after the thread's part (and its ticket 0's publish); the thread
    /// whose departure makes the count is the last out.
    pub fn depart(&self, ticket: Ticket) -> Option<LastOut<'_>> {
        let _ = ticket;
        let d = self.departed.fetch_add(1, Ordering::AcqRel) + 1;
        (d == self.expect.load(Ordering::Acquire)).then_some(LastOut { handoff: self })
    }

    /// Whether every thread but the caller departed (the caller still holds its ticket).
    pub fn others_departed(&self) -> bool {
        self.departed.load(Ordering::Acquire) + 1 >= self.expect.load(Ordering::Acquire)
    }
}

impl LastOut<'_> {
    /// The threads that took part in the run.
    pub fn threads(&self) -> u32 {
        self.handoff.expect.load(Ordering::Relaxed)
    }

    /// Ends the run: the next thread to arrive takes ticket 0 of the next run, and sees
    /// everything written before this call.
    pub fn reset(self) {
        let h = self.handoff;
        h.state.store(EMPTY, Ordering::Relaxed);
        h.departed.store(0, Ordering::Relaxed);
        h.expect.store(0, Ordering::Relaxed);
        h.arrived.store(0, Ordering::Release);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_run_of_three_hands_out_three_tickets_and_has_one_last_out() {
        let h = Handoff::new();
        let mut t0 = h.arrive(3).unwrap();
        let t1 = h.arrive(3).unwrap();
        let t2 = h.arrive(3).unwrap();
        assert_eq!(h.arrive(3), None, "a fourth takes no part");
        assert!(h.setup(&mut Ticket(1)).is_none(), "only ticket 0 sets up");
        let s = h.setup(&mut t0).unwrap();
        h.publish(s, 3, h.all_arrived(3), true);
        assert!(h.wait(&t1, || unreachable!()).is_some());
        assert!(h.depart(t1).is_none());
        assert!(h.depart(t0).is_none());
        assert!(h.others_departed());
        let last = h.depart(t2).expect("the third out is the last");
        assert_eq!(last.threads(), 3);
        last.reset();
        assert_eq!(
            h.arrive(3).map(|t| t.number()),
            Some(0),
            "the next run starts clean"
        );
    }

    #[test]
    fn closed_arrivals_refuse_latecomers_and_the_run_waits_for_those_that_came() {
        let h = Handoff::new();
        let mut t0 = h.arrive(3).unwrap();
        let t1 = h.arrive(3).unwrap();
        let s = h.setup(&mut t0).unwrap();
        assert!(!h.all_arrived(3));
        h.publish(s, 3, false, true);
        assert!(h.arrive(3).is_none(), "arrivals closed");
        assert!(h.wait(&t1, || unreachable!()).is_none(), "the run failed");
        assert!(h.depart(t0).is_none());
        let last = h.depart(t1).expect("two came, two departed");
        assert_eq!(last.threads(), 2);
        last.reset();
        assert!(h.arrive(3).is_some());
    }
}

#[cfg(all(test, loom))]
mod loom_handoff;
