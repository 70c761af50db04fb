//! Simulated DMA/RDMA engines: transfers that land in the machine's memory (its own, or a
//! peer's window: see [`MemoryMap`]) after a latency.
//!
//! A kernel posts a [`Transfer`]; the engine's own thread lands it when its latency has passed:
//! it copies the words, then applies the [`Signal`], then marks the post landed. Transfers land
//! in order of landing time, not of posting, so a short transfer overtakes a long one; the
//! completion watermark ([`Engine::completed`]) only moves over posts that have all landed.

use std::cmp::{Ordering as CmpOrdering, Reverse};
use std::collections::{BTreeSet, BinaryHeap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::memory::MemoryError;
use crate::memory_map::MemoryMap;

/// Longest delay a transfer waits before landing; longer latencies are cut to this.
const MAX_DELAY: Duration = Duration::from_secs(365 * 24 * 3600);

/// Engine knobs.
#[derive(Clone, Copy, Debug)]
pub struct EngineOptions {
    /// Time from posting to landing, unless the transfer sets its own. Default 2 µs.
    pub latency: Duration,
    /// Extra delay drawn uniformly from `0..=jitter` for each transfer. Default 0.
    pub jitter: Duration,
    /// Seed of the jitter generator (mixed with the engine index).
    pub seed: u64,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            latency: Duration::from_micros(2),
            jitter: Duration::ZERO,
            seed: 0,
        }
    }
}

/// What a landed transfer does after its copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signal {
    /// Nothing.
    None,
    /// Adds `delta` (wrapping) to the 32-bit word at `addr`, with release ordering.
    Add32 {
        /// Device address of the counter (4-aligned).
        addr: u64,
        /// What to add.
        delta: u32,
    },
    /// Adds `delta` (wrapping) to the 64-bit word at `addr`, with release ordering.
    Add64 {
        /// Device address of the counter (8-aligned).
        addr: u64,
        /// What to add.
        delta: u64,
    },
}

/// One posted transfer.
#[derive(Clone, Copy, Debug)]
pub struct Transfer {
    /// Device address of the first source word (8-aligned).
    pub src: u64,
    /// Device address of the first destination word (8-aligned).
    pub dst: u64,
    /// Number of 64-bit words to copy (0: signal only).
    pub words: usize,
    /// What to do after the copy.
    pub signal: Signal,
    /// Latency of this transfer, overriding the engine's.
    pub latency: Option<Duration>,
    /// Fault injection: the transfer never lands and never signals.
    pub lost: bool,
}

impl Transfer {
    /// Copies `words` words from `src` to `dst`, with no signal and the engine's latency.
    pub fn copy(src: u64, dst: u64, words: usize) -> Self {
        Transfer {
            src,
            dst,
            words,
            signal: Signal::None,
            latency: None,
            lost: false,
        }
    }

    /// Only signals, copying nothing.
    pub fn signal_only(signal: Signal) -> Self {
        Transfer::copy(0, 0, 0).signal(signal)
    }

    /// The same transfer, signalling `s` after its copy.
    pub fn signal(self, s: Signal) -> Self {
        Transfer { signal: s, ..self }
    }

    /// The same transfer, landing `latency` after it is posted.
    pub fn after(self, latency: Duration) -> Self {
        Transfer {
            latency: Some(latency),
            ..self
        }
    }

    /// The same transfer, lost: it never lands.
    pub fn lost(self) -> Self {
        Transfer { lost: true, ..self }
    }
}

/// Why a transfer could not be posted or an engine not started.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The transfer names memory it cannot touch; nothing was posted.
    #[error("transfer rejected: {0}")]
    Memory(#[from] MemoryError),
    /// The OS refused the engine thread.
    #[error("could not start the engine thread: {0}")]
    Spawn(#[source] std::io::Error),
    /// The engine thread has stopped.
    #[error("the engine has stopped")]
    Stopped,
    /// A kernel named an engine the machine does not have.
    #[error("engine {engine} does not exist: the machine has {engines} engine(s)")]
    NoSuchEngine {
        /// The engine asked for.
        engine: u32,
        /// Engines of the machine.
        engines: usize,
    },
}

/// A transfer waiting to land, ordered by landing time, then post id.
struct Pending {
    at: Instant,
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
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue {
                heap: BinaryHeap::new(),
                last_id: 0,
                rng: SplitMix(opts.seed ^ index as u64),
                stop: false,
            }),
            wake: Condvar::new(),
            memory,
            completed: AtomicU64::new(0),
            landed: AtomicU64::new(0),
        });
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
    pub fn post(&self, t: Transfer) -> Result<u64, EngineError> {
        self.validate(&t)?;
        let mut q = self.shared.lock();
        if q.stop {
            return Err(EngineError::Stopped);
        }
        q.last_id += 1;
        let id = q.last_id;
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
        let now = Instant::now();
        let at = now.checked_add(delay).unwrap_or(now);
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

    fn validate(&self, t: &Transfer) -> Result<(), MemoryError> {
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

/// The engine thread: sleeps until the earliest landing, a new post or shutdown; lands every
/// transfer that is due, outside the lock.
fn engine_loop(s: &Shared) {
    let mut marks = Watermark::default();
    let mut due = Vec::new();
    let mut q = s.lock();
    loop {
        if q.stop {
            return;
        }
        let now = Instant::now();
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
        q = match q.heap.peek() {
            Some(Reverse(p)) => {
                let wait = p.at.saturating_duration_since(now);
                s.wake
                    .wait_timeout(q, wait)
                    .unwrap_or_else(PoisonError::into_inner)
                    .0
            }
            None => s.wake.wait(q).unwrap_or_else(PoisonError::into_inner),
        };
    }
}

/// Copies, signals, then publishes the landing. Addresses were checked at posting and memory
/// never shrinks, so the accesses cannot fail; if one did, the post would count as lost.
fn land(s: &Shared, p: &Pending, marks: &mut Watermark) {
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
        return;
    }
    s.landed.fetch_add(1, Ordering::Release);
    if let Some(w) = marks.land(p.id) {
        s.completed.store(w, Ordering::Release);
    }
}

/// The engine thread's record of landed post ids.
#[derive(Default)]
struct Watermark {
    /// Every post id up to this one has landed.
    upto: u64,
    /// Landed ids above `upto + 1`.
    ahead: BTreeSet<u64>,
}

impl Watermark {
    /// Records `id` as landed; returns the new watermark if it moved.
    fn land(&mut self, id: u64) -> Option<u64> {
        if id != self.upto + 1 {
            self.ahead.insert(id);
            return None;
        }
        self.upto = id;
        while self.ahead.remove(&(self.upto + 1)) {
            self.upto += 1;
        }
        Some(self.upto)
    }
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
mod tests {
    use super::*;

    const BASE: u64 = 0x2000_0000;
    /// How long a test waits for something that should happen within microseconds.
    const PATIENCE: Duration = Duration::from_secs(5);

    fn setup(opts: EngineOptions) -> (Arc<MemoryMap>, Engine) {
        let m = Arc::new(
            MemoryMap::new(
                Arc::new(crate::memory::DeviceMemory::new(BASE, 4096).unwrap()),
                Vec::new(),
            )
            .unwrap(),
        );
        let e = Engine::start(0, m.clone(), opts).unwrap();
        (m, e)
    }

    /// Polls `cond` until it holds or [`PATIENCE`] runs out; returns whether it held.
    fn eventually(mut cond: impl FnMut() -> bool) -> bool {
        let deadline = Instant::now() + PATIENCE;
        while Instant::now() < deadline {
            if cond() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        cond()
    }

    #[test]
    fn a_transfer_lands_its_data_and_bumps_its_counter() {
        let (m, e) = setup(EngineOptions::default());
        m.write(BASE, &[10, 20, 30]).unwrap();
        let counter = BASE + 1024 + 4;
        let t = Transfer::copy(BASE, BASE + 512, 3).signal(Signal::Add32 {
            addr: counter,
            delta: 1,
        });
        assert_eq!(e.post(t).unwrap(), 1, "first post id");
        assert!(
            eventually(|| m.load32(counter).unwrap() == 1),
            "counter bumped"
        );
        let mut out = [0; 3];
        m.read(BASE + 512, &mut out).unwrap();
        assert_eq!(out, [10, 20, 30], "data visible once the counter is");
        assert!(eventually(|| e.completed() == 1));
        assert_eq!(e.landed(), 1);
        assert_eq!(m.load32(counter - 4).unwrap(), 0, "other half untouched");
    }

    #[test]
    fn a_shorter_later_post_lands_first_and_the_watermark_waits() {
        let (m, e) = setup(EngineOptions::default());
        // Each transfer copies the shared sequence word, then bumps it: what a transfer copied
        // is its place in the landing order.
        let seq = BASE;
        let (slow_at, fast_at) = (BASE + 8, BASE + 16);
        let slow = e
            .post(
                Transfer::copy(seq, slow_at, 1)
                    .signal(Signal::Add64 {
                        addr: seq,
                        delta: 1,
                    })
                    .after(Duration::from_millis(200)),
            )
            .unwrap();
        let fast = e
            .post(
                Transfer::copy(seq, fast_at, 1)
                    .signal(Signal::Add64 {
                        addr: seq,
                        delta: 1,
                    })
                    .after(Duration::ZERO),
            )
            .unwrap();
        assert_eq!((slow, fast), (1, 2));
        assert!(
            eventually(|| {
                // Watermark first: if it covers the slow post, the slow copy is visible.
                let c = e.completed();
                let landed = m.load64(seq).unwrap();
                assert!(
                    c == 0 || landed == 2,
                    "watermark {c} with {landed} landed: it passed an unlanded post"
                );
                c == 2
            }),
            "both land"
        );
        assert_eq!(
            m.load64(fast_at).unwrap(),
            0,
            "the later, shorter post landed first"
        );
        assert_eq!(
            m.load64(slow_at).unwrap(),
            1,
            "the earlier, longer post landed second"
        );
        assert_eq!(e.landed(), 2);
    }

    #[test]
    fn a_lost_transfer_stops_the_watermark_but_not_later_landings() {
        let (m, e) = setup(EngineOptions::default());
        let counter = BASE + 1024;
        let bump = Signal::Add64 {
            addr: counter,
            delta: 1,
        };
        m.write(BASE, &[7]).unwrap();
        let ids: Vec<u64> = [
            Transfer::signal_only(bump),
            Transfer::copy(BASE, BASE + 8, 1).signal(bump).lost(),
            Transfer::signal_only(bump),
            Transfer::signal_only(bump),
        ]
        .into_iter()
        .map(|t| e.post(t).unwrap())
        .collect();
        assert_eq!(ids, [1, 2, 3, 4]);
        assert!(eventually(|| e.landed() == 3), "the three others land");
        assert_eq!(e.completed(), 1, "the watermark stops below the lost post");
        assert_eq!(m.load64(counter).unwrap(), 3, "the lost post never signals");
        assert_eq!(m.load64(BASE + 8).unwrap(), 0, "the lost post never copies");
        assert_eq!(e.post(Transfer::signal_only(bump)).unwrap(), 5);
        assert!(eventually(|| e.landed() == 4));
        assert_eq!(e.completed(), 1, "still stuck below the lost post");
    }

    #[test]
    fn dropping_an_engine_with_pending_transfers_returns_promptly() {
        let (m, e) = setup(EngineOptions::default());
        m.write(BASE, &[5]).unwrap();
        for _ in 0..100 {
            e.post(Transfer::copy(BASE, BASE + 8, 1).after(Duration::from_secs(3600)))
                .unwrap();
        }
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            drop(e);
            let _ = tx.send(());
        });
        assert!(rx.recv_timeout(PATIENCE).is_ok(), "drop did not return");
        assert_eq!(
            m.load64(BASE + 8).unwrap(),
            0,
            "pending transfers are dropped"
        );
    }

    #[test]
    fn a_bad_address_is_refused_and_posts_nothing() {
        let (_m, e) = setup(EngineOptions::default());
        let end = BASE + 4096;
        assert!(matches!(
            e.post(Transfer::copy(end, BASE, 1)),
            Err(EngineError::Memory(MemoryError::OutOfRange { addr, len: 8 })) if addr == end
        ));
        assert!(matches!(
            e.post(Transfer::copy(BASE, BASE + 4, 1)),
            Err(EngineError::Memory(MemoryError::Misaligned {
                align: 8,
                ..
            }))
        ));
        assert!(matches!(
            e.post(Transfer::copy(BASE, end - 8, 2)),
            Err(EngineError::Memory(MemoryError::OutOfRange { .. }))
        ));
        assert!(matches!(
            e.post(Transfer::signal_only(Signal::Add32 {
                addr: BASE + 2,
                delta: 1
            })),
            Err(EngineError::Memory(MemoryError::Misaligned {
                align: 4,
                ..
            }))
        ));
        assert!(e.post(Transfer::copy(BASE, BASE, usize::MAX)).is_err());
        assert_eq!(
            e.post(Transfer::copy(BASE, BASE + 8, 1)).unwrap(),
            1,
            "no id was used"
        );
        assert!(eventually(|| e.completed() == 1));
    }

    #[test]
    fn jittered_transfers_all_land_and_the_watermark_reaches_the_last() {
        let opts = EngineOptions {
            latency: Duration::from_micros(10),
            jitter: Duration::from_micros(200),
            seed: 42,
        };
        let (m, e) = setup(opts);
        let counter = BASE + 2048;
        for i in 0..50u64 {
            m.store64(BASE + 8 * i, i + 1).unwrap();
            let t = Transfer::copy(BASE + 8 * i, BASE + 1024 + 8 * i, 1).signal(Signal::Add32 {
                addr: counter,
                delta: 1,
            });
            assert_eq!(e.post(t).unwrap(), i + 1);
        }
        assert!(eventually(|| e.completed() == 50), "watermark reaches 50");
        assert_eq!((e.landed(), m.load32(counter).unwrap()), (50, 50));
        let mut out = [0; 50];
        m.read(BASE + 1024, &mut out).unwrap();
        assert!(out.iter().enumerate().all(|(i, &v)| v == i as u64 + 1));
    }

    #[test]
    fn the_watermark_moves_over_contiguous_ids_only() {
        let mut w = Watermark::default();
        assert_eq!(w.land(2), None);
        assert_eq!(w.land(4), None);
        assert_eq!(w.land(1), Some(2));
        assert_eq!(w.land(3), Some(4));
        assert!(w.ahead.is_empty(), "nothing left out of order");
    }
}
