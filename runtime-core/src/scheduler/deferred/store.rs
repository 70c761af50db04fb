//! The deferred set's storage: plain records in pools, owned by one scheduler.
//!
//! Each scheduler gets its own pools, carved from the region once and handed over with its
//! handle, so nothing here is shared and nothing needs an atomic.
#![forbid(unsafe_code)]

use crate::condition::Watch;
use crate::region::config::{Config, ConfigError, MAX_SCHEDULERS};
use crate::region::layout::Carve;

/// End of a list; "no index".
pub(crate) const NIL: u32 = u32::MAX;

/// One unmet condition of a task, queued on the word it watches.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Waiter {
    /// The value the word must reach.
    pub(crate) expected: u64,
    /// The task's entry.
    pub(crate) entry: u32,
    /// The word's watch.
    pub(crate) watch: u32,
    /// Next sibling in the word's heap, or next free waiter.
    pub(crate) next: u32,
    /// First child in the word's heap.
    pub(crate) child: u32,
    /// Next waiter of the same task.
    pub(crate) task_next: u32,
    /// The word reached `expected`.
    pub(crate) met: bool,
}

impl Waiter {
    pub(crate) const fn new() -> Self {
        Waiter {
            expected: 0,
            entry: NIL,
            watch: NIL,
            next: NIL,
            child: NIL,
            task_next: NIL,
            met: false,
        }
    }
}

/// A task with registered conditions.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Entry {
    /// The task (raw id).
    pub(crate) task: u64,
    /// Clock tick after which an unmet condition fails the run (armed entries).
    pub(crate) deadline: u64,
    /// First waiter of the task.
    pub(crate) first: u32,
    /// Conditions registered (met or not).
    pub(crate) count: u16,
    /// Conditions not met yet.
    pub(crate) left: u16,
    /// Every lane reported FIN: the task completes when `left` reaches 0.
    pub(crate) armed: bool,
    /// Neighbours in the armed list (deadline order), or next free entry in `next`.
    pub(crate) prev: u32,
    pub(crate) next: u32,
}

impl Entry {
    pub(crate) const fn new() -> Self {
        Entry {
            task: 0,
            deadline: 0,
            first: NIL,
            count: 0,
            left: 0,
            armed: false,
            prev: NIL,
            next: NIL,
        }
    }
}

/// One distinct word with waiters: read once per poll however many wait on it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct WatchSlot {
    /// The word.
    pub(crate) watch: Watch,
    /// The last value read.
    pub(crate) last: u64,
    /// Root of the waiters' heap: a waiter with the smallest `expected`.
    pub(crate) head: u32,
    /// Position in the active list, or next free watch while free.
    pub(crate) pos: u32,
}

impl WatchSlot {
    pub(crate) const fn new() -> Self {
        WatchSlot {
            watch: Watch::Engine(0),
            last: 0,
            head: NIL,
            pos: NIL,
        }
    }
}

/// One scheduler's pools. `waiters`, `entries`, `watches` and `active` have the same length
/// (the configured capacity); `map` is a power of two at least twice as long.
pub(crate) struct DeferredStore<'r> {
    pub(crate) waiters: &'r mut [Waiter],
    pub(crate) entries: &'r mut [Entry],
    pub(crate) watches: &'r mut [WatchSlot],
    pub(crate) active: &'r mut [u32],
    pub(crate) map: &'r mut [u32],
}

impl<'r> DeferredStore<'r> {
    /// Takes the pools of every scheduler of `cfg` from `c`: `deferred_capacity` waiters,
    /// entries and watches each, and the watch map over them.
    pub(crate) fn carve_all(
        cfg: &Config,
        c: &mut impl Carve<'r>,
    ) -> Result<heapless::Vec<Self, { MAX_SCHEDULERS as usize }>, ConfigError> {
        let capacity = cfg.deferred_capacity as usize;
        let mut all = heapless::Vec::new();
        for _ in 0..cfg.schedulers {
            let store = DeferredStore {
                waiters: c.table(capacity, |_| Waiter::new())?,
                entries: c.table(capacity, |_| Entry::new())?,
                watches: c.table(capacity, |_| WatchSlot::new())?,
                active: c.table(capacity, |_| 0u32)?,
                map: c.table(map_len(capacity), |_| NIL)?,
            };
            // At most MAX_SCHEDULERS schedulers (a validated config).
            let _ = all.push(store);
        }
        Ok(all)
    }
}

/// Slots of the watch map for `capacity` watches: a power of two, at most half full.
pub(crate) fn map_len(capacity: usize) -> usize {
    if capacity == 0 {
        0
    } else {
        (capacity * 2).next_power_of_two()
    }
}
