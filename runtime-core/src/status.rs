//! The run status: the first fatal error wins, and every thread sees it.
#![forbid(unsafe_code)]

use crate::condition::Watch;
use crate::error::{FatalError, FatalKind};
use crate::ids::{CoreId, TaskId};
use crate::sync::{AtomicU32, AtomicU64, Ordering};

const RUNNING: u32 = 0;
const CLAIMED: u32 = 1 << 31;
const PUBLISHED: u32 = 1 << 30;
const NO_CORE: u32 = u32::MAX;
const NO_TASK: u64 = u64::MAX;
/// Spins a reader waits for the winner to publish (the winner may be preempted meanwhile).
const PUBLISH_SPINS: u32 = 1 << 24;

/// The fatal-error record in the region.
#[repr(C, align(64))]
pub(crate) struct RunStatus {
    word: AtomicU32,
    core: AtomicU32,
    task: AtomicU64,
    detail: AtomicU64,
    detail2: AtomicU64,
    /// `Watch::encode` of the error's word: kind (0: none) and value.
    watch_kind: AtomicU32,
    watch: AtomicU64,
}

impl RunStatus {
    pub(crate) fn new() -> Self {
        RunStatus {
            word: AtomicU32::new(RUNNING),
            core: AtomicU32::new(NO_CORE),
            task: AtomicU64::new(NO_TASK),
            detail: AtomicU64::new(0),
            detail2: AtomicU64::new(0),
            watch_kind: AtomicU32::new(0),
            watch: AtomicU64::new(0),
        }
    }

    /// True once any thread reported a fatal error. One relaxed load: cheap enough for every
    /// loop iteration.
    #[inline]
    pub(crate) fn failed(&self) -> bool {
        self.word.load(Ordering::Relaxed) != RUNNING
    }

    /// Records `err` if no error was recorded before. Returns whether this one won.
    pub(crate) fn fail(&self, err: FatalError) -> bool {
        if self
            .word
            .compare_exchange(RUNNING, CLAIMED, Ordering::AcqRel, Ordering::Relaxed)
            .is_err()
        {
            return false;
        }
        self.core
            .store(err.core.map_or(NO_CORE, |c| c.0 as u32), Ordering::Relaxed);
        self.task
            .store(err.task.map_or(NO_TASK, |t| t.raw()), Ordering::Relaxed);
        self.detail.store(err.detail, Ordering::Relaxed);
        self.detail2.store(err.detail2, Ordering::Relaxed);
        let (kind, value) = err.watch.map_or((0, 0), Watch::encode);
        self.watch_kind.store(kind as u32, Ordering::Relaxed);
        self.watch.store(value, Ordering::Relaxed);
        self.word
            .store(CLAIMED | PUBLISHED | err.kind as u32, Ordering::Release);
        true
    }

    /// The recorded error of a run known to have failed: the winner publishes its fields a
    /// few stores after claiming, so this waits for them, boundedly.
    pub(crate) fn wait_published(&self) -> Option<FatalError> {
        for _ in 0..PUBLISH_SPINS {
            if let Some(e) = self.get() {
                return Some(e);
            }
            crate::sync::spin_loop();
        }
        self.get()
    }

    /// The recorded error, once its fields are published.
    pub(crate) fn get(&self) -> Option<FatalError> {
        let w = self.word.load(Ordering::Acquire);
        if w & PUBLISHED == 0 {
            return None;
        }
        let core = self.core.load(Ordering::Relaxed);
        let task = self.task.load(Ordering::Relaxed);
        Some(FatalError {
            kind: FatalKind::from_code(w & 0xff),
            task: (task != NO_TASK).then(|| TaskId::from_raw(task)),
            core: (core != NO_CORE).then_some(CoreId(core as u16)),
            detail: self.detail.load(Ordering::Relaxed),
            detail2: self.detail2.load(Ordering::Relaxed),
            watch: Watch::decode(
                self.watch_kind.load(Ordering::Relaxed) as u8,
                self.watch.load(Ordering::Relaxed),
            ),
        })
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn first_error_wins() {
        let s = RunStatus::new();
        assert!(!s.failed() && s.get().is_none());
        let first = FatalError::new(FatalKind::DeferredTimeout)
            .with_core(CoreId(3))
            .with_watch(Watch::Counter32(0x40))
            .with_detail(5, 3);
        assert!(s.fail(first));
        assert!(!s.fail(FatalError::new(FatalKind::CoreProtocol)));
        assert!(s.failed());
        assert_eq!(s.get(), Some(first));
    }
}
