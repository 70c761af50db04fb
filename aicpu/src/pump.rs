//! The record pump: with a record stream (`PtoAicpuExecArgs::record_stream`), one more exec
//! thread takes task records out of the profile ring while the run goes
//! (`pto_runtime_core::RecordDrain`) and writes them into the host's ring, which the host
//! empties as the run goes (`PtoRecordStream`). So a run keeps a record per task however
//! many tasks it has: a full profile ring makes submits wait for the pump, and a full host
//! ring makes the pump wait for the host, bounded by the stream's `wait_us`; past that the
//! pump counts the records it could not keep (reported, never silent) and drops the rest at
//! once until the host moves again.

use core::sync::atomic::Ordering;

use pto_device_sys::raw::arch;
use pto_runtime_core::TaskRecord;
use pto_runtime_core::ffi::PtoRecord;

use crate::raw::record_ring::RecordRing;
use crate::run::Run;

/// Records written before the pump publishes them, so the host sees progress while the pump
/// goes through a long drain.
const PUBLISH_EVERY: u64 = 256;

/// The pump's part in `run`: drains until every scheduler has stopped, then takes the rest.
pub(crate) fn pump(run: &Run) {
    let taken = run.drain.lock().take();
    let (Some(mut drain), Some(ring)) = (taken, RecordRing::of(&run.args)) else {
        return;
    };
    let mut out = Outlet::new(ring, run);
    loop {
        // Read before the drain: once no scheduler runs, that drain sees every record.
        let over = run.schedulers_left.load(Ordering::Acquire) == 0;
        drain.drain(|r| out.push(r));
        out.publish();
        if over {
            break;
        }
        crate::raw::cpu::idle();
    }
    drain.finish(|r| out.push(r));
    out.close();
    run.pumped.store(out.produced, Ordering::Relaxed);
    run.pump_lost.store(out.lost, Ordering::Relaxed);
}

/// The writing end of the host's ring.
struct Outlet {
    ring: RecordRing,
    /// Records written, and published so far.
    produced: u64,
    published: u64,
    /// Records the host had taken when last read.
    collected: u64,
    lost: u64,
    /// The host's count when the pump last gave up waiting: until it moves, records are
    /// lost at once.
    stalled_at: Option<u64>,
    wait_ticks: u64,
}

impl Outlet {
    fn new(ring: RecordRing, run: &Run) -> Self {
        let wait_ticks = ring.wait_us().saturating_mul(run.settings.ticks_per_us);
        Outlet {
            ring,
            produced: 0,
            published: 0,
            collected: 0,
            lost: 0,
            stalled_at: None,
            wait_ticks,
        }
    }

    /// Writes `r` as the next record, once the host has room for it (bounded).
    fn push(&mut self, r: TaskRecord) {
        if !self.room() {
            self.lost += 1;
            return;
        }
        self.ring.write(self.produced, PtoRecord::from_record(&r));
        self.produced += 1;
        if self.produced - self.published >= PUBLISH_EVERY {
            self.publish();
        }
    }

    /// Whether the host's ring has room for the next record, waiting for the host (bounded;
    /// not at all while it has not moved since the last wait gave up).
    fn room(&mut self) -> bool {
        let cap = self.ring.capacity();
        if self.produced < self.collected + cap {
            return true;
        }
        self.collected = self.ring.collected();
        if self.produced < self.collected + cap {
            self.stalled_at = None;
            return true;
        }
        if self.stalled_at == Some(self.collected) {
            return false;
        }
        // The host can only take what it was told of.
        self.publish();
        let start = arch::counter();
        loop {
            self.collected = self.ring.collected();
            if self.produced < self.collected + cap {
                self.stalled_at = None;
                return true;
            }
            if arch::counter().wrapping_sub(start) > self.wait_ticks {
                self.stalled_at = Some(self.collected);
                return false;
            }
            crate::raw::cpu::idle();
        }
    }

    fn publish(&mut self) {
        if self.produced != self.published {
            self.ring.publish(self.published, self.produced);
            self.published = self.produced;
        }
    }

    fn close(&mut self) {
        self.publish();
        self.ring.close(self.lost);
    }
}
