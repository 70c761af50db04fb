//! The deferred set: tasks whose kernels returned but whose conditions do not all hold yet.
//!
//! Each scheduler owns one set for the tasks whose last FIN it saw. Conditions are grouped by
//! the word they watch; a poll reads each watched word once and releases its waiters in
//! ascending order of `expected` (a heap per word), stopping at the first one still unmet. A poll therefore
//! costs one read per distinct word plus the waiters it releases, never a pass over every
//! pending condition. Armed tasks sit in a list in deadline order (deadlines are FIN time plus
//! one constant, so appending keeps the order), so the timeout check looks at one task.
#![forbid(unsafe_code)]

mod heap;
mod store;
mod watch_map;

pub(crate) use store::{
    DeferredStore, Entry, EntryIndex, Waiter, WaiterIndex, WatchIndex, WatchSlot,
};

use crate::condition::{Condition, Watch};
use crate::ids::TaskId;
use crate::index::TableIndex;

/// The task word of an entry on the free list: no task id has every bit set (its ring
/// field would name ring 15, and rings are fewer than `MAX_RINGS`).
const FREE_ENTRY: u64 = u64::MAX;

/// A condition that outlived its deadline.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Expired {
    /// The task.
    pub(crate) task: TaskId,
    /// The word it waited on.
    pub(crate) watch: Watch,
    /// The value it waited for.
    pub(crate) expected: u64,
    /// The last value the scheduler read.
    pub(crate) last: u64,
}

/// One scheduler's deferred set, over its pools.
pub(crate) struct DeferredSet<'r> {
    s: DeferredStore<'r>,
    free_waiter: WaiterIndex,
    free_waiters: usize,
    free_entry: EntryIndex,
    free_entries: usize,
    free_watch: WatchIndex,
    /// Watches in `s.active[..active]`.
    active: usize,
    /// Round-robin position of the next poll.
    cursor: usize,
    /// Armed entries, oldest deadline first.
    armed_head: EntryIndex,
    armed_tail: EntryIndex,
    /// Open entries.
    open: usize,
    /// Entries closed so far (wrapping): room can only have grown when this moved.
    closes: u32,
}

impl<'r> DeferredSet<'r> {
    /// A set with every pool free.
    pub(crate) fn new(mut s: DeferredStore<'r>) -> Self {
        let waiters = s.waiters.len();
        for (i, w) in s.waiters.iter_mut() {
            *w = Waiter::new();
            w.next = WaiterIndex::link(i.get() + 1, waiters);
        }
        let entries = s.entries.len();
        for (i, e) in s.entries.iter_mut() {
            *e = Entry::new();
            e.task = FREE_ENTRY;
            e.next = EntryIndex::link(i.get() + 1, entries);
        }
        let watches = s.watches.len();
        for (i, w) in s.watches.iter_mut() {
            *w = WatchSlot::new();
            w.next_free = WatchIndex::link(i.get() + 1, watches);
        }
        s.map.fill(WatchIndex::NIL);
        DeferredSet {
            free_waiter: WaiterIndex::link(0, waiters),
            free_waiters: waiters,
            free_entry: EntryIndex::link(0, entries),
            free_entries: entries,
            free_watch: WatchIndex::link(0, watches),
            active: 0,
            cursor: 0,
            armed_head: EntryIndex::NIL,
            armed_tail: EntryIndex::NIL,
            open: 0,
            closes: 0,
            s,
        }
    }

    /// No task is waiting.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.open == 0
    }

    /// Distinct words being watched.
    #[cfg(all(test, not(loom)))]
    pub(crate) fn watched(&self) -> usize {
        self.active
    }

    /// How many entries were closed so far (wrapping). Room only grows when an entry
    /// closes, so a lane that found no room need not look again until this moves.
    #[inline]
    pub(crate) fn closes(&self) -> u32 {
        self.closes
    }

    /// Whether `n` more unmet conditions (and a new entry if `new_entry`) fit.
    pub(crate) fn has_room(&self, n: usize, new_entry: bool) -> bool {
        self.free_waiters >= n && (!new_entry || self.free_entries > 0)
    }

    /// Opens an entry for `task`. The caller checked [`Self::has_room`].
    pub(crate) fn open(&mut self, task: TaskId) -> EntryIndex {
        let e = self.free_entry;
        self.free_entry = self.s.entries[e].next;
        self.free_entries -= 1;
        self.open += 1;
        self.s.entries[e] = Entry {
            task: task.raw(),
            ..Entry::new()
        };
        e
    }

    /// Conditions registered on entry `e` so far.
    pub(crate) fn registered(&self, e: EntryIndex) -> u16 {
        self.s.entries[e].count
    }

    /// Counts a condition of `e` that held when it was registered.
    pub(crate) fn add_met(&mut self, e: EntryIndex) {
        self.s.entries[e].count += 1;
    }

    /// Queues an unmet condition of entry `e`, whose word last read `last`. The caller checked
    /// [`Self::has_room`].
    pub(crate) fn add(&mut self, e: EntryIndex, c: Condition, last: u64) {
        let w = match watch_map::find(self.s.map, &self.s.watches, c.watch) {
            Some(w) => w,
            None => self.new_watch(c.watch),
        };
        self.s.watches[w].last = last;
        let n = self.free_waiter;
        self.free_waiter = self.s.waiters[n].next;
        self.free_waiters -= 1;
        let entry = &mut self.s.entries[e];
        self.s.waiters[n] = Waiter {
            expected: c.expected,
            entry: e,
            watch: w,
            task_next: entry.first,
            ..Waiter::new()
        };
        entry.first = n;
        entry.count += 1;
        entry.left += 1;
        let root = self.s.watches[w].head;
        self.s.watches[w].head = heap::push(&mut self.s.waiters, root, n);
    }

    /// Arms entry `e` (its task's last lane reported FIN) with `deadline`. Returns `true` if
    /// every condition holds already: the caller completes the task and closes `e`.
    pub(crate) fn arm(&mut self, e: EntryIndex, deadline: u64) -> bool {
        let entry = &mut self.s.entries[e];
        entry.armed = true;
        if entry.left == 0 {
            return true;
        }
        entry.deadline = deadline;
        entry.prev = self.armed_tail;
        entry.next = EntryIndex::NIL;
        match self.armed_tail {
            EntryIndex::NIL => self.armed_head = e,
            t => self.s.entries[t].next = e,
        }
        self.armed_tail = e;
        false
    }

    /// Each open entry's task with the first condition it still waits for (`None` if every
    /// one of its conditions held: its lanes have not all finished). For reports only: it
    /// walks every entry.
    pub(crate) fn waiting(&self) -> impl Iterator<Item = (TaskId, Option<Expired>)> + '_ {
        self.s
            .entries
            .iter()
            .map(|(_, e)| e)
            .filter(|e| e.task != FREE_ENTRY)
            .map(|entry| {
                let task = TaskId::from_raw(entry.task);
                let mut n = entry.first;
                while !n.is_nil() {
                    let w = &self.s.waiters[n];
                    if !w.met {
                        let slot = &self.s.watches[w.watch];
                        let unmet = Expired {
                            task,
                            watch: slot.watch,
                            expected: w.expected,
                            last: slot.last,
                        };
                        return (task, Some(unmet));
                    }
                    n = w.task_next;
                }
                (task, None)
            })
    }

    /// Frees entry `e`, whose conditions all hold, and its waiters; returns its task.
    pub(crate) fn close(&mut self, e: EntryIndex) -> TaskId {
        let entry = self.s.entries[e];
        debug_assert_eq!(entry.left, 0, "closing an entry with unmet conditions");
        let mut n = entry.first;
        while !n.is_nil() {
            let next = self.s.waiters[n].task_next;
            self.s.waiters[n].next = self.free_waiter;
            self.free_waiter = n;
            self.free_waiters += 1;
            n = next;
        }
        self.s.entries[e].next = self.free_entry;
        self.s.entries[e].task = FREE_ENTRY;
        self.free_entry = e;
        self.free_entries += 1;
        self.open -= 1;
        self.closes = self.closes.wrapping_add(1);
        TaskId::from_raw(entry.task)
    }

    /// Polls up to `budget` watched words, round robin: reads each once with `read`, and
    /// calls `done` with every entry whose last condition that read met (armed entries only;
    /// `done` must close it). Stops at the first word `read` cannot read and returns it with
    /// a task waiting on it.
    #[cfg(all(test, not(loom)))]
    pub(crate) fn poll(
        &mut self,
        budget: usize,
        read: impl FnMut(Watch) -> Option<u64>,
        done: impl FnMut(&mut Self, EntryIndex),
    ) -> Result<usize, (Watch, TaskId)> {
        self.poll_with(budget, read, |_, _, _| {}, done)
    }

    /// [`Self::poll`], calling `met` with each waiter released on a [`Watch::Queue`] (its
    /// watch, the post it waited for and its task) before `done` sees its entry.
    pub(crate) fn poll_with(
        &mut self,
        budget: usize,
        mut read: impl FnMut(Watch) -> Option<u64>,
        mut met: impl FnMut(Watch, u64, TaskId),
        mut done: impl FnMut(&mut Self, EntryIndex),
    ) -> Result<usize, (Watch, TaskId)> {
        let reads = budget.min(self.active);
        let mut released = 0;
        for _ in 0..reads {
            if self.active == 0 {
                break;
            }
            if self.cursor >= self.active {
                self.cursor = 0;
            }
            let w = self.s.active[self.cursor];
            let watch = self.s.watches[w].watch;
            let Some(value) = read(watch) else {
                let head = self.s.watches[w].head;
                let e = self.s.waiters[head].entry;
                return Err((watch, TaskId::from_raw(self.s.entries[e].task)));
            };
            self.s.watches[w].last = value;
            let queue = matches!(watch, Watch::Queue(_));
            let mut emptied = false;
            loop {
                let head = self.s.watches[w].head;
                if head.is_nil() {
                    emptied = true;
                    break;
                }
                let waiter = &mut self.s.waiters[head];
                if waiter.expected > value {
                    break;
                }
                waiter.met = true;
                let (e, expected) = (waiter.entry, waiter.expected);
                self.s.watches[w].head = heap::pop(&mut self.s.waiters, head);
                if queue {
                    met(watch, expected, TaskId::from_raw(self.s.entries[e].task));
                }
                let entry = &mut self.s.entries[e];
                entry.left -= 1;
                released += 1;
                if entry.left == 0 && entry.armed {
                    self.unlink_armed(e);
                    done(self, e);
                }
            }
            if emptied {
                self.drop_watch(w);
                // The last active watch moved into this position: poll it next.
            } else {
                self.cursor += 1;
            }
        }
        Ok(released)
    }

    /// The oldest armed task, if its deadline is before `now`, with a condition it still
    /// waits for.
    pub(crate) fn expired(&self, now: u64) -> Option<Expired> {
        let e = self.armed_head;
        if e.is_nil() {
            return None;
        }
        let entry = &self.s.entries[e];
        if entry.deadline >= now {
            return None;
        }
        let mut n = entry.first;
        while !n.is_nil() {
            let w = &self.s.waiters[n];
            if !w.met {
                let slot = &self.s.watches[w.watch];
                return Some(Expired {
                    task: TaskId::from_raw(entry.task),
                    watch: slot.watch,
                    expected: w.expected,
                    last: slot.last,
                });
            }
            n = w.task_next;
        }
        None
    }

    fn new_watch(&mut self, watch: Watch) -> WatchIndex {
        // A free watch exists: watches in use never outnumber waiters in use.
        let w = self.free_watch;
        self.free_watch = self.s.watches[w].next_free;
        self.s.watches[w] = WatchSlot {
            watch,
            pos: self.active as u32,
            ..WatchSlot::new()
        };
        self.s.active[self.active] = w;
        self.active += 1;
        watch_map::insert(self.s.map, &self.s.watches, w);
        w
    }

    fn drop_watch(&mut self, w: WatchIndex) {
        watch_map::remove(self.s.map, &self.s.watches, w);
        let pos = self.s.watches[w].pos as usize;
        self.active -= 1;
        let moved = self.s.active[self.active];
        self.s.active[pos] = moved;
        self.s.watches[moved].pos = pos as u32;
        self.s.watches[w].next_free = self.free_watch;
        self.free_watch = w;
    }

    fn unlink_armed(&mut self, e: EntryIndex) {
        let Entry { prev, next, .. } = self.s.entries[e];
        match prev {
            EntryIndex::NIL => self.armed_head = next,
            p => self.s.entries[p].next = next,
        }
        match next {
            EntryIndex::NIL => self.armed_tail = prev,
            n => self.s.entries[n].prev = prev,
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests;
