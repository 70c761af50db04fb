//! Whether a run's task records cover every task it finished, so a trace written from them
//! shows the whole run, and if not, what to change.

use std::fmt;

use crate::run::SimRun;

/// A run kept fewer task records than tasks finished: a trace of it misses tasks
/// ([`SimRun::missing_records`]). Its message says why and what to change.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct MissingRecords {
    /// Task records kept.
    pub kept: usize,
    /// Tasks finished.
    pub finished: u64,
    /// Tasks submitted.
    pub submitted: u64,
    /// Records that did not fit the profile ring (`Config::profile_capacity`).
    pub dropped: u64,
}

impl fmt::Display for MissingRecords {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the run kept task records for {} of the {} tasks that finished, so a trace misses \
             tasks: ",
            self.kept, self.finished
        )?;
        if self.dropped > 0 {
            write!(
                f,
                "{} records did not fit the profile ring; raise Config::profile_capacity to at \
                 least {} (one record per task submitted)",
                self.dropped, self.submitted
            )
        } else {
            write!(
                f,
                "profiling was not at ProfileLevel::Tasks for every task; set Config::profile \
                 to Tasks before the run"
            )
        }
    }
}

impl std::error::Error for MissingRecords {}

impl<R> SimRun<R> {
    /// `Some` when the run kept fewer task records than tasks finished, so a trace written
    /// from [`SimRun::records`] misses tasks: the profile ring was too small
    /// (`Config::profile_capacity`), or profiling was not at `Tasks` throughout. Check it
    /// when writing a trace:
    ///
    /// ```
    /// use pto_runtime_core::{Config, KernelId, ProfileLevel, TaskSpec, WorkerClass};
    /// use pto_sim::{KernelTable, SimOptions};
    ///
    /// let kernels = KernelTable::new().with(KernelId(0), "noop", |_| Ok(()));
    /// let cfg = Config {
    ///     profile: ProfileLevel::Tasks,
    ///     profile_capacity: 2,
    ///     ..Config::tiny()
    /// };
    /// let out = pto_sim::run(cfg, kernels, SimOptions::default(), |o| {
    ///     for _ in 0..3 {
    ///         o.submit(&TaskSpec::new(KernelId(0), WorkerClass::Aiv)).unwrap();
    ///     }
    /// })?;
    /// let missing = out.missing_records().expect("3 tasks, room for 2 records");
    /// assert!(missing.to_string().contains("raise Config::profile_capacity to at least 3"));
    /// # Ok::<(), pto_sim::SimError>(())
    /// ```
    pub fn missing_records(&self) -> Option<MissingRecords> {
        ((self.records.len() as u64) < self.report.finished).then_some(MissingRecords {
            kept: self.records.len(),
            finished: self.report.finished,
            submitted: self.report.submitted,
            dropped: self.report.profile_dropped,
        })
    }
}

#[cfg(test)]
mod tests {
    use pto_runtime_core::{Config, KernelId, ProfileLevel, TaskSpec, WorkerClass};

    use crate::{KernelTable, SimOptions, run};

    /// Runs `tasks` no-op tasks at `profile` with room for `capacity` records.
    fn run_tasks(tasks: usize, profile: ProfileLevel, capacity: u32) -> crate::SimRun<()> {
        let kernels = KernelTable::new().with(KernelId(0), "noop", |_| Ok(()));
        let cfg = Config {
            profile,
            profile_capacity: capacity,
            ..Config::tiny()
        };
        run(cfg, kernels, SimOptions::default(), |o| {
            for _ in 0..tasks {
                o.submit(&TaskSpec::new(KernelId(0), WorkerClass::Aiv))
                    .unwrap();
            }
        })
        .unwrap()
    }

    #[test]
    fn a_full_profile_ring_is_reported_with_the_capacity_to_raise() {
        let m = run_tasks(10, ProfileLevel::Tasks, 4)
            .missing_records()
            .expect("10 tasks, 4 records");
        assert_eq!((m.kept, m.finished, m.submitted, m.dropped), (4, 10, 10, 6));
        assert_eq!(
            m.to_string(),
            "the run kept task records for 4 of the 10 tasks that finished, so a trace misses \
             tasks: 6 records did not fit the profile ring; raise Config::profile_capacity to \
             at least 10 (one record per task submitted)"
        );
    }

    #[test]
    fn records_for_every_task_are_not_reported() {
        assert_eq!(
            run_tasks(10, ProfileLevel::Tasks, 10).missing_records(),
            None
        );
    }

    #[test]
    fn profiling_below_tasks_is_reported_as_such() {
        let m = run_tasks(3, ProfileLevel::Off, 16)
            .missing_records()
            .unwrap();
        assert_eq!((m.kept, m.dropped), (0, 0));
        assert!(
            m.to_string().contains("set Config::profile to Tasks"),
            "{m}"
        );
    }
}
