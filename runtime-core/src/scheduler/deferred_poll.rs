//! Polling the scheduler's deferred set: finishing the tasks whose last condition now holds,
//! and failing the run on a deadline passed.
#![forbid(unsafe_code)]

use super::cores::LocalCore;
use super::engine_queues::cancel;
use super::{DEADLINES_EVERY, Scheduler, read_watch};
use crate::condition::Watch;
use crate::error::{FatalCause, FatalError};
use crate::ids::TaskId;
use crate::platform::Platform;
use crate::region::slot::Meta;
use crate::scheduler::completion::{Finisher, finish};
use crate::sync::Ordering;
use crate::tables::Tables;

impl<P: Platform> Scheduler<'_, '_, P> {
    /// Reads the watched words (at most `deferred_poll_budget` of them) and finishes the tasks
    /// whose last condition now holds; checks deadlines now and then.
    pub(super) fn poll_deferred(&mut self) -> bool {
        let t = self.t;
        let p = self.p;
        let by = self.finisher();
        let tasks_level = self.tasks_level;
        let seen = self.eq.seen;
        let eq = &mut self.eq;
        let polled = self.deferred.poll_with(
            self.t.cfg().deferred_poll_budget as usize,
            |w| match w {
                Watch::Queue(e) => seen.get(e as usize).copied(),
                w => read_watch(p, w),
            },
            |w, post, task| {
                if let Watch::Queue(e) = w
                    && let Some(f) = eq.take_failure(e, post)
                {
                    cancel(&t, task, f);
                }
            },
            |set, e| closed(&t, set.close(e), by, tasks_level),
        );
        let released = match polled {
            Ok(n) => n,
            Err((watch, task)) => {
                self.fail(
                    FatalError::new(FatalCause::BadCondition { watch: Some(watch) })
                        .with_task(task),
                );
                return true;
            }
        };
        if (self.loops as u32).is_multiple_of(DEADLINES_EVERY) {
            let now = self.p.now();
            if let Some(x) = self.deferred.expired(now) {
                // With lanes held for room, the full set itself may be what kept the word
                // from moving (its writer could not get a core): say so, naming the knob.
                let e = match self.cores.oldest_held() {
                    Some((i, since)) => self.deferred_full(i, now.saturating_sub(since)),
                    None => FatalError::new(FatalCause::DeferredTimeout {
                        watch: x.watch,
                        expected: x.expected,
                        last: x.last,
                    })
                    .with_task(x.task),
                };
                self.fail(e);
                return true;
            }
        }
        released > 0
    }

    /// The error of local core `i`'s lane, held `waited` ticks for room in a full set.
    pub(super) fn deferred_full(&self, i: LocalCore, waited: u64) -> FatalError {
        let c = self.cores.core(i);
        let mut e = FatalError::new(FatalCause::DeferredFull {
            capacity: self.t.cfg().deferred_capacity,
            waited_us: waited / self.p.ticks_per_us().max(1),
        })
        .with_core(c.id);
        if let Some(run) = c.running {
            e = e.with_task(run.task);
        }
        e
    }
}

/// The deferred entry of `task` closed (its conditions all hold): the task finishes, unless
/// the entry was one lane's of a task of several blocks whose other lanes are not done.
#[inline(never)]
fn closed(t: &Tables<'_>, task: TaskId, by: Finisher<'_>, tasks_level: bool) {
    let g = t.gslot(task);
    let slot = t.slot(g);
    if Meta::is_spmd(slot.meta.load(Ordering::Relaxed)) {
        // A block's lane's own entry: the task finishes with its last lane.
        if slot.lanes_left.fetch_sub(1, Ordering::AcqRel) != 1 {
            return;
        }
    } else {
        slot.deferred.store(0, Ordering::Relaxed);
    }
    if tasks_level && let Some(r) = t.record_of(g) {
        r.stamp_deferred(by.now);
    }
    finish(t, task, by);
}
