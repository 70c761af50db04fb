//! The writing end of a stream to the host (`crate::abi::PtoRecordStream`, the control block
//! of both the task records' stream and the producers' stream): the AICPU's record pump
//! hands each task record it drains to a [`RecordOutlet`] (the orchestrator each task's
//! producers, `super::producer_stream`), which writes it into the host's ring once the host
//! has room for it, publishes what it wrote in batches, and counts what it could not keep.
//!
//! The protocol, a single-producer single-consumer ring across the device and the host:
//! record `i` goes into entry `i % capacity`, written only once the host's count
//! (`collected`, read with Acquire) is past `i - capacity`; the pump's count (`produced`,
//! stored with Release after the entries) tells the host what it may read. When the host
//! falls behind, the outlet waits for it, bounded; past the bound the record is lost and
//! counted, and later records are lost at once until the host's count moves, so a host
//! that stopped costs the run one bound. A loom model drives it against a host
//! (`loom_record_outlet.rs`).
#![forbid(unsafe_code)]

/// Entries written before the outlet publishes them, so the host sees progress during a
/// long drain.
pub const PUBLISH_EVERY: u64 = 256;

/// The memory of a stream as the outlet uses it: the host's ring of entries and the two
/// counts of its control block, and a clock for the bounded wait.
pub trait RecordWindow {
    /// What the ring holds (`PtoRecord`, `PtoProducers`).
    type Entry: Copy;
    /// Entries of the ring (at least 1).
    fn capacity(&self) -> u64;
    /// Records the host has taken (an Acquire read of the host's count).
    fn collected(&self) -> u64;
    /// Writes record number `i` into entry `i % capacity` (the outlet checked the host
    /// took what was there).
    fn write(&self, i: u64, r: &Self::Entry);
    /// Makes records `from..to` visible to the host, then says `to` were written (a
    /// Release store of the pump's count).
    fn publish(&self, from: u64, to: u64);
    /// The pump's last word: `lost` records it could not keep, then that it is done.
    fn close(&self, lost: u64);
    /// A clock (any unit `wait` is in).
    fn now(&self) -> u64;
    /// One step of a wait for the host.
    fn idle(&self);
}

/// The writing end of a record stream over `W`.
pub struct RecordOutlet<W: RecordWindow> {
    window: W,
    /// Records written, and published so far.
    produced: u64,
    published: u64,
    /// The host's count when last read.
    collected: u64,
    lost: u64,
    /// The host's count when the outlet last gave up waiting for it.
    stalled_at: Option<u64>,
    /// How long to wait for the host, in the window's clock.
    wait: u64,
}

impl<W: RecordWindow> RecordOutlet<W> {
    /// The outlet of `window`, waiting at most `wait` (in the window's clock) for the host.
    pub fn new(window: W, wait: u64) -> Self {
        RecordOutlet {
            window,
            produced: 0,
            published: 0,
            collected: 0,
            lost: 0,
            stalled_at: None,
            wait,
        }
    }

    /// Writes `r` as the next record once the host has room for it (bounded; see the
    /// module), or counts it lost.
    pub fn push(&mut self, r: &W::Entry) {
        if !self.room() {
            self.lost += 1;
            return;
        }
        self.window.write(self.produced, r);
        self.produced += 1;
        if self.produced - self.published >= PUBLISH_EVERY {
            self.publish();
        }
    }

    /// Publishes every record written so far.
    pub fn publish(&mut self) {
        if self.produced != self.published {
            self.window.publish(self.published, self.produced);
            self.published = self.produced;
        }
    }

    /// Publishes the rest and closes the stream: (records written, records lost).
    pub fn close(mut self) -> (u64, u64) {
        self.publish();
        self.window.close(self.lost);
        (self.produced, self.lost)
    }

    /// Whether the next record has room, waiting for the host (bounded; not at all while
    /// its count has not moved since the last wait gave up).
    fn room(&mut self) -> bool {
        let cap = self.window.capacity();
        if self.produced < self.collected + cap {
            return true;
        }
        self.collected = self.window.collected();
        if self.produced < self.collected + cap {
            self.stalled_at = None;
            return true;
        }
        if self.stalled_at == Some(self.collected) {
            return false;
        }
        // The host can only take what it was told of.
        self.publish();
        let start = self.window.now();
        loop {
            self.collected = self.window.collected();
            if self.produced < self.collected + cap {
                self.stalled_at = None;
                return true;
            }
            if self.window.now().wrapping_sub(start) > self.wait {
                self.stalled_at = Some(self.collected);
                return false;
            }
            self.window.idle();
        }
    }
}
