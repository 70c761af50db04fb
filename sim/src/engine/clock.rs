//! Where an engine reads the time its transfers land at: the wall clock, or a virtual clock
//! that only moves when told, so that a test decides which transfers have landed (and in
//! which order: by landing time, then posting order) without racing the machine.

use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

use super::Shared;

/// The time source of an engine.
#[derive(Clone, Debug, Default)]
pub enum EngineClock {
    /// A transfer lands its latency after it was posted, in wall time (the default).
    #[default]
    Wall,
    /// A transfer lands once `clock` reads at least its posting time plus its latency: not
    /// before [`VirtualClock::advance`] moves the clock that far.
    Virtual(VirtualClock),
}

/// A clock shared by engines that moves only when [`VirtualClock::advance`] says so.
///
/// ```
/// use std::time::Duration;
/// use pto_sim::VirtualClock;
///
/// let clock = VirtualClock::new();
/// clock.advance(Duration::from_millis(5));
/// assert_eq!(clock.now(), Duration::from_millis(5));
/// ```
#[derive(Clone, Debug, Default)]
pub struct VirtualClock(Arc<Mutex<VirtualState>>);

#[derive(Default)]
struct VirtualState {
    now: Duration,
    /// Engines that read this clock, woken when it moves.
    engines: Vec<Weak<Shared>>,
}

impl std::fmt::Debug for VirtualState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VirtualState")
            .field("now", &self.now)
            .finish_non_exhaustive()
    }
}

impl VirtualClock {
    /// A clock at zero.
    pub fn new() -> Self {
        Self::default()
    }

    /// The time since the clock started.
    pub fn now(&self) -> Duration {
        self.lock().now
    }

    /// Moves the clock `by` forward and wakes every engine reading it: the transfers due by
    /// then land (in landing-time order, then posting order).
    pub fn advance(&self, by: Duration) {
        let engines: Vec<Arc<Shared>> = {
            let mut s = self.lock();
            s.now = s.now.saturating_add(by);
            s.engines.retain(|e| e.strong_count() > 0);
            s.engines.iter().filter_map(Weak::upgrade).collect()
        };
        for e in engines {
            // Taken and released so that an engine between reading the clock and waiting
            // cannot miss the wake-up.
            drop(e.lock());
            e.wake.notify_all();
        }
    }

    pub(super) fn subscribe(&self, engine: &Arc<Shared>) {
        self.lock().engines.push(Arc::downgrade(engine));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VirtualState> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// An engine's reading of its clock.
pub(super) struct Now {
    clock: EngineClock,
    start: Instant,
}

impl Now {
    pub(super) fn new(clock: EngineClock) -> Self {
        Now {
            clock,
            start: Instant::now(),
        }
    }

    /// The time since the engine started (wall) or the clock's reading (virtual).
    pub(super) fn read(&self) -> Duration {
        match &self.clock {
            EngineClock::Wall => self.start.elapsed(),
            EngineClock::Virtual(c) => c.now(),
        }
    }

    /// How long the engine may sleep before a landing due at `at` (read at `now`): `None`
    /// on a virtual clock, which wakes the engine when it moves.
    pub(super) fn sleep_until(&self, at: Duration, now: Duration) -> Option<Duration> {
        match self.clock {
            EngineClock::Wall => Some(at.saturating_sub(now)),
            EngineClock::Virtual(_) => None,
        }
    }
}
