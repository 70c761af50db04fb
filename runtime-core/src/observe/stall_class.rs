//! One class for a stalled run, read from its stall entries: which kind of stall it was,
//! and the entry that shows it (the task, its core, the word it waited on). The simulator
//! and the AICPU SO's report classify alike, so a hang reads the same on both backends.
#![forbid(unsafe_code)]

use core::fmt;

use super::stall::Stall;

/// The kinds of stall, most telling first: when several show, the run is classed by the
/// first (a hung core also leaves its consumers waiting for producers).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum StallKind {
    /// A core held a task's lane without reporting FIN (a hung or very slow kernel).
    RunningStalled,
    /// A task's kernels finished, but a condition it waited on (a transfer, a notification)
    /// never landed, or it waited for room in the full deferred set.
    Deferred,
    /// Work was ready, but nothing was running: the cores idled beside it.
    ReadyButIdle,
    /// Nothing ran, nothing was ready: tasks waited on producers that could not finish.
    DependencyDeadlock,
    /// No task was live, but the orchestrator had not closed: the run waited for submits
    /// that never came.
    OrchestratorStarved,
}

impl StallKind {
    /// The class's name, as the report and JSON spell it: `running-stalled`, `deferred`,
    /// `ready-but-idle`, `dependency-deadlock`, `orchestrator-starved`.
    pub const fn name(self) -> &'static str {
        match self {
            StallKind::RunningStalled => "running-stalled",
            StallKind::Deferred => "deferred",
            StallKind::ReadyButIdle => "ready-but-idle",
            StallKind::DependencyDeadlock => "dependency-deadlock",
            StallKind::OrchestratorStarved => "orchestrator-starved",
        }
    }

    /// The kind an entry shows.
    const fn of(s: &Stall) -> Self {
        match s {
            Stall::Running { .. } | Stall::Behind { .. } => StallKind::RunningStalled,
            Stall::Held { .. } | Stall::Deferred { .. } => StallKind::Deferred,
            Stall::Ready { .. } => StallKind::ReadyButIdle,
            Stall::Producers { .. } => StallKind::DependencyDeadlock,
        }
    }
}

/// A stalled run's class: its kind, and the entry that shows it (`None` only for
/// [`StallKind::OrchestratorStarved`], when no task was live).
///
/// ```
/// use pto_runtime_core::{CoreId, Stall, StallClass, StallKind, TaskId};
///
/// let hung = Stall::Running { task: TaskId::from_raw(1), core: CoreId(4), for_us: Some(9) };
/// let waiting = Stall::Producers { task: TaskId::from_raw(2), left: 1 };
/// let class = StallClass::of(&[waiting, hung], false).unwrap();
/// assert_eq!(class.kind, StallKind::RunningStalled);
/// assert_eq!(class.entry, Some(hung));
/// assert!(StallClass::of(&[], false).is_none(), "nothing stalled");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StallClass {
    /// What kind of stall.
    pub kind: StallKind,
    /// The entry that shows it: for a running stall the lane held longest, else the first
    /// entry of its kind.
    pub entry: Option<Stall>,
}

impl StallClass {
    /// Classes a stopped run from its stall entries (in any order) and whether its
    /// orchestrator was still open; `None` when nothing stalled (no entry, orchestrator
    /// closed).
    pub fn of(stalls: &[Stall], orchestrator_open: bool) -> Option<Self> {
        Self::of_iter(stalls.iter().copied(), orchestrator_open)
    }

    /// [`StallClass::of`] over entries as they come (a report's, say).
    pub fn of_iter(
        stalls: impl IntoIterator<Item = Stall>,
        orchestrator_open: bool,
    ) -> Option<Self> {
        let mut best: Option<Stall> = None;
        for s in stalls {
            best = Some(match best {
                None => s,
                Some(b) if StallKind::of(&s) < StallKind::of(&b) => s,
                Some(b) if StallKind::of(&s) == StallKind::of(&b) && held_longer(&s, &b) => s,
                Some(b) => b,
            });
        }
        match best {
            Some(s) => Some(StallClass {
                kind: StallKind::of(&s),
                entry: Some(s),
            }),
            None if orchestrator_open => Some(StallClass {
                kind: StallKind::OrchestratorStarved,
                entry: None,
            }),
            None => None,
        }
    }
}

/// Whether `a` is a running lane timed longer than `b` (a lane the watchdog timed beats one
/// it had not).
fn held_longer(a: &Stall, b: &Stall) -> bool {
    match (a, b) {
        (Stall::Running { for_us: x, .. }, Stall::Running { for_us: y, .. }) => x > y,
        (Stall::Running { .. }, Stall::Behind { .. }) => true,
        _ => false,
    }
}

impl fmt::Display for StallKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for StallClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.entry {
            Some(s) => write!(f, "{}: {s}", self.kind),
            None => write!(
                f,
                "{}: no task was live, and the orchestrator had not closed its submissions",
                self.kind
            ),
        }
    }
}

/// JSON: `{"class": "running-stalled", "task": "0:3@1", "core": 4, "stall": "..."}`, the
/// task and core when the entry names them.
#[cfg(feature = "serde")]
impl serde::Serialize for StallClass {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let core = match self.entry {
            Some(
                Stall::Running { core, .. } | Stall::Behind { core, .. } | Stall::Held { core, .. },
            ) => Some(core.0),
            _ => None,
        };
        let mut m = s.serialize_struct("StallClass", 4)?;
        m.serialize_field("class", self.kind.name())?;
        m.serialize_field("task", &self.entry.map(|e| Shown(e.task())))?;
        m.serialize_field("core", &core)?;
        m.serialize_field("stall", &Shown(*self))?;
        m.end()
    }
}

/// A value serialized as its `Display` text.
#[cfg(feature = "serde")]
struct Shown<T>(T);

#[cfg(feature = "serde")]
impl<T: fmt::Display> serde::Serialize for Shown<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&self.0)
    }
}

#[cfg(all(test, not(loom)))]
#[path = "stall_class_tests.rs"]
mod tests;
