//! Why a failed run's live tasks had not finished, kept on the device: a bounded,
//! lock-free log of [`Stall`]s that the schedulers fill as they stop
//! ([`pto_runtime_core::Platform::stalled`]) and the last thread out completes from the
//! task slots (`Runtime::stalls`), then copies into the run's report as
//! [`PtoStallEntry`]s. Past its capacity entries are counted, not kept.
#![forbid(unsafe_code)]

use pto_runtime_core::sync::{AtomicU32, AtomicU64, Ordering};
use pto_runtime_core::{Condition, CoreId, RawCondition, Stall, TaskId, Watch, WorkerClass};

/// Stall entries a device report carries.
pub const REPORT_STALLS: usize = 8;

/// Entries the log keeps: a report's worth; two under loom, so its models reach a full log.
const KEPT: usize = if cfg!(loom) { 2 } else { REPORT_STALLS };

/// One live task of a stopped run and what it waited for (the C view of a [`Stall`]).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PtoStallEntry {
    /// The task's raw id.
    pub task: u64,
    /// 1: running on `core` (`a`: for how many µs, `u64::MAX` if not timed yet); 2: behind
    /// the lane `core` runs; 3: finished on `core` but held for room in the full deferred
    /// set (`a`: µs); 4: deferred (`watch` the condition kind, `a` its word, `b` the value
    /// it must reach, `c` the last value read); 5: waiting for `a` producers (`b`, `c`: the
    /// raw ids of the first two not finished, 0 for none; with `watch` 1, of the first two
    /// finished ones, one of which never released it); 6: ready (`watch`: its worker class)
    /// but not dispatched.
    pub kind: u16,
    /// For kind 4 the watched word's kind (1, 2: 32/64-bit counter, 3: engine watermark,
    /// 4: engine queue); for kind 5, 1 when the producers named finished (else 0); for
    /// kind 6 the worker class (0 AIC, 1 AIV, 2 MIX, 3 DUMMY).
    pub watch: u16,
    /// The core, or `0xffff`.
    pub core: u32,
    /// See `kind`.
    pub a: u64,
    /// See `kind`.
    pub b: u64,
    /// See `kind`.
    pub c: u64,
}

const _: () = assert!(core::mem::size_of::<PtoStallEntry>() == 40);

impl PtoStallEntry {
    /// The entry of `s`.
    pub fn of(s: &Stall) -> Self {
        let e = PtoStallEntry {
            task: s.task().raw(),
            core: 0xffff,
            ..PtoStallEntry::default()
        };
        match *s {
            Stall::Running { core, for_us, .. } => PtoStallEntry {
                kind: 1,
                core: core.0 as u32,
                a: for_us.unwrap_or(u64::MAX),
                ..e
            },
            Stall::Behind { core, .. } => PtoStallEntry {
                kind: 2,
                core: core.0 as u32,
                ..e
            },
            Stall::Held { core, for_us, .. } => PtoStallEntry {
                kind: 3,
                core: core.0 as u32,
                a: for_us,
                ..e
            },
            Stall::Deferred {
                watch,
                expected,
                last,
                ..
            } => {
                let raw = RawCondition::encode(Condition { watch, expected });
                PtoStallEntry {
                    kind: 4,
                    watch: raw.kind as u16,
                    a: raw.word,
                    b: expected,
                    c: last,
                    ..e
                }
            }
            Stall::Producers { left, .. } => PtoStallEntry {
                kind: 5,
                a: left as u64,
                ..e
            },
            Stall::Ready { class, .. } => PtoStallEntry {
                kind: 6,
                watch: class as u16,
                ..e
            },
        }
    }

    /// The same entry, naming (for kind 5) the first two of `producers`.
    pub fn with_producers(self, mut producers: impl Iterator<Item = TaskId>) -> Self {
        if self.kind != 5 {
            return self;
        }
        let mut next = || producers.next().map_or(0, TaskId::raw);
        let b = next();
        let c = next();
        PtoStallEntry { b, c, ..self }
    }

    /// The same entry, naming (for kind 5, when it names no unfinished producer) the first
    /// two of `finished`: producers that finished, one of which never released the task
    /// (`Runtime::finished_producers_of`).
    pub fn with_finished_producers(self, finished: impl Iterator<Item = TaskId>) -> Self {
        if self.kind != 5 || self.b != 0 {
            return self;
        }
        let e = self.with_producers(finished);
        PtoStallEntry {
            watch: (e.b != 0) as u16,
            ..e
        }
    }

    /// Whether the producers the entry names finished (one of them never released the
    /// task), rather than not finished.
    pub fn producers_finished(&self) -> bool {
        self.kind == 5 && self.watch == 1
    }

    /// The producers the entry names (kind 5 only).
    pub fn producers(&self) -> impl Iterator<Item = TaskId> + '_ {
        [self.b, self.c]
            .into_iter()
            .filter(move |&p| self.kind == 5 && p != 0)
            .map(TaskId::from_raw)
    }

    /// The [`Stall`] the entry says, if it is one.
    pub fn stall(&self) -> Option<Stall> {
        let task = TaskId::from_raw(self.task);
        let core = CoreId(self.core as u16);
        Some(match self.kind {
            1 => Stall::Running {
                task,
                core,
                for_us: (self.a != u64::MAX).then_some(self.a),
            },
            2 => Stall::Behind { task, core },
            3 => Stall::Held {
                task,
                core,
                for_us: self.a,
            },
            4 => {
                let raw = RawCondition {
                    kind: self.watch as u32,
                    reserved: 0,
                    word: self.a,
                    expected: self.b,
                };
                let watch: Watch = raw.decode().ok()?.watch;
                Stall::Deferred {
                    task,
                    watch,
                    expected: self.b,
                    last: self.c,
                }
            }
            5 => Stall::Producers {
                task,
                left: self.a as u32,
            },
            6 => Stall::Ready {
                task,
                class: *WorkerClass::ALL.get(self.watch as usize)?,
            },
            _ => return None,
        })
    }
}

/// The log: up to [`REPORT_STALLS`] entries, in the order they were told, and a count of
/// every entry told.
///
/// Pushers claim an entry with one read-modify-write of the count, write its words, then
/// mark it ready (Release); a reader takes the ready entries in order (Acquire). So an entry
/// is read whole or not at all, each push lands in its own entry, and a reader that
/// synchronised with a pusher (the last thread out of a run) sees its entry.
#[derive(Debug)]
pub struct StallLog {
    told: AtomicU32,
    /// Each entry as five words: task, `kind | watch << 16 | core << 32`, a, b, c.
    words: [[AtomicU64; 5]; KEPT],
    /// Per entry: set (Release) once its words are written.
    ready: [AtomicU32; KEPT],
}

impl Default for StallLog {
    fn default() -> Self {
        Self::new()
    }
}

impl StallLog {
    /// An empty log.
    #[cfg(not(loom))]
    pub const fn new() -> Self {
        StallLog {
            told: AtomicU32::new(0),
            words: [const { [const { AtomicU64::new(0) }; 5] }; KEPT],
            ready: [const { AtomicU32::new(0) }; KEPT],
        }
    }

    /// An empty log (loom's atomics have no `const` constructor).
    #[cfg(loom)]
    pub fn new() -> Self {
        StallLog {
            told: AtomicU32::new(0),
            words: core::array::from_fn(|_| core::array::from_fn(|_| AtomicU64::new(0))),
            ready: core::array::from_fn(|_| AtomicU32::new(0)),
        }
    }

    /// Adds `s` (or only counts it, once the log is full). Never blocks.
    pub fn push(&self, s: &Stall) {
        self.push_entry(PtoStallEntry::of(s));
    }

    /// Adds `e` (or only counts it, once the log is full). Never blocks.
    pub fn push_entry(&self, e: PtoStallEntry) {
        let i = self.told.fetch_add(1, Ordering::AcqRel) as usize;
        let Some(w) = self.words.get(i) else { return };
        let meta = e.kind as u64 | (e.watch as u64) << 16 | (e.core as u64) << 32;
        for (w, v) in w.iter().zip([e.task, meta, e.a, e.b, e.c]) {
            w.store(v, Ordering::Relaxed);
        }
        self.ready[i].store(1, Ordering::Release);
    }

    /// How many entries were told (some may not be kept).
    pub fn told(&self) -> u32 {
        self.told.load(Ordering::Acquire)
    }

    /// Whether the log already holds an entry about `task`.
    pub fn mentions(&self, task: TaskId) -> bool {
        self.entries().any(|e| e.task == task.raw())
    }

    /// The entries kept, in order (those whose writer finished).
    pub fn entries(&self) -> impl Iterator<Item = PtoStallEntry> + '_ {
        (0..KEPT)
            .take_while(|&i| self.ready[i].load(Ordering::Acquire) == 1)
            .map(|i| {
                let w = &self.words[i];
                let meta = w[1].load(Ordering::Relaxed);
                PtoStallEntry {
                    task: w[0].load(Ordering::Relaxed),
                    kind: meta as u16,
                    watch: (meta >> 16) as u16,
                    core: (meta >> 32) as u32,
                    a: w[2].load(Ordering::Relaxed),
                    b: w[3].load(Ordering::Relaxed),
                    c: w[4].load(Ordering::Relaxed),
                }
            })
    }

    /// Empties the log for the next run (no thread may push meanwhile).
    pub fn clear(&self) {
        for r in &self.ready {
            r.store(0, Ordering::Relaxed);
        }
        self.told.store(0, Ordering::Release);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn every_stall_survives_the_round_trip_and_the_log_keeps_the_first() {
        let t = TaskId::from_raw(0x0001_0000_0000_0007);
        let stalls = [
            Stall::Running {
                task: t,
                core: CoreId(3),
                for_us: Some(20),
            },
            Stall::Running {
                task: t,
                core: CoreId(3),
                for_us: None,
            },
            Stall::Behind {
                task: t,
                core: CoreId(1),
            },
            Stall::Held {
                task: t,
                core: CoreId(2),
                for_us: 9,
            },
            Stall::Deferred {
                task: t,
                watch: Watch::Counter64(0x1000),
                expected: 5,
                last: 4,
            },
            Stall::Producers { task: t, left: 2 },
            Stall::Ready {
                task: t,
                class: WorkerClass::Mix,
            },
        ];
        let log = StallLog::new();
        for s in stalls.iter().chain(&stalls) {
            assert_eq!(PtoStallEntry::of(s).stall(), Some(*s));
            log.push(s);
        }
        assert_eq!(log.told(), 14);
        assert_eq!(log.entries().count(), REPORT_STALLS);
        assert_eq!(
            log.entries().next().and_then(|e| e.stall()),
            Some(stalls[0])
        );
        assert_eq!(
            log.entries().nth(7).and_then(|e| e.stall()),
            Some(stalls[0]),
            "the second round's first"
        );
        assert!(log.mentions(t));
        let p = [
            TaskId::from_raw(3),
            TaskId::from_raw(4),
            TaskId::from_raw(5),
        ];
        let e = PtoStallEntry::of(&stalls[5]).with_producers(p.into_iter());
        assert!(
            e.producers().eq(p[..2].iter().copied()),
            "the first two: {e:?}"
        );
        assert_eq!(e.stall(), Some(stalls[5]));
        assert!(!e.producers_finished());
        assert_eq!(
            e.with_finished_producers(p.into_iter()),
            e,
            "unfinished producers first"
        );
        let lost = PtoStallEntry::of(&stalls[5])
            .with_producers(core::iter::empty())
            .with_finished_producers(p[2..].iter().copied());
        assert!(lost.producers_finished(), "{lost:?}");
        assert!(lost.producers().eq(p[2..].iter().copied()), "{lost:?}");
        assert_eq!(lost.stall(), Some(stalls[5]));
        let none = PtoStallEntry::of(&stalls[0]).with_producers(p.into_iter());
        assert_eq!(
            none.producers().count(),
            0,
            "only waiting tasks name producers"
        );
        log.clear();
        assert_eq!((log.told(), log.entries().count()), (0, 0));
    }
}
