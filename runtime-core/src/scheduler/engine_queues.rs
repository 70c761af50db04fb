//! The engines' completion queues, as one scheduler sees them: drained into a per-queue
//! watermark (the highest post id reported), with the error entries kept until the task that
//! waits on them is found.
//!
//! A queue's entries arrive in post order ([`crate::Platform::engine_queue`]), so once post
//! `P`'s entry is drained every earlier post of that queue has reported: the watermark is what
//! a [`Watch::Queue`] condition reads, and the deferred set's heaps release its waiters like
//! any other word's. An error entry is kept in a small list; when the waiter of its post is
//! released (at once if the task registered it already, else at its FIN) the task is
//! cancelled and the run's [`FatalKind::TransferFailed`] recorded. The list is bounded: while
//! it is full, draining stops and the engines wait (the queue pushes back; nothing is lost).
#![forbid(unsafe_code)]

use crate::condition::Watch;
use crate::error::{FatalCause, FatalError};
use crate::ids::TaskId;
use crate::observe::stats::{QueueStats, SchedCtl};
use crate::platform::Platform;
use crate::queues::completion_queue::CompletionQueue;
use crate::sync::Ordering;
use crate::tables::Tables;

use crate::queues::completion_queue::MAX_ENGINE_QUEUES;
/// Error entries kept at once, waiting for their task.
const KEPT_FAILURES: usize = 16;

/// One error entry: the engine, the post and its status.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) struct Failure {
    pub(super) engine: u32,
    pub(super) post: u64,
    pub(super) status: u32,
}

impl Failure {
    /// The run's error for this failure, naming `task` if known.
    pub(super) fn error(self, task: Option<TaskId>) -> FatalError {
        let e = FatalError::new(FatalCause::TransferFailed {
            watch: Watch::Queue(self.engine),
            post: self.post,
            status: self.status,
        });
        match task {
            Some(t) => e.with_task(t),
            None => e,
        }
    }
}

/// A scheduler's engine queues.
pub(super) struct EngineQueues<'p> {
    queues: [Option<CompletionQueue<'p>>; MAX_ENGINE_QUEUES],
    /// Per engine, the highest post id drained (0: none yet).
    pub(super) seen: [u64; MAX_ENGINE_QUEUES],
    /// Whether any engine has a queue for this scheduler.
    present: bool,
    /// Error entries drained whose waiter has not been released yet.
    failures: heapless::Vec<Failure, KEPT_FAILURES>,
}

impl<'p> EngineQueues<'p> {
    /// The queues the platform gives scheduler `index`.
    pub(super) fn new<P: Platform>(p: &'p P, index: u8) -> Self {
        let queues = core::array::from_fn(|e| p.engine_queue(index, e as u32));
        EngineQueues {
            present: queues.iter().any(Option::is_some),
            queues,
            seen: [0; MAX_ENGINE_QUEUES],
            failures: heapless::Vec::new(),
        }
    }

    /// Whether there is anything to drain.
    #[inline]
    pub(super) fn present(&self) -> bool {
        self.present
    }

    /// What a [`Watch::Queue`] condition on `engine` reads: its watermark, or `None` if the
    /// engine has no queue for this scheduler.
    #[inline]
    pub(super) fn value(&self, engine: u32) -> Option<u64> {
        let e = engine as usize;
        self.queues.get(e)?.as_ref()?;
        Some(self.seen[e])
    }

    /// Drains every queue (at most a queue's capacity each, and only while the failure list
    /// has room). Counts drains in `stats` if given, and error entries in `ctl`. Returns
    /// whether anything was drained.
    pub(super) fn drain(&mut self, ctl: &SchedCtl, stats: Option<&QueueStats>) -> bool {
        let mut any = false;
        for (e, q) in self.queues.iter().enumerate() {
            let Some(q) = q else { continue };
            let depth = if stats.is_some() { q.len() } else { 0 };
            let mut batch = 0u64;
            for _ in 0..q.capacity() {
                if self.failures.is_full() {
                    break;
                }
                let Some(c) = q.pop() else { break };
                batch += 1;
                self.seen[e] = self.seen[e].max(c.id);
                if c.status != crate::transfer_status::OK {
                    SchedCtl::bump(&ctl.transfer_failures, 1);
                    // Room checked above.
                    let _ = self.failures.push(Failure {
                        engine: e as u32,
                        post: c.id,
                        status: c.status,
                    });
                }
            }
            if let Some(s) = stats {
                s.drained(depth, batch);
            }
            any |= batch > 0;
        }
        any
    }

    /// Takes the error entry of `post` on `engine`, if it failed.
    #[inline]
    pub(super) fn take_failure(&mut self, engine: u32, post: u64) -> Option<Failure> {
        if self.failures.is_empty() {
            return None;
        }
        let i = self
            .failures
            .iter()
            .position(|f| f.engine == engine && f.post == post)?;
        Some(self.failures.swap_remove(i))
    }

    /// An error entry no task claimed (none waited for its post), if any.
    pub(super) fn unclaimed(&self) -> Option<Failure> {
        self.failures.first().copied()
    }
}

/// Cancels `task`, whose transfer `f` failed, and records the run's error (the first one
/// wins; the run goes on until every task finished).
pub(super) fn cancel(t: &Tables<'_>, task: TaskId, f: Failure) {
    t.slot(t.gslot(task)).failed.store(1, Ordering::Relaxed);
    t.shared().task_failure().fail(f.error(Some(task)));
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::observe::stats::SchedCtl;
    use crate::queues::completion_queue::{Completion, CompletionCell, CompletionEnds};
    use crate::testing::owned::NoCores;
    use std::vec::Vec;

    #[test]
    fn drains_into_watermarks_and_keeps_error_entries_until_claimed() {
        let cells: Vec<CompletionCell> = (0..32).map(CompletionCell::new).collect();
        let ends = CompletionEnds::new();
        let q = CompletionQueue::new(&cells, &ends);
        let mut eq = EngineQueues::new(&NoCores, 0);
        assert!(!eq.present() && eq.value(0).is_none());
        eq.queues[1] = Some(q);
        eq.present = true;
        let ctl = SchedCtl::new();
        for post in 1..=20u64 {
            let status = if post == 7 {
                crate::transfer_status::LOST
            } else {
                0
            };
            q.push(Completion {
                source: 1,
                status,
                id: post,
                time: 0,
            })
            .unwrap();
        }
        assert!(eq.drain(&ctl, Some(&ctl.engine_queues)));
        assert_eq!(eq.value(1), Some(20));
        assert_eq!(eq.value(0), None, "engine 0 has no queue");
        assert_eq!(ctl.transfer_failures.load(Ordering::Relaxed), 1);
        assert_eq!(ctl.engine_queues.read().high_water, 20);
        assert_eq!(eq.take_failure(1, 6), None);
        let f = eq.unclaimed().expect("kept");
        assert_eq!(eq.take_failure(1, 7), Some(f));
        assert_eq!(
            f.error(None).kind(),
            crate::error::FatalKind::TransferFailed
        );
        assert_eq!((f.post, f.status), (7, crate::transfer_status::LOST));
        assert_eq!(eq.unclaimed(), None);
        assert!(!eq.drain(&ctl, None), "nothing left");
    }

    #[test]
    fn a_full_failure_list_stops_draining_and_loses_nothing() {
        let cells: Vec<CompletionCell> = (0..64).map(CompletionCell::new).collect();
        let ends = CompletionEnds::new();
        let q = CompletionQueue::new(&cells, &ends);
        let mut eq = EngineQueues::new(&NoCores, 0);
        eq.queues[0] = Some(q);
        eq.present = true;
        let ctl = SchedCtl::new();
        let n = KEPT_FAILURES as u64 + 4;
        for post in 1..=n {
            q.push(Completion {
                source: 0,
                status: 1,
                id: post,
                time: 0,
            })
            .unwrap();
        }
        eq.drain(&ctl, None);
        assert_eq!(eq.value(0), Some(KEPT_FAILURES as u64));
        for post in 1..=KEPT_FAILURES as u64 {
            assert!(eq.take_failure(0, post).is_some());
        }
        eq.drain(&ctl, None);
        assert_eq!(eq.value(0), Some(n), "the rest drained once there was room");
        assert_eq!(ctl.transfer_failures.load(Ordering::Relaxed), n);
    }
}
