//! The profiling lap clock: each busy loop phase's time, cut without a clock read for phases
//! that found nothing to do.
#![forbid(unsafe_code)]

use super::Scheduler;
use crate::observe::profile::{Phase, ProfileLevel};
use crate::observe::stats::SchedCtl;
use crate::platform::Platform;

impl<P: Platform> Scheduler<'_, '_, P> {
    /// Cuts the lap clock after a phase that did some work, when phases are counted. A phase
    /// that found nothing reads no clock: its few nanoseconds go to the next cut (to idle, at
    /// the latest), so an idle iteration costs one clock read at any level, and a busy one a
    /// read per busy phase. Task stamps use the lap clock too: a stamp is never later than
    /// the event, and never earlier than the last cut.
    #[inline]
    pub(super) fn phase_cut(&mut self, phase: Phase, worked: bool) {
        if worked && self.by.level != ProfileLevel::Off {
            self.cut(phase);
        }
    }

    /// Cuts the lap clock: the time since the last cut goes to `phase`.
    #[inline]
    pub(super) fn cut(&mut self, phase: Phase) {
        if !self.clocked {
            return;
        }
        let now = self.p.now();
        if self.cut_at != 0 {
            self.lap[phase as usize] += now.saturating_sub(self.cut_at);
        }
        self.cut_at = now;
        self.by.now = now;
    }

    /// A core stamped an event of its own at `at` (a kernel's end), later than the lap
    /// clock: task stamps from here on take it, so a task closed or a consumer made ready
    /// and dispatched in this phase is never stamped before the kernel it waited for ended.
    /// The phases keep their own clock ([`Scheduler::cut`]).
    #[inline]
    pub(super) fn raise_clock(&mut self, at: u64) {
        self.by.now = self.by.now.max(at);
    }

    /// Adds this iteration's lap to the phase counters: by phase if it made progress, all to
    /// idle if it did not. The phases sum to the time between the first and the last cut.
    pub(super) fn flush_phases(&mut self, progress: bool) {
        let lap = core::mem::take(&mut self.lap);
        if progress {
            for (counter, ticks) in self.ctl.phases.iter().zip(lap) {
                SchedCtl::bump(counter, ticks);
            }
        } else {
            SchedCtl::bump(&self.ctl.phases[Phase::Idle as usize], lap.iter().sum());
        }
        SchedCtl::bump(&self.ctl.phase_loops, 1);
    }
}
