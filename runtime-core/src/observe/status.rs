//! The run status: the first fatal error wins, and every thread sees it.
#![forbid(unsafe_code)]

use crate::condition::Watch;
use crate::error::{FatalCause, FatalError, FatalKind};
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
        let p = Packed::of(err.cause);
        self.detail.store(p.detail, Ordering::Relaxed);
        self.detail2.store(p.detail2, Ordering::Relaxed);
        let (kind, value) = p.watch.map_or((0, 0), Watch::encode);
        self.watch_kind.store(kind as u32, Ordering::Relaxed);
        self.watch.store(value, Ordering::Relaxed);
        self.word
            .store(CLAIMED | PUBLISHED | p.code, Ordering::Release);
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
        let packed = Packed {
            code: w & CODE,
            detail: self.detail.load(Ordering::Relaxed),
            detail2: self.detail2.load(Ordering::Relaxed),
            watch: Watch::decode(
                self.watch_kind.load(Ordering::Relaxed) as u8,
                self.watch.load(Ordering::Relaxed),
            ),
        };
        Some(FatalError {
            cause: packed.cause(),
            task: (task != NO_TASK).then(|| TaskId::from_raw(task)),
            core: (core != NO_CORE).then_some(CoreId(core as u16)),
        })
    }
}

/// The low bits of the status word: the cause's code, and a variant bit for causes that
/// share one.
const CODE: u32 = 0x1ff;
/// Set beside [`FatalKind::BadCondition`] for [`FatalCause::UnknownCondition`].
const VARIANT: u32 = 0x100;

/// A cause flattened into the record's words; `cause` is its exact inverse.
pub(crate) struct Packed {
    /// The kind's code, with [`VARIANT`] for a second cause of one kind.
    pub(crate) code: u32,
    /// First detail word.
    pub(crate) detail: u64,
    /// Second detail word.
    pub(crate) detail2: u64,
    /// The word involved, if any.
    pub(crate) watch: Option<Watch>,
}

impl Packed {
    pub(crate) fn of(cause: FatalCause) -> Self {
        let (detail, detail2, watch) = match cause {
            FatalCause::TaskTimeout { waited_us } => (waited_us, 0, None),
            FatalCause::CoreProtocol { seen, newest } => (seen as u64, newest as u64, None),
            FatalCause::KernelFailed { code } => (code as u64, 0, None),
            FatalCause::ReadyQueueOverflow { class } => (class as u64, 0, None),
            FatalCause::Aborted { code } => (code, 0, None),
            FatalCause::DeferredTimeout {
                watch,
                expected,
                last,
            } => (expected, last, Some(watch)),
            FatalCause::TooManyConditions { registered, limit } => {
                (registered as u64, limit as u64, None)
            }
            FatalCause::BadCondition { watch } => (0, 0, watch),
            FatalCause::UnknownCondition { kind } => (kind as u64, 0, None),
            FatalCause::MissingResult { token, named } => (token as u64, named as u64, None),
            FatalCause::DeferredFull {
                capacity,
                waited_us,
            } => (capacity as u64, waited_us, None),
            FatalCause::CorruptSlot { class } => (class as u64, 0, None),
            FatalCause::StrayCompletion { source, id } => (source as u64, id, None),
            FatalCause::BadPredicate { addr, width } => (addr, width as u64, None),
            FatalCause::NoProgress { idle_us, live } => (idle_us, live, None),
            FatalCause::TransferFailed {
                watch,
                post,
                status,
            } => (post, status as u64, Some(watch)),
        };
        let variant = match cause {
            FatalCause::UnknownCondition { .. } => VARIANT,
            _ => 0,
        };
        Packed {
            code: cause.kind() as u32 | variant,
            detail,
            detail2,
            watch,
        }
    }

    /// The cause these words hold. Fields narrower than a word were widened by
    /// [`Packed::of`], so the casts below only undo that.
    pub(crate) fn cause(&self) -> FatalCause {
        let (d, d2) = (self.detail, self.detail2);
        let kind = FatalKind::from_code(self.code & 0xff);
        match kind {
            FatalKind::TaskTimeout => FatalCause::TaskTimeout { waited_us: d },
            FatalKind::CoreProtocol => FatalCause::CoreProtocol {
                seen: d as u32,
                newest: d2 as u32,
            },
            FatalKind::KernelFailed => FatalCause::KernelFailed { code: d as u32 },
            FatalKind::ReadyQueueOverflow => FatalCause::ReadyQueueOverflow { class: d as u8 },
            FatalKind::Aborted => FatalCause::Aborted { code: d },
            FatalKind::DeferredTimeout => match self.watch {
                Some(watch) => FatalCause::DeferredTimeout {
                    watch,
                    expected: d,
                    last: d2,
                },
                // `of` always records the word of a timeout; a record without one was torn
                // by something other than this code, which the condition error says.
                None => FatalCause::BadCondition { watch: None },
            },
            FatalKind::TooManyConditions => FatalCause::TooManyConditions {
                registered: d as u32,
                limit: d2 as u32,
            },
            FatalKind::BadCondition if self.code & VARIANT != 0 => {
                FatalCause::UnknownCondition { kind: d as u32 }
            }
            FatalKind::BadCondition => FatalCause::BadCondition { watch: self.watch },
            FatalKind::MissingResult => FatalCause::MissingResult {
                token: d as u32,
                named: d2 as u32,
            },
            FatalKind::DeferredFull => FatalCause::DeferredFull {
                capacity: d as u32,
                waited_us: d2,
            },
            FatalKind::CorruptSlot => FatalCause::CorruptSlot { class: d as u8 },
            FatalKind::TransferFailed => match self.watch {
                Some(watch) => FatalCause::TransferFailed {
                    watch,
                    post: d,
                    status: d2 as u32,
                },
                None => FatalCause::BadCondition { watch: None },
            },
            FatalKind::StrayCompletion => FatalCause::StrayCompletion {
                source: d as u32,
                id: d2,
            },
            FatalKind::BadPredicate => FatalCause::BadPredicate {
                addr: d,
                width: d2 as u8,
            },
            FatalKind::NoProgress => FatalCause::NoProgress {
                idle_us: d,
                live: d2,
            },
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn first_error_wins() {
        let s = RunStatus::new();
        assert!(!s.failed() && s.get().is_none());
        let first = FatalError::new(FatalCause::DeferredTimeout {
            watch: Watch::Counter32(0x40),
            expected: 5,
            last: 3,
        })
        .with_core(CoreId(3));
        assert!(s.fail(first));
        assert!(!s.fail(FatalError::new(FatalCause::Aborted { code: 1 })));
        assert!(s.failed());
        assert_eq!(s.get(), Some(first));
    }

    /// Every cause survives the record: the packed form is private, the enum is the API.
    #[test]
    fn every_cause_round_trips() {
        let causes = [
            FatalCause::TaskTimeout { waited_us: 7 },
            FatalCause::CoreProtocol {
                seen: 9,
                newest: u32::MAX >> 1,
            },
            FatalCause::KernelFailed { code: u32::MAX },
            FatalCause::ReadyQueueOverflow { class: 2 },
            FatalCause::Aborted { code: u64::MAX },
            FatalCause::DeferredTimeout {
                watch: Watch::Engine(3),
                expected: 10,
                last: 4,
            },
            FatalCause::TooManyConditions {
                registered: 65,
                limit: 64,
            },
            FatalCause::BadCondition { watch: None },
            FatalCause::BadCondition {
                watch: Some(Watch::Counter64(0x80)),
            },
            FatalCause::UnknownCondition { kind: 77 },
            FatalCause::MissingResult { token: 5, named: 3 },
            FatalCause::DeferredFull {
                capacity: 8,
                waited_us: 1_000,
            },
            FatalCause::CorruptSlot { class: 200 },
            FatalCause::StrayCompletion {
                source: 99,
                id: 1 << 40,
            },
            FatalCause::BadPredicate {
                addr: 0x1000,
                width: 4,
            },
            FatalCause::NoProgress {
                idle_us: 1 << 33,
                live: u64::MAX,
            },
            FatalCause::TransferFailed {
                watch: Watch::Queue(2),
                post: 17,
                status: 3,
            },
        ];
        for cause in causes {
            let s = RunStatus::new();
            let e = FatalError::new(cause).with_task(TaskId::from_raw(42));
            assert!(s.fail(e));
            assert_eq!(s.get(), Some(e), "{cause:?}");
        }
    }
}
