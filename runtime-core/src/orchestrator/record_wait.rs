//! A submit at `Tasks` whose profile ring streams to a drain waits for a free cell before it
//! claims its record(s): the drain frees cells as it takes closed records. Past the bound
//! (`submit_timeout_us`) the submit goes on and its record is lost, counted in the run
//! report; later submits lose theirs at once until the drain moves again, so a drain that
//! stopped costs the run one bound, not one per task.
#![forbid(unsafe_code)]

use super::Orchestrator;
use crate::error::SubmitError;
use crate::observe::profile::ProfCtl;
use crate::platform::Platform;

impl<P: Platform> Orchestrator<'_, '_, P> {
    /// Waits until the profile ring has `n` cells free for this task's records, or gives up
    /// (bounded, see the module; at once if the run has failed). The claim that follows
    /// counts the record(s) lost if there is still no room.
    #[inline(always)]
    pub(super) fn wait_for_records(&mut self, n: u16) {
        if !self.t.shared().prof().make_room(self.t.records(), n) {
            self.wait_for_records_slow(n);
        }
    }

    #[cold]
    #[inline(never)]
    fn wait_for_records_slow(&mut self, n: u16) {
        let cap = self.t.records().len();
        let prof = self.t.shared().prof();
        if !ProfCtl::fits(cap, n) || self.records_stalled_at == Some(prof.drained()) {
            // The claim finds no room and counts the record(s) lost.
            return;
        }
        let waited = self.wait_up_to(|o, _| {
            let prof = o.t.shared().prof();
            Ok::<_, SubmitError>(prof.make_room(o.t.records(), n).then_some(()))
        });
        // Past the bound: until the drain moves, later submits do not wait again. A failed
        // run (the wait's error) ends the wait; this submit goes on, the next reports it.
        self.records_stalled_at = match waited {
            Ok(Ok(())) => None,
            Ok(Err(_)) => Some(prof.drained()),
            Err(_) => return,
        };
    }
}
