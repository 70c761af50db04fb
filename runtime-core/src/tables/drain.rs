//! The record drain: takes task records out of the profile ring while the run goes, so a run
//! keeps one record per task however few cells the ring has.
//!
//! The orchestrator claims records in submit order and the schedulers close them out of
//! order; the drain takes them in claim order, each once it is closed, resets its cell and
//! publishes how far it got, which frees those cells for the orchestrator's next claims (a
//! claim that finds no room waits, bounded; see [`crate::Config::submit_timeout_us`]). A
//! record that will never close (its task finished while profiling was not at `Tasks`) is
//! passed over once its task has finished, and so is a filler cell (a claim of several
//! cells that would have crossed the ring's end starts the next lap instead).
#![forbid(unsafe_code)]

use crate::observe::record::{RecordCell, TaskRecord};
use crate::region::slot::state;
use crate::sync::Ordering;
use crate::tables::Tables;

/// Positions the drain takes before it publishes its progress, so a long drain frees cells
/// as it goes without a shared store per record.
const PUBLISH_EVERY: u64 = 64;

/// Takes task records out of a running [`crate::Runtime`]'s profile ring, in submit order
/// (from [`crate::Runtime::record_drain`]). Any one thread may run it beside the
/// orchestrator and the schedulers.
///
/// ```
/// use pto_runtime_core::{Config, ProfileLevel, RegionLayout, Runtime};
///
/// let cfg = Config { profile: ProfileLevel::Tasks, ..Config::tiny() };
/// let mut region = vec![0u8; RegionLayout::new(&cfg).unwrap().size() + 64];
/// let offset = region.as_ptr().align_offset(64);
/// let rt = Runtime::init(&mut region[offset..], cfg).unwrap();
/// let mut drain = rt.record_drain().expect("the first drain, before any submit");
/// assert!(rt.record_drain().is_none(), "one drain per run");
/// // ... the run's threads go; meanwhile, and once they stopped:
/// let mut records = Vec::new();
/// drain.drain(|r| records.push(r));
/// drain.finish(|r| records.push(r));
/// assert!(records.is_empty(), "nothing was submitted");
/// ```
pub struct RecordDrain<'r> {
    t: Tables<'r>,
    cells: &'r [RecordCell],
    /// The next position to take.
    at: u64,
}

impl<'r> RecordDrain<'r> {
    /// A drain of `cells`, the ring of `t` that was just made to stream.
    pub(crate) fn new(t: Tables<'r>, cells: &'r [RecordCell]) -> Self {
        RecordDrain { t, cells, at: 0 }
    }

    /// Takes every record from the oldest not taken yet up to the first still open, handing
    /// each to `f` in submit order; frees their cells. Returns how many it took. Never waits.
    pub fn drain(&mut self, f: impl FnMut(TaskRecord)) -> usize {
        self.take(f, false)
    }

    /// Takes every record left once the run's threads have stopped: closed ones go to `f`;
    /// open ones (tasks that never finished, as in a failed run) are passed over. Returns how
    /// many it took.
    pub fn finish(&mut self, f: impl FnMut(TaskRecord)) -> usize {
        self.take(f, true)
    }

    /// Records taken so far.
    pub fn position(&self) -> u64 {
        self.at
    }

    fn take(&mut self, mut f: impl FnMut(TaskRecord), all: bool) -> usize {
        let prof = self.t.shared().prof();
        let claimed = prof.claimed();
        let cap = self.cells.len() as u64;
        let mut taken = 0;
        while self.at < claimed && cap != 0 {
            let cell = &self.cells[(self.at % cap) as usize];
            match cell.read() {
                Some(record) => {
                    f(record);
                    taken += 1;
                }
                None if all || cell.is_filler() || self.abandoned(cell) => {}
                None => break,
            }
            cell.reset();
            self.at += 1;
            if self.at.is_multiple_of(PUBLISH_EVERY) {
                prof.set_drained(self.at);
            }
        }
        prof.set_drained(self.at);
        taken
    }

    /// Whether the open record in `cell` will never close: its task has finished (at a level
    /// that keeps no record). Read after the task's state, which its closer's Release store
    /// of `written` precedes, so a record closed in time is seen closed.
    fn abandoned(&self, cell: &RecordCell) -> bool {
        let Some(id) = cell.opened_task() else {
            // Claimed, not opened yet: the orchestrator is on its way.
            return false;
        };
        let slot = self.t.slot(self.t.gslot(id));
        let tenant = slot.seq.load(Ordering::Acquire);
        let done = tenant != u64::MAX
            && (tenant > id.seq().0
                || (tenant == id.seq().0
                    && slot.state.load(Ordering::Acquire) >= state::COMPLETED));
        done && cell.read().is_none()
    }
}
