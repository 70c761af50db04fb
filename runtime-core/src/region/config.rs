//! What a run is sized by, and the checks that reject a size the region cannot hold.
#![forbid(unsafe_code)]

use core::fmt;

use crate::condition::MAX_CONDITIONS;
use crate::ids::CoreId;
use crate::knob::{AnyOf, Knob};

/// How much the runtime measures. Read at run time; changing it needs no rebuild.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug, Default)]
#[repr(u32)]
pub enum ProfileLevel {
    /// Nothing (one relaxed load per check).
    #[default]
    Off = 0,
    /// Per-scheduler phase counters (complete, dispatch, deferred poll, idle).
    Counters = 1,
    /// Counters, plus one record per task in the profile ring.
    Tasks = 2,
}

impl ProfileLevel {
    pub(crate) fn from_code(c: u32) -> Self {
        match c {
            0 => Self::Off,
            1 => Self::Counters,
            _ => Self::Tasks,
        }
    }
}

/// Most rings a runtime can have (the ring field of a [`crate::TaskId`] is wider; the rest is
/// reserved).
pub const MAX_RINGS: u8 = 4;
/// Most AICore cores (AIC + AIV) one runtime drives.
pub const MAX_CORES: u16 = 128;
/// Most scheduler threads.
pub const MAX_SCHEDULERS: u8 = 16;
/// Upper bound for [`Config::max_deps`].
pub const MAX_DEPS: u16 = 64;
/// Upper bound for [`Config::max_args`].
pub const MAX_ARGS: u16 = 32;
/// Upper bound for [`Config::max_tensors`].
pub const MAX_TENSORS: u16 = 32;

/// How a scheduler learns that its cores finished something.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum CompletionMode {
    /// It reads the status word of every busy core each loop (no help needed from the
    /// cores).
    #[default]
    Poll,
    /// Cores append a record to their scheduler's completion queue after each FIN
    /// ([`crate::Platform::completion_queue`]); the scheduler drains the queue and reads the
    /// status word of the cores it names only. The status word stays the source of truth.
    Ring,
}

/// The sizes and limits of one runtime. Every structure in the region is laid out from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// Task rings (1..=[`MAX_RINGS`]); a task picks its ring at submit.
    pub rings: u8,
    /// Task slots per ring: a power of two, at least 2. Bounds how many tasks of a ring are
    /// alive (submitted and not yet reclaimed) at once.
    pub task_window: u32,
    /// Most explicit dependencies per task (1..=[`MAX_DEPS`]).
    pub max_deps: u16,
    /// Most scalar arguments per task (0..=[`MAX_ARGS`]).
    pub max_args: u16,
    /// Most tensor arguments per task (0..=[`MAX_TENSORS`]); each task slot keeps this many
    /// entries in the orchestrator's tensor map.
    pub max_tensors: u16,
    /// AIC (cube) cores. Core ids `0..aic_cores`.
    pub aic_cores: u16,
    /// AIV (vector) cores. Core ids `aic_cores..aic_cores + aiv_cores`.
    pub aiv_cores: u16,
    /// Scheduler threads (1..=[`MAX_SCHEDULERS`]); cluster `c` belongs to scheduler
    /// `c % schedulers`.
    pub schedulers: u8,
    /// Tag of this run; ids from another epoch are rejected as stale.
    pub epoch: u16,
    /// How long submit waits for a window slot before it gives up, in microseconds.
    pub submit_timeout_us: u64,
    /// How long a dispatched task may run before the run fails, in microseconds.
    pub task_timeout_us: u64,
    /// Record each task's ready-to-complete latency into the per-scheduler histogram (a run
    /// time flag: two clock reads per task when on, one relaxed load when off).
    pub record_latency: bool,
    /// What the runtime measures (can also be changed while running, see
    /// [`crate::Runtime::set_profile_level`]).
    pub profile: ProfileLevel,
    /// Task records the profile ring holds (a task claims its record when it is submitted
    /// at `Tasks`); tasks submitted once it is full are counted as dropped.
    pub profile_capacity: u32,
    /// Most deferred conditions one task may register (0..=[`MAX_CONDITIONS`]); one more
    /// fails the run with [`crate::FatalKind::TooManyConditions`].
    pub max_conditions: u16,
    /// Unmet deferred conditions each scheduler can hold (at least `max_conditions`). When its
    /// set is full, a scheduler leaves FINs that would enter it unread until room frees up.
    pub deferred_capacity: u32,
    /// Distinct watched words a scheduler reads per loop iteration at most, so dispatch is
    /// never starved by a large deferred set.
    pub deferred_poll_budget: u32,
    /// How long a task's deferred conditions may take to hold after its FIN, in
    /// microseconds; then the run fails with [`crate::FatalKind::DeferredTimeout`].
    pub deferred_timeout_us: u64,
    /// How schedulers learn of their cores' completions.
    pub completion: CompletionMode,
    /// How the platform's output heap is shared among the rings: ring `r` gets
    /// `heap * heap_shares[r] / sum` of the first `rings` shares, so `[1, 0, 0, 0]` gives
    /// ring 0 all of it. All zero (the default): even shares.
    pub heap_shares: [u16; MAX_RINGS as usize],
}

impl Default for Config {
    /// One chip's worth: 24 clusters (24 AIC + 48 AIV), 3 schedulers, 4 rings of 4096 slots.
    fn default() -> Self {
        Config {
            rings: 4,
            task_window: 4096,
            max_deps: 16,
            max_args: 16,
            max_tensors: 8,
            aic_cores: 24,
            aiv_cores: 48,
            schedulers: 3,
            epoch: 1,
            submit_timeout_us: 10_000_000,
            task_timeout_us: 10_000_000,
            record_latency: false,
            profile: ProfileLevel::Off,
            profile_capacity: 1 << 16,
            max_conditions: 16,
            deferred_capacity: 4096,
            deferred_poll_budget: 64,
            deferred_timeout_us: 10_000_000,
            completion: CompletionMode::Poll,
            heap_shares: [0; MAX_RINGS as usize],
        }
    }
}

impl Config {
    /// A deliberately small machine for tests: 1 ring of 4 slots, so reclaim and back-pressure
    /// run constantly.
    pub fn tiny() -> Self {
        Config {
            rings: 1,
            task_window: 4,
            max_deps: 8,
            max_args: 4,
            max_tensors: 4,
            aic_cores: 1,
            aiv_cores: 2,
            schedulers: 1,
            profile_capacity: 256,
            max_conditions: 4,
            deferred_capacity: 8,
            deferred_poll_budget: 2,
            ..Config::default()
        }
    }

    /// Total AICore cores.
    pub fn cores(&self) -> u16 {
        self.aic_cores.saturating_add(self.aiv_cores)
    }

    /// Clusters: a cluster has an AIC, or AIV pairs beyond the AIC count form their own.
    pub fn clusters(&self) -> u16 {
        self.aic_cores.max(self.aiv_cores.div_ceil(2))
    }

    /// Clusters that can run a MIX task (an AIC and both AIVs present).
    pub fn mix_clusters(&self) -> u16 {
        self.aic_cores.min(self.aiv_cores / 2)
    }

    /// Slots of every ready queue: the next power of two of all live tasks, so a queue cannot
    /// overflow (a task is in at most one queue, once).
    pub fn ready_queue_capacity(&self) -> usize {
        (self.rings as usize * self.task_window as usize).next_power_of_two()
    }

    /// Records each scheduler's completion queue must hold ([`CompletionMode::Ring`]): a
    /// core has at most two tokens outstanding, so twice the cores (as a power of two) can
    /// never fill up.
    pub fn completion_queue_capacity(&self) -> usize {
        (2 * self.cores() as usize).next_power_of_two()
    }

    /// The scheduler that owns `core`: cluster `c` (AIC `c`, AIV `2c` and `2c + 1`) belongs
    /// to scheduler `c % schedulers`.
    pub fn scheduler_of(&self, core: CoreId) -> u8 {
        let cluster = if core.0 < self.aic_cores {
            core.0
        } else {
            (core.0 - self.aic_cores) / 2
        };
        (cluster % self.schedulers.max(1) as u16) as u8
    }

    /// Ring `ring`'s part of a heap of `len` bytes from `base`: its first address and
    /// bytes, as [`Config::heap_shares`] says (0 bytes for a ring past `rings`).
    ///
    /// ```
    /// use pto_runtime_core::Config;
    ///
    /// let even = Config { rings: 2, ..Config::default() };
    /// assert_eq!(even.ring_heap(1, 0x1000, 1000), (0x1000 + 500, 500));
    /// let first = Config { rings: 2, heap_shares: [3, 1, 0, 0], ..Config::default() };
    /// assert_eq!(first.ring_heap(0, 0x1000, 1000), (0x1000, 750));
    /// assert_eq!(first.ring_heap(1, 0x1000, 1000), (0x1000 + 750, 250));
    /// ```
    pub fn ring_heap(&self, ring: u8, base: u64, len: u64) -> (u64, u64) {
        let rings = (self.rings.min(MAX_RINGS)) as usize;
        if ring as usize >= rings {
            return (base, 0);
        }
        let shares = &self.heap_shares[..rings];
        let even = shares.iter().all(|&w| w == 0);
        let weight = |r: usize| if even { 1 } else { shares[r] as u128 };
        let total: u128 = (0..rings).map(weight).sum();
        // Below 2^64 * 2^16 * 4: no overflow in 128 bits.
        let upto = |r: usize| ((0..r).map(weight).sum::<u128>() * len as u128 / total) as u64;
        let (lo, hi) = (upto(ring as usize), upto(ring as usize + 1));
        (base + lo, hi - lo)
    }

    /// log2 of the window.
    pub(crate) fn window_shift(&self) -> u32 {
        self.task_window.trailing_zeros()
    }

    /// Checks every limit; the error says which knob to change.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.rings == 0 || self.rings > MAX_RINGS {
            return Err(ConfigError::Rings { rings: self.rings });
        }
        if self.task_window < 2 || !self.task_window.is_power_of_two() {
            return Err(ConfigError::TaskWindow {
                window: self.task_window,
            });
        }
        if self.max_deps == 0 || self.max_deps > MAX_DEPS {
            return Err(ConfigError::MaxDeps {
                max_deps: self.max_deps,
            });
        }
        if self.max_args > MAX_ARGS {
            return Err(ConfigError::MaxArgs {
                max_args: self.max_args,
            });
        }
        if self.max_tensors > MAX_TENSORS {
            return Err(ConfigError::MaxTensors {
                max_tensors: self.max_tensors,
            });
        }
        if self.cores() == 0 {
            return Err(ConfigError::NoCores);
        }
        if self.aic_cores as u32 + self.aiv_cores as u32 > MAX_CORES as u32 {
            return Err(ConfigError::TooManyCores {
                aic: self.aic_cores,
                aiv: self.aiv_cores,
            });
        }
        if self.schedulers == 0 || self.schedulers > MAX_SCHEDULERS {
            return Err(ConfigError::Schedulers {
                schedulers: self.schedulers,
            });
        }
        if self.max_conditions > MAX_CONDITIONS {
            return Err(ConfigError::MaxConditions {
                max_conditions: self.max_conditions,
            });
        }
        if self.deferred_capacity < self.max_conditions as u32 || self.deferred_capacity > 1 << 24 {
            return Err(ConfigError::DeferredCapacity {
                capacity: self.deferred_capacity,
                max_conditions: self.max_conditions,
            });
        }
        if self.deferred_poll_budget == 0 {
            return Err(ConfigError::ZeroPollBudget);
        }
        if self.submit_timeout_us == 0 || self.task_timeout_us == 0 || self.deferred_timeout_us == 0
        {
            return Err(ConfigError::ZeroTimeout);
        }
        let edges = self.rings as u64 * self.task_window as u64 * self.max_deps as u64;
        if edges >= crate::region::edge::EDGE_SENTINELS as u64 {
            return Err(ConfigError::TooManyEdges { edges });
        }
        Ok(())
    }
}

/// A [`Config`] (or the region handed in for it) that the runtime cannot use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConfigError {
    /// `rings` is 0 or above [`MAX_RINGS`].
    Rings {
        /// The value given.
        rings: u8,
    },
    /// `task_window` is not a power of two of at least 2.
    TaskWindow {
        /// The value given.
        window: u32,
    },
    /// `max_deps` is 0 or above [`MAX_DEPS`].
    MaxDeps {
        /// The value given.
        max_deps: u16,
    },
    /// `max_args` is above [`MAX_ARGS`].
    MaxArgs {
        /// The value given.
        max_args: u16,
    },
    /// `max_tensors` is above [`MAX_TENSORS`].
    MaxTensors {
        /// The value given.
        max_tensors: u16,
    },
    /// No AIC and no AIV core.
    NoCores,
    /// More cores than one runtime drives.
    TooManyCores {
        /// AIC cores given.
        aic: u16,
        /// AIV cores given.
        aiv: u16,
    },
    /// `schedulers` is 0 or above [`MAX_SCHEDULERS`].
    Schedulers {
        /// The value given.
        schedulers: u8,
    },
    /// A timeout of zero would fail every wait at once.
    ZeroTimeout,
    /// `max_conditions` is above [`MAX_CONDITIONS`].
    MaxConditions {
        /// The value given.
        max_conditions: u16,
    },
    /// `deferred_capacity` is below `max_conditions` (a task could never enter the deferred
    /// set) or above 2^24.
    DeferredCapacity {
        /// The value given.
        capacity: u32,
        /// `max_conditions` given.
        max_conditions: u16,
    },
    /// `deferred_poll_budget` is 0: deferred conditions would never be polled.
    ZeroPollBudget,
    /// `rings * task_window * max_deps` dependency edges do not fit the 32-bit edge index.
    TooManyEdges {
        /// Edges the config asks for.
        edges: u64,
    },
    /// The region is smaller than the layout needs.
    RegionTooSmall {
        /// Bytes the layout needs.
        needed: usize,
        /// Bytes handed in.
        given: usize,
    },
    /// The region does not start on a 64-byte boundary.
    RegionMisaligned {
        /// The start address modulo 64.
        offset: usize,
    },
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use Knob::*;
        match *self {
            Self::Rings { rings } => write!(f, "{Rings} = {rings}: use 1 to {MAX_RINGS} rings"),
            Self::TaskWindow { window } => write!(
                f,
                "{TaskWindow} = {window}: the task window must be a power of two of at least 2"
            ),
            Self::MaxDeps { max_deps } => write!(
                f,
                "{MaxDeps} = {max_deps}: use 1 to {MAX_DEPS} dependencies per task"
            ),
            Self::MaxArgs { max_args } => write!(
                f,
                "{MaxArgs} = {max_args}: use at most {MAX_ARGS} arguments per task"
            ),
            Self::MaxTensors { max_tensors } => write!(
                f,
                "{MaxTensors} = {max_tensors}: use at most {MAX_TENSORS} tensor arguments per task"
            ),
            Self::NoCores => write!(
                f,
                "the config has no AIC and no AIV core: give at least one core"
            ),
            Self::TooManyCores { aic, aiv } => write!(
                f,
                "{aic} AIC + {aiv} AIV cores exceed the limit of {MAX_CORES} cores per runtime"
            ),
            Self::Schedulers { schedulers } => write!(
                f,
                "{Schedulers} = {schedulers}: use 1 to {MAX_SCHEDULERS} scheduler threads"
            ),
            Self::ZeroTimeout => write!(
                f,
                "a timeout of 0 µs fails every wait: give a positive timeout"
            ),
            Self::MaxConditions { max_conditions } => write!(
                f,
                "{MaxConditions} = {max_conditions}: use at most {MAX_CONDITIONS} deferred \
                 conditions per task"
            ),
            Self::DeferredCapacity {
                capacity,
                max_conditions,
            } => write!(
                f,
                "{DeferredCapacity} = {capacity}: give between {MaxConditions} \
                 ({max_conditions}) and 2^24 waiting conditions per scheduler"
            ),
            Self::ZeroPollBudget => write!(
                f,
                "{DeferredPollBudget} = 0 would never poll a deferred condition: give at least 1"
            ),
            Self::TooManyEdges { edges } => write!(
                f,
                "{Rings} x {TaskWindow} x {MaxDeps} = {edges} edges overflow the edge index: \
                 lower {}",
                AnyOf(&[Rings, TaskWindow, MaxDeps])
            ),
            Self::RegionTooSmall { needed, given } => write!(
                f,
                "the region has {given} bytes but this config needs {needed}: allocate \
                 RegionLayout::size() bytes or lower {TaskWindow}"
            ),
            Self::RegionMisaligned { offset } => write!(
                f,
                "the region starts {offset} bytes past a 64-byte boundary: align it to 64 bytes"
            ),
        }
    }
}

impl core::error::Error for ConfigError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_and_tiny_configs_are_valid() {
        Config::default().validate().unwrap();
        Config::tiny().validate().unwrap();
    }

    #[test]
    fn each_bad_knob_is_named() {
        let bad = Config {
            task_window: 6,
            ..Config::tiny()
        };
        assert_eq!(bad.validate(), Err(ConfigError::TaskWindow { window: 6 }));
        let bad = Config {
            aic_cores: 0,
            aiv_cores: 0,
            ..Config::tiny()
        };
        assert_eq!(bad.validate(), Err(ConfigError::NoCores));
        let bad = Config {
            aic_cores: 100,
            aiv_cores: 100,
            ..Config::tiny()
        };
        assert!(matches!(
            bad.validate(),
            Err(ConfigError::TooManyCores { .. })
        ));
        let bad = Config {
            schedulers: 0,
            ..Config::tiny()
        };
        assert!(std::format!("{}", bad.validate().unwrap_err()).contains("scheduler threads"));
    }

    #[test]
    fn ready_queues_hold_every_live_task() {
        let c = Config {
            rings: 3,
            task_window: 8,
            ..Config::tiny()
        };
        assert_eq!(c.ready_queue_capacity(), 32);
    }
}
