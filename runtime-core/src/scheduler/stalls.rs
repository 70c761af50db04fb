//! What a scheduler tells the platform as it stops a failed run: its running and held lanes
//! and its deferred tasks ([`crate::Stall`]).
#![forbid(unsafe_code)]

use super::Scheduler;
use super::cores::{CoreSlot, Inflight};
use crate::observe::stall::Stall;
use crate::platform::Platform;

impl<P: Platform> Scheduler<'_, '_, P> {
    /// Reports every unfinished lane on a core of this scheduler, every held lane, and every
    /// task in its deferred set to [`Platform::stalled`]. Runs once, as the scheduler stops a failed run.
    pub(super) fn report_stalls(&self) {
        let now = self.p.now();
        let per_us = self.p.ticks_per_us().max(1);
        // A lane whose result word is written has finished (a failed one is the run's
        // error): it waited for nothing.
        let finished = |c: &CoreSlot, lane: Inflight| {
            self.p
                .result(c.id, lane.token)
                .outcome(lane.token)
                .is_some()
        };
        for c in self.cores.slots() {
            let Some(run) = c.running else { continue };
            if c.held_since.is_none() && finished(c, run) {
                continue;
            }
            let stall = match c.held_since {
                Some(since) => Stall::Held {
                    task: run.task,
                    core: c.id,
                    for_us: now.saturating_sub(since) / per_us,
                },
                None => Stall::Running {
                    task: run.task,
                    core: c.id,
                    for_us: c
                        .watch
                        .filter(|(token, _)| *token == run.token)
                        .map(|(_, since)| now.saturating_sub(since) / per_us),
                },
            };
            self.p.stalled(stall);
            if let Some(next) = c.pending.filter(|&next| !finished(c, next)) {
                self.p.stalled(Stall::Behind {
                    task: next.task,
                    core: c.id,
                });
            }
        }
        for (_, unmet) in self.deferred.waiting() {
            if let Some(x) = unmet {
                self.p.stalled(Stall::Deferred {
                    task: x.task,
                    watch: x.watch,
                    expected: x.expected,
                    last: x.last,
                });
            }
        }
    }
}
