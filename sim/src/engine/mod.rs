//! Simulated DMA/RDMA engines: transfers that land in the machine's memory (its own, or a
//! peer's window: see [`MemoryMap`]) after a latency.
//!
//! A kernel posts a [`Transfer`]; the engine's own thread lands it when its latency has passed:
//! it copies the words, then applies the [`Signal`], then marks the post landed. Transfers land
//! in order of landing time, not of posting, so a short transfer overtakes a long one; the
//! completion watermark ([`Engine::completed`]) only moves over posts that have all landed.

use std::cmp::{Ordering as CmpOrdering, Reverse};
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::memory::MemoryError;
use crate::memory_map::MemoryMap;

mod clock;
mod reports;
mod transfer;
mod watermark;

use clock::Now;
pub use clock::{EngineClock, VirtualClock};
use pto_runtime_core::{Completion, CompletionQueue, transfer_status};
use reports::{EngineQueue, Reports};

use transfer::MAX_DELAY;
pub use transfer::{EngineError, EngineOptions, Signal, Transfer};
use watermark::Watermark;

/// A transfer waiting to land, ordered by landing time, then post id.
struct Pending {
    /// Landing time, on the engine's clock.
    at: Duration,
    id: u64,
    transfer: Transfer,
}

impl PartialEq for Pending {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == CmpOrdering::Equal
    }
}

impl Eq for Pending {}

impl PartialOrd for Pending {
    fn partial_cmp(&self, other: &Self) -> Option<CmpOrdering> {
        Some(self.cmp(other))
    }
}

impl Ord for Pending {
    fn cmp(&self, other: &Self) -> CmpOrdering {
        (self.at, self.id).cmp(&(other.at, other.id))
    }
}

/// What posters and the engine thread share under the lock.
struct Queue {
    heap: BinaryHeap<Reverse<Pending>>,
    /// The last post id handed out.
    last_id: u64,
    rng: SplitMix,
    stop: bool,
    /// The posts that report to a completion queue, and their order.
    reports: Reports,
}

/// State shared by an [`Engine`] handle and its thread.
struct Shared {
    queue: Mutex<Queue>,
    /// Signalled on a new post and on shutdown.
    wake: Condvar,
    memory: Arc<MemoryMap>,
    /// The completion watermark.
    completed: AtomicU64,
    landed: AtomicU64,
    /// This engine's index (the `source` of its entries).
    index: u32,
    /// One completion queue per scheduler (none for an engine started without).
    queues: Box<[EngineQueue]>,
    /// Set with `stop`, readable without the lock (a full queue's wait checks it).
    stopping: AtomicBool,
    /// The engine's clock.
    now: Now,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        // Nothing panics while holding the lock; if something did, the queue is still whole.
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A simulated DMA/RDMA engine: a thread that lands posted transfers in one memory. Dropping
/// it stops and joins the thread; transfers not yet landed are dropped.
pub struct Engine {
    shared: Arc<Shared>,
    opts: EngineOptions,
    thread: Option<JoinHandle<()>>,
}

impl Engine {
    /// Starts engine `index` over `memory` on a thread named `sim-engine-{index}`.
    pub fn start(
        index: u32,
        memory: Arc<MemoryMap>,
        opts: EngineOptions,
    ) -> Result<Self, EngineError> {
        Self::start_with_queues(index, memory, opts, 0)
    }

    /// Starts engine `index` with a completion queue for each of `schedulers` schedulers
    /// (`opts.queue_capacity` records each), so transfers may report (see
    /// [`Transfer::report_to`]).
    pub fn start_with_queues(
        index: u32,
        memory: Arc<MemoryMap>,
        opts: EngineOptions,
        schedulers: u8,
    ) -> Result<Self, EngineError> {
        Self::start_on(index, memory, opts, schedulers, EngineClock::Wall)
    }

    /// [`Engine::start_with_queues`], landing transfers by `clock`: with
    /// [`EngineClock::Virtual`], a transfer lands only once the clock has been advanced past
    /// its posting time plus its latency.
    pub fn start_on(
        index: u32,
        memory: Arc<MemoryMap>,
        opts: EngineOptions,
        schedulers: u8,
        clock: EngineClock,
    ) -> Result<Self, EngineError> {
        let subscribe = match &clock {
            EngineClock::Virtual(c) => Some(c.clone()),
            EngineClock::Wall => None,
        };
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue {
                heap: BinaryHeap::new(),
                last_id: 0,
                rng: SplitMix(opts.seed ^ index as u64),
                stop: false,
                reports: Reports::new(schedulers as usize),
            }),
            wake: Condvar::new(),
            memory,
            completed: AtomicU64::new(0),
            landed: AtomicU64::new(0),
            index,
            queues: (0..schedulers)
                .map(|_| EngineQueue::new(opts.queue_capacity))
                .collect(),
            stopping: AtomicBool::new(false),
            now: Now::new(clock),
        });
        if let Some(c) = subscribe {
            c.subscribe(&shared);
        }
        let s = shared.clone();
        let thread = std::thread::Builder::new()
            .name(format!("sim-engine-{index}"))
            .spawn(move || engine_loop(&s))
            .map_err(EngineError::Spawn)?;
        Ok(Engine {
            shared,
            opts,
            thread: Some(thread),
        })
    }

    /// Posts `t` and returns its post id (1, 2, 3, ... in posting order). Every address the
    /// transfer touches is checked now: a bad one is an error and nothing is posted. A lost
    /// transfer takes an id but never lands.
    ///
    /// A transfer with [`Transfer::report_to`] posts one entry to that scheduler's queue once
    /// it ended (landed, or failed with [`Transfer::fail`]'s status), after the entries of the
    /// transfers posted before it for that queue. A lost one never reports, so the queue's
    /// later entries wait behind it.
    pub fn post(&self, t: Transfer) -> Result<u64, EngineError> {
        self.validate(&t)?;
        let mut q = self.shared.lock();
        if q.stop {
            return Err(EngineError::Stopped);
        }
        if let Some(s) = t.report
            && s as usize >= q.reports.queues()
        {
            return Err(EngineError::NoQueue {
                engine: self.shared.index,
                scheduler: s,
                queues: q.reports.queues(),
            });
        }
        q.last_id += 1;
        let id = q.last_id;
        if let Some(s) = t.report {
            q.reports.posted(s as usize, id);
        }
        if t.lost {
            return Ok(id);
        }
        let jitter = match self.opts.jitter.as_nanos().min(u64::MAX as u128 - 1) as u64 {
            0 => 0,
            j => q.rng.next() % (j + 1),
        };
        let delay = t
            .latency
            .unwrap_or(self.opts.latency)
            .saturating_add(Duration::from_nanos(jitter))
            .min(MAX_DELAY);
        let at = self.shared.now.read().saturating_add(delay);
        q.heap.push(Reverse(Pending {
            at,
            id,
            transfer: t,
        }));
        drop(q);
        self.shared.wake.notify_one();
        Ok(id)
    }

    /// The completion watermark: the highest post id `p` such that every post up to `p` has
    /// landed (0 at start). Acquire: the data and signals of those posts are visible. A lost
    /// transfer holds the watermark below its id forever.
    pub fn completed(&self) -> u64 {
        self.shared.completed.load(Ordering::Acquire)
    }

    /// How many transfers have landed, in any order.
    pub fn landed(&self) -> u64 {
        self.shared.landed.load(Ordering::Acquire)
    }

    /// This engine's completion queue for scheduler `scheduler`, if it has one.
    pub fn queue(&self, scheduler: u8) -> Option<CompletionQueue<'_>> {
        self.shared
            .queues
            .get(scheduler as usize)
            .map(EngineQueue::view)
    }

    fn validate(&self, t: &Transfer) -> Result<(), EngineError> {
        if t.fail == Some(transfer_status::OK) {
            return Err(EngineError::ZeroFailStatus);
        }
        self.validate_memory(t).map_err(EngineError::from)
    }

    fn validate_memory(&self, t: &Transfer) -> Result<(), MemoryError> {
        let m = &self.shared.memory;
        if t.words > 0 {
            let len = t.words.checked_mul(8).ok_or(MemoryError::OutOfRange {
                addr: t.src,
                len: usize::MAX,
            })?;
            m.check(t.src, len, 8)?;
            m.check(t.dst, len, 8)?;
        }
        match t.signal {
            Signal::None => Ok(()),
            Signal::Add32 { addr, .. } => m.check(addr, 4, 4),
            Signal::Add64 { addr, .. } => m.check(addr, 8, 8),
        }
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        self.shared.lock().stop = true;
        self.shared.stopping.store(true, Ordering::Release);
        self.shared.wake.notify_all();
        if let Some(t) = self.thread.take()
            && t.join().is_err()
        {
            log::error!("a simulated engine thread panicked");
        }
    }
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("opts", &self.opts)
            .field("completed", &self.completed())
            .field("landed", &self.landed())
            .finish()
    }
}

/// The engine thread: sleeps until the earliest landing (or a move of its virtual clock), a
/// new post or shutdown; lands every
/// transfer that is due, outside the lock.
fn engine_loop(s: &Shared) {
    let mut marks = Watermark::default();
    let mut due = Vec::new();
    let mut q = s.lock();
    loop {
        if q.stop {
            return;
        }
        let now = s.now.read();
        while q.heap.peek().is_some_and(|Reverse(p)| p.at <= now) {
            if let Some(Reverse(p)) = q.heap.pop() {
                due.push(p);
            }
        }
        if !due.is_empty() {
            drop(q);
            for p in due.drain(..) {
                land(s, &p, &mut marks);
            }
            q = s.lock();
            continue;
        }
        q = match q
            .heap
            .peek()
            .and_then(|Reverse(p)| s.now.sleep_until(p.at, now))
        {
            Some(wait) => {
                s.wake
                    .wait_timeout(q, wait)
                    .unwrap_or_else(PoisonError::into_inner)
                    .0
            }
            // Nothing pending, or a virtual clock: a post, a move of the clock or shutdown
            // wakes the engine.
            None => s.wake.wait(q).unwrap_or_else(PoisonError::into_inner),
        };
    }
}

/// Copies, signals, then publishes the landing. Addresses were checked at posting and memory
/// never shrinks, so the accesses cannot fail; if one did, the post would count as lost.
fn land(s: &Shared, p: &Pending, marks: &mut Watermark) {
    let status = match p.transfer.fail {
        Some(status) => status,
        None => copy_and_signal(s, p, marks),
    };
    if let Some(queue) = p.transfer.report {
        report(s, queue, p.id, status);
    }
}

/// Posts the entries that post `id` ending with `status` makes due, in order. A full queue
/// makes the engine wait for its scheduler to drain it (or for shutdown), never drop.
fn report(s: &Shared, queue: u8, id: u64, status: u32) {
    let mut due = Vec::new();
    s.lock().reports.ended(queue as usize, id, status, &mut due);
    let Some(q) = s.queues.get(queue as usize).map(EngineQueue::view) else {
        return;
    };
    for (post, status) in due {
        let mut c = Completion {
            source: s.index,
            status,
            id: post,
            time: 0,
        };
        while let Err(back) = q.push(c) {
            c = back;
            if s.stopping.load(Ordering::Acquire) {
                return;
            }
            std::thread::yield_now();
        }
    }
}

/// Lands a transfer that does not fail by injection; returns its status.
fn copy_and_signal(s: &Shared, p: &Pending, marks: &mut Watermark) -> u32 {
    let t = &p.transfer;
    let m = &s.memory;
    let copied = match t.words {
        // A signal-only transfer's addresses are placeholders: nothing to copy or check.
        0 => Ok(()),
        n => m.copy(t.src, t.dst, n),
    };
    let done = copied.and_then(|()| match t.signal {
        Signal::None => Ok(()),
        // AcqRel adds: whoever Acquire-loads the new count also sees the copied words.
        Signal::Add32 { addr, delta } => m.add32(addr, delta).map(drop),
        Signal::Add64 { addr, delta } => m.add64(addr, delta).map(drop),
    });
    if let Err(e) = done {
        log::error!("simulated transfer {} failed to land: {e}", p.id);
        return transfer_status::REMOTE_ACCESS;
    }
    s.landed.fetch_add(1, Ordering::Release);
    if let Some(w) = marks.land(p.id) {
        s.completed.store(w, Ordering::Release);
    }
    transfer_status::OK
}

/// SplitMix64: a tiny PRNG for jitter.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

#[cfg(test)]
mod tests;
