//! The scheduler's slow checks, every [`super::WATCHDOG_EVERY`] iterations: lanes that run
//! too long, lanes held too long for deferred room, and idle cores whose status word moved.
#![forbid(unsafe_code)]

use super::Scheduler;
use crate::error::{FatalCause, FatalError};
use crate::platform::Platform;

impl<P: Platform> Scheduler<'_, '_, P> {
    /// Fails the run if a core has run the same token for longer than `task_timeout_us`, if
    /// a finished lane has waited for deferred room for longer than `deferred_timeout_us`,
    /// or if an idle core reported something.
    pub(super) fn watchdog(&mut self) {
        let now = self.p.now();
        let per_us = self.p.ticks_per_us().max(1);
        for i in self.cores.each() {
            let c = self.cores.core_mut(i);
            let Some(run) = c.running else {
                let status = self.p.core_status(c.id);
                if status != c.seen {
                    let e = FatalError::new(FatalCause::CoreProtocol {
                        seen: status.token().bits(),
                        newest: c.seen.token().bits(),
                    })
                    .with_core(c.id);
                    self.t.shared().status().fail(e);
                }
                continue;
            };
            if let Some(since) = c.held_since {
                // A lane waiting for room has finished: it is not timed as running.
                c.watch = None;
                let waited = now.saturating_sub(since);
                if waited > self.deferred_timeout_ticks {
                    let e = self.deferred_full(i, waited);
                    self.t.shared().status().fail(e);
                }
                continue;
            }
            match c.watch {
                Some((token, since)) if token == run.token => {
                    let waited = now.saturating_sub(since);
                    if waited > self.timeout_ticks {
                        let e = FatalError::new(FatalCause::TaskTimeout {
                            waited_us: waited / per_us,
                        })
                        .with_task(run.task)
                        .with_core(c.id);
                        self.t.shared().status().fail(e);
                    }
                }
                _ => c.watch = Some((run.token, now)),
            }
        }
    }
}
