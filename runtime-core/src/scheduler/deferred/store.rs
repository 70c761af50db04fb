//! The deferred set's storage: plain records in pools, owned by one scheduler.
//!
//! Each scheduler gets its own pools, carved from the region once and handed over with its
//! handle, so nothing here is shared and nothing needs an atomic.
#![forbid(unsafe_code)]

use crate::condition::Watch;
use crate::index::{Table, map_len, table_index};
use crate::region::carve::Carve;
use crate::region::config::{Config, ConfigError, MAX_SCHEDULERS};

table_index! {
    /// A waiter's place in its scheduler's waiter pool.
    WaiterIndex;
    /// An entry's place in its scheduler's entry pool.
    EntryIndex;
    /// A watch's place in its scheduler's watch pool.
    WatchIndex;
}

impl EntryIndex {
    /// The entry as a task slot's `deferred` word stores it (0 means "no entry").
    #[inline]
    pub(crate) const fn slot_word(self) -> u32 {
        self.0 + 1
    }
    /// The entry a task slot's `deferred` word names, if any.
    #[inline]
    pub(crate) const fn from_slot_word(word: u32) -> Option<Self> {
        match word.checked_sub(1) {
            Some(e) => Some(EntryIndex(e)),
            None => None,
        }
    }
}

/// One unmet condition of a task, queued on the word it watches.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Waiter {
    /// The value the word must reach.
    pub(crate) expected: u64,
    /// The task's entry.
    pub(crate) entry: EntryIndex,
    /// The word's watch.
    pub(crate) watch: WatchIndex,
    /// Next sibling in the word's heap, or next free waiter.
    pub(crate) next: WaiterIndex,
    /// First child in the word's heap.
    pub(crate) child: WaiterIndex,
    /// Next waiter of the same task.
    pub(crate) task_next: WaiterIndex,
    /// The word reached `expected`.
    pub(crate) met: bool,
}

impl Waiter {
    pub(crate) const fn new() -> Self {
        Waiter {
            expected: 0,
            entry: EntryIndex::NIL,
            watch: WatchIndex::NIL,
            next: WaiterIndex::NIL,
            child: WaiterIndex::NIL,
            task_next: WaiterIndex::NIL,
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
    pub(crate) first: WaiterIndex,
    /// Conditions registered (met or not).
    pub(crate) count: u16,
    /// Conditions not met yet.
    pub(crate) left: u16,
    /// Every lane reported FIN: the task completes when `left` reaches 0.
    pub(crate) armed: bool,
    /// Neighbours in the armed list (deadline order), or next free entry in `next`.
    pub(crate) prev: EntryIndex,
    pub(crate) next: EntryIndex,
}

impl Entry {
    pub(crate) const fn new() -> Self {
        Entry {
            task: 0,
            deadline: 0,
            first: WaiterIndex::NIL,
            count: 0,
            left: 0,
            armed: false,
            prev: EntryIndex::NIL,
            next: EntryIndex::NIL,
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
    pub(crate) head: WaiterIndex,
    /// Position in the active list while in use.
    pub(crate) pos: u32,
    /// Next free watch while free.
    pub(crate) next_free: WatchIndex,
}

impl WatchSlot {
    pub(crate) const fn new() -> Self {
        WatchSlot {
            watch: Watch::Engine(0),
            last: 0,
            head: WaiterIndex::NIL,
            pos: 0,
            next_free: WatchIndex::NIL,
        }
    }
}

/// Records in each pool of one scheduler's deferred set.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct PoolLengths {
    /// One waiter per unmet condition: the configured capacity.
    pub(crate) waiters: usize,
    /// At most one entry per waiter (an entry has at least one unmet condition).
    pub(crate) entries: usize,
    /// At most one watched word per waiter.
    pub(crate) watches: usize,
    /// The active list holds every watch in use.
    pub(crate) active: usize,
    /// The watch map: a power of two at least twice the watches.
    pub(crate) map: usize,
}

impl PoolLengths {
    /// The pools of `cfg`'s `deferred_capacity`.
    pub(crate) fn of(cfg: &Config) -> Self {
        let waiters = cfg.deferred_capacity as usize;
        PoolLengths {
            waiters,
            entries: waiters,
            watches: waiters,
            active: waiters,
            map: map_len(waiters),
        }
    }
}

/// One scheduler's pools, each indexed by its own type ([`PoolLengths`] says how long).
pub(crate) struct DeferredStore<'r> {
    pub(crate) waiters: Table<'r, WaiterIndex, Waiter>,
    pub(crate) entries: Table<'r, EntryIndex, Entry>,
    pub(crate) watches: Table<'r, WatchIndex, WatchSlot>,
    /// The watches in use, by position (`WatchSlot::pos`).
    pub(crate) active: &'r mut [WatchIndex],
    /// The watch map's slots (see `watch_map`).
    pub(crate) map: &'r mut [WatchIndex],
}

impl<'r> DeferredStore<'r> {
    /// Takes the pools of every scheduler of `cfg` from `c` ([`PoolLengths::of`]).
    pub(crate) fn carve_all(
        cfg: &Config,
        c: &mut impl Carve<'r>,
    ) -> Result<heapless::Vec<Self, { MAX_SCHEDULERS as usize }>, ConfigError> {
        let len = PoolLengths::of(cfg);
        let mut all = heapless::Vec::new();
        for _ in 0..cfg.schedulers {
            let store = DeferredStore {
                waiters: Table::new(c.table(len.waiters, |_| Waiter::new())?),
                entries: Table::new(c.table(len.entries, |_| Entry::new())?),
                watches: Table::new(c.table(len.watches, |_| WatchSlot::new())?),
                active: c.table(len.active, |_| WatchIndex::NIL)?,
                map: c.table(len.map, |_| WatchIndex::NIL)?,
            };
            // At most MAX_SCHEDULERS schedulers (a validated config).
            let _ = all.push(store);
        }
        Ok(all)
    }
}
