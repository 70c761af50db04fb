//! The stall report of a failed run: every live task and what it waited for when the run
//! stopped, from the schedulers' reports and the runtime's walk of its slots.

use std::fmt;

use pto_runtime_core::{Runtime, Stall, StallClass, TaskId};

/// Lines the report prints before it sums up the rest.
const SHOWN: usize = 24;
/// Producers named per waiting task.
const PRODUCERS_SHOWN: usize = 4;

/// One live task of a failed run and what it waited for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StalledTask {
    /// What it waited for.
    pub stall: Stall,
    /// For [`Stall::Producers`]: the producers that had not finished (at most a few).
    pub producers: Vec<TaskId>,
    /// For [`Stall::Producers`], when it waited for more producers than had not finished:
    /// its finished producers, one of which never released it
    /// ([`Runtime::finished_producers_of`]; at most a few).
    pub finished_producers: Vec<TaskId>,
}

/// Every live task of a failed run and what it waited for, running tasks first, then
/// deferred ones, then those waiting for producers, then ready ones; and the run's class.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StallReport {
    /// The run's stall class (the kind of stall, and the entry that shows it); `None` when
    /// nothing stalled.
    pub class: Option<StallClass>,
    /// The tasks, in that order.
    pub tasks: Vec<StalledTask>,
}

impl StallReport {
    /// Merges what the schedulers reported as they stopped (`lanes`) with the runtime's
    /// walk. A task a scheduler reported, or the one whose failure is the run's error, is
    /// not also listed as ready. `open_at_failure`: the orchestration was still running when
    /// the run failed (its handle is closed by now, as the orchestration returned).
    pub(crate) fn gather(rt: &Runtime<'_>, mut lanes: Vec<Stall>, open_at_failure: bool) -> Self {
        lanes.sort_by_key(|s| (rank(s), s.task().raw()));
        let mut reported: std::collections::HashSet<TaskId> =
            lanes.iter().map(Stall::task).collect();
        reported.extend(rt.error().and_then(|e| e.task));
        let mut walked: Vec<Stall> = rt
            .stalls()
            .filter(|s| !(matches!(s, Stall::Ready { .. }) && reported.contains(&s.task())))
            .collect();
        walked.sort_by_key(|s| (rank(s), s.task().raw()));
        let tasks = lanes
            .into_iter()
            .chain(walked)
            .map(|stall| {
                let (producers, finished_producers) = match stall {
                    Stall::Producers { task, .. } => (
                        rt.producers_of(task).take(PRODUCERS_SHOWN).collect(),
                        rt.finished_producers_of(task)
                            .take(PRODUCERS_SHOWN)
                            .collect(),
                    ),
                    _ => (Vec::new(), Vec::new()),
                };
                StalledTask {
                    stall,
                    producers,
                    finished_producers,
                }
            })
            .collect::<Vec<StalledTask>>();
        let open = open_at_failure || !rt.submissions_closed();
        let class = StallClass::of_iter(tasks.iter().map(|t| t.stall), open);
        StallReport { class, tasks }
    }

    /// Whether no task was live and nothing stalled.
    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty() && self.class.is_none()
    }
}

fn rank(s: &Stall) -> u8 {
    match s {
        Stall::Running { .. } | Stall::Behind { .. } | Stall::Held { .. } => 0,
        Stall::Deferred { .. } => 1,
        Stall::Producers { .. } => 2,
        Stall::Ready { .. } => 3,
    }
}

impl fmt::Display for StalledTask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.stall)?;
        for (i, p) in self.producers.iter().enumerate() {
            write!(f, "{}{p}", if i == 0 { ": " } else { ", " })?;
        }
        write_finished(f, &self.finished_producers)
    }
}

/// "; p finished without releasing it" ("; one of p, q finished ..."), or nothing for no
/// producers.
fn write_finished(f: &mut fmt::Formatter<'_>, finished: &[TaskId]) -> fmt::Result {
    match finished {
        [] => Ok(()),
        [p] => write!(f, "; {p} finished without releasing it"),
        ps => {
            write!(f, "; one of ")?;
            for (i, p) in ps.iter().enumerate() {
                write!(f, "{}{p}", if i == 0 { "" } else { ", " })?;
            }
            write!(f, " finished without releasing it")
        }
    }
}

impl fmt::Display for StallReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(c) = self.class {
            writeln!(f, "stall class: {c}")?;
        }
        let n = self.tasks.len();
        write!(
            f,
            "{n} live task{} when the run stopped{}",
            if n == 1 { "" } else { "s" },
            if n == 0 { "" } else { ":" }
        )?;
        for t in self.tasks.iter().take(SHOWN) {
            write!(f, "\n  - {t}")?;
        }
        if n > SHOWN {
            write!(f, "\n  - and {} more", n - SHOWN)?;
        }
        Ok(())
    }
}
