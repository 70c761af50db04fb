//! What the access check found: pairs of tasks that touch the same bytes with no declared
//! order between them (races), and accesses outside every tensor a task declared.

use pto_runtime_core::{KernelId, TaskId};

/// Most races and undeclared accesses a report lists (it counts all of them).
pub const LISTED: usize = 16;

/// A task as a report names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskName {
    /// The task.
    pub id: TaskId,
    /// Its kernel.
    pub kernel: KernelId,
    /// The kernel's registered name.
    pub name: Option<String>,
}

impl std::fmt::Display for TaskName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.name {
            Some(n) => write!(f, "{} (kernel `{n}`, id {})", self.id, self.kernel.0),
            None => write!(f, "{} (kernel {})", self.id, self.kernel.0),
        }
    }
}

/// Two tasks that touch the same bytes, at least one writing, with no dependency declared
/// between them: which of them runs first depends on the run's timing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Race {
    /// The task submitted first.
    pub first: TaskName,
    /// Whether it writes the bytes (else it reads them).
    pub first_writes: bool,
    /// The task submitted later.
    pub second: TaskName,
    /// Whether it writes the bytes.
    pub second_writes: bool,
    /// The first bytes they share, `[lo, hi)`.
    pub bytes: (u64, u64),
}

fn verb(writes: bool) -> &'static str {
    if writes { "writes" } else { "reads" }
}

impl std::fmt::Display for Race {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {} bytes {:#x}..{:#x} that {} {}, and no dependency orders the two: declare one \
             (a tensor argument of the same buffer on both, or the first task's id in the \
             second's deps)",
            self.first,
            verb(self.first_writes),
            self.bytes.0,
            self.bytes.1,
            self.second,
            verb(self.second_writes),
        )
    }
}

/// A task that touched bytes outside every tensor it declared (for a write: outside every
/// tensor it declared written).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Undeclared {
    /// The task.
    pub task: TaskName,
    /// Whether it wrote them.
    pub write: bool,
    /// The first such bytes, `[lo, hi)`.
    pub bytes: (u64, u64),
    /// How many ranges of the task were outside.
    pub ranges: usize,
}

impl std::fmt::Display for Undeclared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let declared = if self.write {
            "every tensor it declared written"
        } else {
            "every tensor it declared"
        };
        write!(
            f,
            "{} {} bytes {:#x}..{:#x}, outside {declared}",
            self.task,
            verb(self.write),
            self.bytes.0,
            self.bytes.1
        )?;
        if self.ranges > 1 {
            write!(f, " ({} such ranges)", self.ranges)?;
        }
        Ok(())
    }
}

/// What checking a run's accesses found ([`crate::SimOptions::check_accesses`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AccessReport {
    /// Tasks checked.
    pub tasks: usize,
    /// Tasks whose kernels the simulator cannot watch (C kernels: they reach memory through
    /// raw pointers), checked by the tiles they declared instead.
    pub opaque: usize,
    /// The first races (at most 16), in address order.
    pub races: Vec<Race>,
    /// Pairs of tasks that race, in all.
    pub race_count: usize,
    /// The first tasks with undeclared accesses (at most 16).
    pub undeclared: Vec<Undeclared>,
    /// Tasks with undeclared accesses, in all.
    pub undeclared_count: usize,
}

impl AccessReport {
    /// Whether no two tasks race.
    pub fn race_free(&self) -> bool {
        self.race_count == 0
    }
}

impl std::fmt::Display for AccessReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.races.first() {
            Some(r) => write!(f, "{r}")?,
            None => write!(f, "no two of {} tasks race", self.tasks)?,
        }
        if self.race_count > 1 {
            write!(f, "\n{} more pairs of tasks race:", self.race_count - 1)?;
            for r in self.races.iter().skip(1) {
                write!(f, "\n  - {r}")?;
            }
            if self.race_count > self.races.len() {
                write!(f, "\n  - ...")?;
            }
        }
        if self.undeclared_count > 0 {
            write!(
                f,
                "\n{} tasks touched memory outside the tensors they declared:",
                self.undeclared_count
            )?;
            for u in &self.undeclared {
                write!(f, "\n  - {u}")?;
            }
            if self.undeclared_count > self.undeclared.len() {
                write!(f, "\n  - ...")?;
            }
        }
        Ok(())
    }
}
