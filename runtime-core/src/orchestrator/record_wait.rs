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
    /// (bounded, see the module); fails only with the run's own error.
    #[inline(always)]
    pub(super) fn wait_for_records(&mut self, n: u16) -> Result<(), SubmitError> {
        if self.t.shared().prof().has_room(self.t.records().len(), n) {
            return Ok(());
        }
        self.wait_for_records_slow(n)
    }

    #[cold]
    #[inline(never)]
    fn wait_for_records_slow(&mut self, n: u16) -> Result<(), SubmitError> {
        let cap = self.t.records().len();
        let prof = self.t.shared().prof();
        if !ProfCtl::fits(cap, n) || self.records_stalled_at == Some(prof.drained()) {
            // The claim finds no room and counts the record(s) lost.
            return Ok(());
        }
        let waited = self.wait_up_to(|o, _| {
            let prof = o.t.shared().prof();
            Ok(prof.has_room(o.t.records().len(), n).then_some(()))
        })?;
        self.records_stalled_at = waited.is_err().then(|| prof.drained());
        Ok(())
    }
}
