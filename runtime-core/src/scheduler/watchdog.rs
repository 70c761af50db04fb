//! The scheduler's slow checks, every [`super::WATCHDOG_EVERY`] iterations: lanes that run
//! too long, lanes held too long for deferred room, idle cores whose status word moved, and
//! a run whose live tasks stopped finishing.
#![forbid(unsafe_code)]

use super::Scheduler;
use crate::error::{FatalCause, FatalError};
use crate::platform::Platform;

impl<P: Platform> Scheduler<'_, '_, P> {
    /// Fails the run if a core has run the same token for longer than `task_timeout_us`, if
    /// a finished lane has waited for deferred room for longer than `deferred_timeout_us`,
    /// if an idle core reported something, or if tasks were live and none finished for
    /// longer than any one may take ([`super::progress_bound_us`]).
    pub(super) fn watchdog(&mut self) {
        let now = self.p.now();
        self.watch_progress(now);
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

    /// Fails the run with [`FatalCause::NoProgress`] once tasks were live and the run's
    /// finished count stood still for longer than `progress_ticks`. Each task's own bounds
    /// (running, held, deferred) fire first; past them, nothing can finish the live tasks
    /// (their releases or ready entries were lost), and the stall report says which.
    fn watch_progress(&mut self, now: u64) {
        let finished = self.t.finished();
        let live = self.t.shared().submitted().saturating_sub(finished);
        self.progress = match self.progress {
            _ if live == 0 => None,
            Some((seen, since)) if seen == finished => {
                let idle = now.saturating_sub(since);
                if idle > self.progress_ticks {
                    let per_us = self.p.ticks_per_us().max(1);
                    let e = FatalError::new(FatalCause::NoProgress {
                        idle_us: idle / per_us,
                        live,
                    });
                    self.t.shared().status().fail(e);
                }
                Some((seen, since))
            }
            _ => Some((finished, now)),
        };
    }
}
