//! The run's opened cores and the run itself, in one cell the `exec` threads share. Access
//! follows the hand-off (`pto_device_sys::handoff`), whose tokens each accessor takes:
//! ticket 0 alone writes while it holds the [`Setup`]; readers hold a [`Published`], which
//! the hand-off gives only after ticket 0 published (Release/Acquire); the [`LastOut`] takes
//! the contents once every other thread departed (the departure count, AcqRel).

use core::cell::UnsafeCell;

use pto_device_sys::chip::ChipCore;
use pto_device_sys::handoff::{LastOut, Published, Setup};

use crate::run::{Cores, Run};

struct Contents {
    cores: Cores,
    run: Option<Run>,
}

/// The run's shared state; see the module.
pub(crate) struct RunCell(UnsafeCell<Contents>);

// SAFETY: every access goes through a hand-off token (the module's doc): the one writer
// (ticket 0 with its `Setup`, or the last out) is alone with the contents, and readers start
// after the writer's Release and end before their ticket departs.
unsafe impl Sync for RunCell {}

impl RunCell {
    /// No cores, no run.
    pub(crate) const fn new() -> Self {
        RunCell(UnsafeCell::new(Contents {
            cores: heapless::Vec::new(),
            run: None,
        }))
    }

    /// Ticket 0's cores, to fill during setup (before the run is installed; after, this
    /// stops the process).
    pub(crate) fn cores_mut<'s>(&'s self, setup: &'s mut Setup<'_>) -> &'s mut Cores {
        let _ = setup;
        // SAFETY: the `Setup` is ticket 0's, borrowed exclusively: no other thread reads the
        // cell before it is published, and this borrow ends before any other access.
        let c = unsafe { &mut *self.0.get() };
        assert!(c.run.is_none(), "the cores are pinned by the run");
        &mut c.cores
    }

    /// Installs the run `make` builds over the opened cores, before ticket 0 publishes it.
    pub(crate) fn install(
        &self,
        setup: &mut Setup<'_>,
        make: impl FnOnce(&'static [ChipCore<'static>]) -> Run,
    ) {
        let _ = setup;
        // SAFETY: as for `cores_mut`. The cores stay unchanged while the run lives: the only
        // `&mut` to them (`cores_mut`) refuses once the run is in, and the last out drops
        // the run before it clears them (`finish`); so the slice lives as long as its user.
        let c = unsafe { &mut *self.0.get() };
        // SAFETY: as above: the slice outlives nothing that holds it.
        let cores: &'static [ChipCore<'static>] = unsafe { &*(c.cores.as_slice() as *const _) };
        c.run = Some(make(cores));
    }

    /// The run, for a thread that saw it published ready.
    pub(crate) fn run<'p>(&'p self, published: Published<'p>) -> Option<&'p Run> {
        let _ = published;
        // SAFETY: published (Acquire) after ticket 0 wrote it; nothing writes it again until
        // the last out, after this ticket (which `published` borrows) departed.
        unsafe { (*self.0.get()).run.as_ref() }
    }

    /// The last out's teardown: `f` gets the run (by value, dropped when `f` returns) and
    /// the cores; then the cores are cleared for the next run.
    pub(crate) fn finish(&self, last: &mut LastOut<'_>, f: impl FnOnce(Option<Run>, &Cores)) {
        let _ = last;
        // SAFETY: every other thread of the run departed (the `LastOut` says so): nothing
        // else uses the contents until the next run's ticket 0 takes its `Setup`, after
        // the last out's reset.
        let c = unsafe { &mut *self.0.get() };
        f(c.run.take(), &c.cores);
        c.cores.clear();
    }
}
