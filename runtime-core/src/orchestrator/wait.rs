//! The orchestrator's one way of waiting: spin on a condition, bounded by
//! `submit_timeout_us`, checking the run status and the slower checks as it goes.
#![forbid(unsafe_code)]

use super::Orchestrator;
use crate::error::SubmitError;
use crate::platform::Platform;

/// Tries between two rounds of slow checks (deadlock, the clock).
const SLOW_EVERY: u32 = 64;

impl<P: Platform> Orchestrator<'_, '_, P> {
    /// Calls `attempt` until it gives a value or an error: its `bool` argument says whether
    /// this try should also run the slow checks (the first try and every 64th). Fails with
    /// the run's error once the run failed, and with `timeout(µs waited)` once
    /// `submit_timeout_us` has passed.
    pub(super) fn wait_bounded<T>(
        &self,
        attempt: impl FnMut(&Self, bool) -> Result<Option<T>, SubmitError>,
        timeout: impl FnOnce(u64) -> SubmitError,
    ) -> Result<T, SubmitError> {
        self.wait_up_to(attempt)?.map_err(timeout)
    }

    /// [`Orchestrator::wait_bounded`] for a caller that goes on past the bound: `Ok(Err(µs
    /// waited))` once `submit_timeout_us` has passed.
    pub(super) fn wait_up_to<T>(
        &self,
        mut attempt: impl FnMut(&Self, bool) -> Result<Option<T>, SubmitError>,
    ) -> Result<Result<T, u64>, SubmitError> {
        let mut start = None;
        let mut tries = 0u32;
        loop {
            let slow = tries.is_multiple_of(SLOW_EVERY);
            if let Some(v) = attempt(self, slow)? {
                return Ok(Ok(v));
            }
            self.check_running()?;
            if slow {
                let now = self.p.now();
                let waited = now.saturating_sub(*start.get_or_insert(now));
                if waited > self.timeout_ticks {
                    return Ok(Err(waited / self.p.ticks_per_us().max(1)));
                }
            }
            tries = tries.wrapping_add(1);
            self.p.spin_hint(tries.max(1));
        }
    }
}
