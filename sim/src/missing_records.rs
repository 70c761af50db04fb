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
    /// Records not kept: past the end of a profile ring with no drain
    /// (`Config::profile_capacity`), or lost when the drain fell behind.
    pub dropped: u64,
    /// Whether a drain streamed the records ([`crate::RecordStream::Drain`]).
    pub streamed: bool,
}

impl fmt::Display for MissingRecords {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the run kept task records for {} of the {} tasks that finished, so a trace misses \
             tasks: ",
            self.kept, self.finished
        )?;
        if self.dropped > 0 && self.streamed {
            write!(
                f,
                "{} records were lost: the record drain fell behind, and submits gave up \
                 waiting for a free record after Config::submit_timeout_us; drain more often \
                 (RecordStream::Drain's period) or raise Config::profile_capacity",
                self.dropped
            )
        } else if self.dropped > 0 {
            write!(
                f,
                "{} records did not fit the profile ring, which had no drain; stream them \
                 (RecordStream::Drain, the default) or raise Config::profile_capacity to at \
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
    /// from [`SimRun::records`] misses tasks: the profile ring had no drain and was too
    /// small (`Config::profile_capacity`), its drain fell behind past the bound, or profiling
    /// was not at `Tasks` throughout. Check it when writing a trace:
    ///
    /// ```
    /// use pto_runtime_core::{Config, KernelId, ProfileLevel, TaskSpec, WorkerClass};
    /// use pto_sim::{KernelTable, RecordStream, SimOptions};
    ///
    /// let kernels = KernelTable::new().with(KernelId(0), "noop", |_| Ok(()));
    /// let cfg = Config {
    ///     profile: ProfileLevel::Tasks,
    ///     profile_capacity: 2,
    ///     ..Config::tiny()
    /// };
    /// // No drain: the ring of two fills once.
    /// let opts = SimOptions { records: RecordStream::Off, ..SimOptions::default() };
    /// let out = pto_sim::run(cfg, kernels, opts, |o| {
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
            streamed: self.streamed,
        })
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use pto_runtime_core::{Config, KernelId, ProfileLevel, TaskSpec, WorkerClass};

    use crate::{KernelTable, RecordStream, SimOptions, run};

    /// Runs `tasks` no-op tasks at `profile` with room for `capacity` records, streamed as
    /// `records` says; submits wait `timeout_us` at most.
    fn run_tasks(
        tasks: usize,
        profile: ProfileLevel,
        capacity: u32,
        records: RecordStream,
        timeout_us: u64,
    ) -> crate::SimRun<()> {
        let kernels = KernelTable::new().with(KernelId(0), "noop", |_| Ok(()));
        let cfg = Config {
            profile,
            profile_capacity: capacity,
            submit_timeout_us: timeout_us,
            ..Config::tiny()
        };
        let opts = SimOptions {
            records,
            ..SimOptions::default()
        };
        run(cfg, kernels, opts, |o| {
            for _ in 0..tasks {
                o.submit(&TaskSpec::new(KernelId(0), WorkerClass::Aiv))
                    .unwrap();
            }
        })
        .unwrap()
    }

    #[test]
    fn a_full_profile_ring_without_a_drain_is_reported_with_the_capacity_to_raise() {
        let m = run_tasks(10, ProfileLevel::Tasks, 4, RecordStream::Off, 10_000_000)
            .missing_records()
            .expect("10 tasks, 4 records");
        assert_eq!((m.kept, m.finished, m.submitted, m.dropped), (4, 10, 10, 6));
        assert!(!m.streamed);
        assert_eq!(
            m.to_string(),
            "the run kept task records for 4 of the 10 tasks that finished, so a trace misses \
             tasks: 6 records did not fit the profile ring, which had no drain; stream them \
             (RecordStream::Drain, the default) or raise Config::profile_capacity to at least \
             10 (one record per task submitted)"
        );
    }

    #[test]
    fn a_drained_ring_of_four_keeps_a_record_per_task_of_two_thousand() {
        let out = run_tasks(
            2000,
            ProfileLevel::Tasks,
            4,
            RecordStream::DEFAULT,
            10_000_000,
        );
        assert_eq!(out.missing_records(), None);
        assert_eq!(out.records.len(), 2000);
        assert_eq!(out.report.profile_dropped, 0);
        assert!(out.streamed);
        assert!(
            out.records
                .iter()
                .all(|r| r.core.is_some() && r.start > 0 && r.end >= r.start),
            "whole records, kernel times too: {:?}",
            &out.records[..4]
        );
        let ids: Vec<u64> = out.records.iter().map(|r| r.task.seq().0).collect();
        assert!(
            ids.windows(2).all(|w| w[0] + 1 == w[1]),
            "submit order, none twice"
        );
    }

    #[test]
    fn a_stalled_drain_makes_submits_wait_their_bound_then_counts_what_was_lost() {
        // The drain sleeps through the run after one first look as it starts: the first
        // submit that finds the ring full waits 20 ms for a cell, gives up, and the later
        // ones lose theirs at once. A drain thread that starts late (a loaded machine) finds
        // up to 4 closed records on its first look and frees their cells, so 4 to 8 are kept.
        let stalled = RecordStream::Drain {
            period: Duration::from_secs(3600),
        };
        let started = std::time::Instant::now();
        let out = run_tasks(10, ProfileLevel::Tasks, 4, stalled, 20_000);
        assert!(
            started.elapsed() >= Duration::from_millis(20),
            "a submit waited"
        );
        let m = out.missing_records().expect("records lost");
        assert!(m.streamed && (4..=8).contains(&m.kept), "{m:?}");
        assert_eq!(
            m.kept as u64 + m.dropped,
            10,
            "each record kept or counted lost: {m:?}"
        );
        assert!(
            m.to_string().contains(&format!(
                "{} records were lost: the record drain fell behind",
                m.dropped
            )),
            "{m}"
        );
        assert_eq!(out.report.finished, 10, "every task ran");
    }

    #[test]
    fn records_for_every_task_are_not_reported() {
        assert_eq!(
            run_tasks(10, ProfileLevel::Tasks, 10, RecordStream::Off, 10_000_000).missing_records(),
            None
        );
    }

    #[test]
    fn profiling_below_tasks_is_reported_as_such() {
        let m = run_tasks(3, ProfileLevel::Off, 16, RecordStream::DEFAULT, 10_000_000)
            .missing_records()
            .unwrap();
        assert_eq!((m.kept, m.dropped), (0, 0));
        assert!(
            m.to_string().contains("set Config::profile to Tasks"),
            "{m}"
        );
    }
}
