//! The host side of the profile ring: a thread that takes task records out while the run
//! goes ([`pto_runtime_core::RecordDrain`]), so a run keeps a record per task however small
//! `Config::profile_capacity` is.

use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::{Scope, ScopedJoinHandle};
use std::time::Duration;

use pto_runtime_core::{RecordDrain, Runtime, TaskRecord};

use crate::error::SimError;

/// How a simulated run takes its task records out of the profile ring.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordStream {
    /// A host thread drains the ring while the run goes, waking at most `period` apart (and
    /// sooner while it finds records): every task keeps its record. A submit that finds the
    /// ring full waits for the drain (bounded by `Config::submit_timeout_us`; past it the
    /// record is lost and counted in `RunReport::profile_dropped`).
    Drain {
        /// Longest sleep between two drains.
        period: Duration,
    },
    /// No drain: the ring fills once, and records past `Config::profile_capacity` are
    /// dropped (counted in `RunReport::profile_dropped`).
    Off,
}

impl RecordStream {
    /// The default drain: every 500 µs at most.
    pub const DEFAULT: RecordStream = RecordStream::Drain {
        period: Duration::from_micros(500),
    };
}

impl Default for RecordStream {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Raises a drain's stop flag when dropped, so a run that ends early (a thread that could
/// not be spawned) does not leave its drain running.
pub(crate) struct StopOnDrop<'a>(pub(crate) &'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Release);
    }
}

/// The drain thread of one run.
pub(crate) struct Drainer<'s> {
    handle: ScopedJoinHandle<'s, Vec<TaskRecord>>,
    stop: &'s AtomicBool,
}

impl<'s> Drainer<'s> {
    /// Spawns the drain of `rt`'s ring on scope `s`, if `stream` asks for one; `stop` is the
    /// flag [`Drainer::finish`] raises.
    pub(crate) fn spawn<'e>(
        s: &'s Scope<'s, 'e>,
        rt: &'s Runtime<'_>,
        stream: RecordStream,
        stop: &'s AtomicBool,
    ) -> Result<Option<Self>, SimError> {
        let RecordStream::Drain { period } = stream else {
            return Ok(None);
        };
        if rt.config().profile_capacity == 0 {
            return Ok(None);
        }
        let Some(drain) = rt.record_drain() else {
            return Ok(None);
        };
        let handle = std::thread::Builder::new()
            .name("record-drain".into())
            .spawn_scoped(s, move || run(drain, period, stop))
            .map_err(|source| SimError::Spawn {
                name: "record-drain".into(),
                source,
            })?;
        Ok(Some(Drainer { handle, stop }))
    }

    /// Once every other thread of the run has stopped: the drain takes what is left and
    /// hands over every record it took, in submit order.
    pub(crate) fn finish(self) -> Vec<TaskRecord> {
        self.stop.store(true, Ordering::Release);
        self.handle.thread().unpark();
        match self.handle.join() {
            Ok(records) => records,
            Err(payload) => std::panic::resume_unwind(payload),
        }
    }
}

/// The drain thread: drains, sleeps (shorter while it finds records), and once told to stop
/// takes the rest.
fn run(mut drain: RecordDrain<'_>, period: Duration, stop: &AtomicBool) -> Vec<TaskRecord> {
    let mut records = Vec::new();
    let mut sleep = period;
    while !stop.load(Ordering::Acquire) {
        let took = drain.drain(|r| records.push(r));
        sleep = if took > 0 {
            (sleep / 2).max(Duration::from_micros(20))
        } else {
            (sleep * 2).min(period)
        };
        std::thread::park_timeout(sleep);
    }
    drain.finish(|r| records.push(r));
    records
}
