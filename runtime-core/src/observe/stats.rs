//! Per-scheduler counters and the ready-to-complete latency histogram.
#![forbid(unsafe_code)]

use crate::observe::profile::{PHASES, PhaseCounters};
use crate::sync::{AtomicU64, Ordering};

/// Buckets of a [`LatencyHistogram`]: exact below 16, then 8 sub-buckets per power of two.
pub const LATENCY_BUCKETS: usize = 16 + 60 * 8;

/// Log-linear histogram of latencies in clock ticks (relative error below 12.5 %).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct LatencyHistogram {
    counts: [u64; LATENCY_BUCKETS],
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        LatencyHistogram {
            counts: [0; LATENCY_BUCKETS],
        }
    }
}

/// The bucket a value falls in.
pub(crate) fn bucket_of(v: u64) -> usize {
    if v < 16 {
        return v as usize;
    }
    let msb = 63 - v.leading_zeros() as usize; // >= 4
    let sub = ((v >> (msb - 3)) & 7) as usize;
    16 + (msb - 4) * 8 + sub
}

/// The smallest value of a bucket.
fn bucket_floor(b: usize) -> u64 {
    if b < 16 {
        return b as u64;
    }
    let msb = (b - 16) / 8 + 4;
    let sub = ((b - 16) % 8) as u64;
    (8 + sub) << (msb - 3)
}

impl LatencyHistogram {
    /// Number of samples.
    pub fn count(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// Adds one sample.
    pub fn record(&mut self, ticks: u64) {
        self.counts[bucket_of(ticks)] += 1;
    }

    /// Adds every sample of `other`.
    pub fn merge(&mut self, other: &LatencyHistogram) {
        for (a, b) in self.counts.iter_mut().zip(other.counts.iter()) {
            *a += b;
        }
    }

    /// The value at quantile `q` (0.0..=1.0), as the floor of its bucket; `None` if empty.
    pub fn quantile(&self, q: f64) -> Option<u64> {
        let total = self.count();
        if total == 0 {
            return None;
        }
        let rank = ((q.clamp(0.0, 1.0) * total as f64) as u64).clamp(1, total);
        let mut seen = 0;
        for (b, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Some(bucket_floor(b));
            }
        }
        None
    }
}

/// One scheduler's block in the region: written by that scheduler only, read by anyone.
#[repr(C, align(64))]
pub(crate) struct SchedCtl {
    /// Tasks this scheduler finished (every kind).
    pub(crate) finished: AtomicU64,
    /// Dispatches (one per lane).
    pub(crate) dispatched: AtomicU64,
    /// Loop iterations.
    pub(crate) loops: AtomicU64,
    /// Ready-to-complete latencies, when recording is on.
    pub(crate) latency: [AtomicU64; LATENCY_BUCKETS],
    /// Ticks per loop phase, when profiling is at least `Counters`.
    pub(crate) phases: [AtomicU64; PHASES],
    /// Loop iterations the phases cover.
    pub(crate) phase_loops: AtomicU64,
    /// Tasks this scheduler finished cancelled.
    pub(crate) cancelled: AtomicU64,
    /// Tasks this scheduler skipped: their predicate was false at dispatch.
    pub(crate) skipped: AtomicU64,
    /// Error entries drained from engine queues.
    pub(crate) transfer_failures: AtomicU64,
    /// The cores' completion queue (ring mode), when profiling is at least `Counters`.
    pub(crate) cores_queue: QueueStats,
    /// The engine queues, together, when profiling is at least `Counters`.
    pub(crate) engine_queues: QueueStats,
}

/// Drain statistics of a completion queue, in a scheduler's block.
pub(crate) struct QueueStats {
    /// Drains that found at least one record.
    pub(crate) drains: AtomicU64,
    /// Records drained.
    pub(crate) entries: AtomicU64,
    /// Most records one drain took.
    pub(crate) max_batch: AtomicU64,
    /// Most records the queue held when a drain began.
    pub(crate) high_water: AtomicU64,
}

impl QueueStats {
    fn new() -> Self {
        QueueStats {
            drains: AtomicU64::new(0),
            entries: AtomicU64::new(0),
            max_batch: AtomicU64::new(0),
            high_water: AtomicU64::new(0),
        }
    }

    /// Counts a drain that found `depth` records queued and took `batch` of them (the
    /// owning scheduler only).
    #[inline]
    pub(crate) fn drained(&self, depth: u64, batch: u64) {
        if batch > 0 {
            SchedCtl::bump(&self.drains, 1);
            SchedCtl::bump(&self.entries, batch);
        }
        SchedCtl::raise(&self.max_batch, batch);
        SchedCtl::raise(&self.high_water, depth);
    }

    pub(crate) fn read(&self) -> QueueCounters {
        let v = |a: &AtomicU64| a.load(Ordering::Relaxed);
        QueueCounters {
            drains: v(&self.drains),
            entries: v(&self.entries),
            max_batch: v(&self.max_batch),
            high_water: v(&self.high_water),
        }
    }
}

/// How one scheduler drained a kind of completion queue (profiling at `Counters` or more).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct QueueCounters {
    /// Drains that found at least one record.
    pub drains: u64,
    /// Records drained (the mean batch is `entries / drains`).
    pub entries: u64,
    /// Most records one drain took.
    pub max_batch: u64,
    /// Depth high-water: most records the queue held when a drain began.
    pub high_water: u64,
}

/// One scheduler's completion-queue and cancellation counters.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct QueueReport {
    /// The cores' completion queue ([`crate::CompletionMode::Ring`]).
    pub cores: QueueCounters,
    /// The engine completion queues, together.
    pub engines: QueueCounters,
    /// Error entries of failed transfers drained (counted at every profiling level).
    pub transfer_failures: u64,
    /// Tasks finished cancelled (counted at every profiling level).
    pub cancelled: u64,
}

impl SchedCtl {
    pub(crate) fn new() -> Self {
        SchedCtl {
            finished: AtomicU64::new(0),
            dispatched: AtomicU64::new(0),
            loops: AtomicU64::new(0),
            latency: core::array::from_fn(|_| AtomicU64::new(0)),
            phases: core::array::from_fn(|_| AtomicU64::new(0)),
            phase_loops: AtomicU64::new(0),
            cancelled: AtomicU64::new(0),
            skipped: AtomicU64::new(0),
            transfer_failures: AtomicU64::new(0),
            cores_queue: QueueStats::new(),
            engine_queues: QueueStats::new(),
        }
    }

    /// Raises a maximum that only this scheduler writes.
    #[inline]
    pub(crate) fn raise(counter: &AtomicU64, v: u64) {
        if v > counter.load(Ordering::Relaxed) {
            counter.store(v, Ordering::Relaxed);
        }
    }

    pub(crate) fn queue_report(&self) -> QueueReport {
        QueueReport {
            cores: self.cores_queue.read(),
            engines: self.engine_queues.read(),
            transfer_failures: self.transfer_failures.load(Ordering::Relaxed),
            cancelled: self.cancelled.load(Ordering::Relaxed),
        }
    }

    /// Adds `n` to a counter that only this scheduler writes (a load and a store, no RMW).
    #[inline]
    pub(crate) fn bump(counter: &AtomicU64, n: u64) {
        counter.store(counter.load(Ordering::Relaxed) + n, Ordering::Relaxed);
    }

    pub(crate) fn phase_counters(&self) -> PhaseCounters {
        let ticks: [u64; PHASES] = core::array::from_fn(|i| self.phases[i].load(Ordering::Relaxed));
        PhaseCounters {
            ticks,
            total: ticks.iter().sum(),
            loops: self.phase_loops.load(Ordering::Relaxed),
        }
    }

    pub(crate) fn histogram(&self) -> LatencyHistogram {
        let mut h = LatencyHistogram::default();
        for (c, a) in h.counts.iter_mut().zip(self.latency.iter()) {
            *c = a.load(Ordering::Relaxed);
        }
        h
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_monotonic_and_floors_round_trip() {
        let mut last = 0;
        let n = if cfg!(miri) { 3_000u64 } else { 100_000 };
        for v in (0..n).chain([u64::MAX / 3, u64::MAX]) {
            let b = bucket_of(v);
            assert!(b >= last && b < LATENCY_BUCKETS);
            assert!(bucket_floor(b) <= v);
            assert_eq!(bucket_of(bucket_floor(b)), b);
            last = b;
        }
    }

    #[test]
    fn quantiles_pick_the_right_bucket() {
        let mut h = LatencyHistogram::default();
        for v in 1..=100 {
            h.record(v * 100);
        }
        let p50 = h.quantile(0.5).unwrap();
        assert!((4400..=5000).contains(&p50), "{p50}");
        let p99 = h.quantile(0.99).unwrap();
        assert!((8900..=9900).contains(&p99), "{p99}");
        assert_eq!(LatencyHistogram::default().quantile(0.5), None);
    }
}
