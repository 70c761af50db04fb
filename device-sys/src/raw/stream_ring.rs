//! A stream to the host in device memory (`crate::abi::PtoRecordStream` and its ring) as
//! the safe [`RecordWindow`] a [`crate::chip::RecordOutlet`] writes through: the control
//! block's words as atomics, the ring's entries written whole, cache lines written back
//! where the AICPU maintains its caches.

use core::marker::PhantomData;
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use crate::abi::PtoRecordStream;
use crate::chip::RecordWindow;
use crate::raw::arch;

/// A stream's control block and ring of `T`.
pub struct StreamRing<T> {
    ctl: &'static StreamWords,
    ring: *mut T,
    cap: u64,
    manual: bool,
    idle: Option<fn()>,
    _entries: PhantomData<T>,
}

/// [`PtoRecordStream`]'s words as the writer touches them (same layout).
#[repr(C, align(64))]
struct StreamWords {
    produced: AtomicU64,
    lost: AtomicU64,
    done: AtomicU32,
    reserved: u32,
    wait_us: AtomicU64,
    pad: [u64; 4],
    collected: AtomicU64,
    pad2: [u64; 7],
}

const _: () = {
    assert!(size_of::<StreamWords>() == size_of::<PtoRecordStream>());
    assert!(core::mem::offset_of!(StreamWords, collected) == PtoRecordStream::COLLECTED);
    assert!(core::mem::offset_of!(StreamWords, produced) == PtoRecordStream::PRODUCED);
};

impl<T: Copy> StreamRing<T> {
    /// The stream whose control block is at `ctl` and whose ring of `cap` entries is at
    /// `ring`, written back when `manual`; `None` if either is null or `cap` is 0.
    ///
    /// # Safety
    ///
    /// `ctl`, when not null, is 64-byte aligned and names a [`PtoRecordStream`] that lives
    /// for the rest of the process and that nothing else writes but the host's 8-byte
    /// copies of `collected` (and its reads); `ring` names `cap` entries of `T` that only
    /// this writer writes, and the host reads only below the published count. Only one
    /// `StreamRing` is made per block at a time.
    pub unsafe fn new(ctl: u64, ring: u64, cap: u32, manual: bool) -> Option<Self> {
        if ctl == 0 || ring == 0 || cap == 0 {
            return None;
        }
        // SAFETY: non-null and aligned, lives on, shared only through atomics (the
        // caller's contract).
        let ctl = unsafe { &*(ctl as usize as *const StreamWords) };
        Some(StreamRing {
            ctl,
            ring: ring as usize as *mut T,
            cap: u64::from(cap),
            manual,
            idle: None,
            _entries: PhantomData,
        })
    }

    /// Waits for the host with `idle` (a yield, where threads share CPUs) besides a
    /// spin-loop hint.
    pub fn with_idle(mut self, idle: Option<fn()>) -> Self {
        self.idle = idle;
        self
    }

    /// How long the host asked the writer to wait for it, µs.
    pub fn wait_us(&self) -> u64 {
        match self.ctl.wait_us.load(Ordering::Relaxed) {
            0 => PtoRecordStream::DEFAULT_WAIT_US,
            w => w,
        }
    }

    fn clean_ctl(&self) {
        if self.manual {
            arch::clean(self.ctl as *const StreamWords as usize, 64);
        }
    }
}

impl<T: Copy> RecordWindow for StreamRing<T> {
    type Entry = T;

    fn capacity(&self) -> u64 {
        self.cap
    }

    fn collected(&self) -> u64 {
        if self.manual {
            arch::clean_invalidate(&self.ctl.collected as *const AtomicU64 as usize, 8);
        }
        self.ctl.collected.load(Ordering::Acquire)
    }

    fn write(&self, i: u64, r: &T) {
        let p = self.ring.wrapping_add((i % self.cap) as usize);
        // SAFETY: the ring has `cap` entries only this writer writes (`new`'s contract);
        // entry `i % cap` is the writer's until it publishes `produced > i`, and the host
        // has taken what was there before (the outlet's check). Written bytewise if the
        // ring is unaligned.
        unsafe { p.write_unaligned(*r) };
    }

    fn publish(&self, from: u64, to: u64) {
        if self.manual {
            for i in from..to {
                let at = self.ring.wrapping_add((i % self.cap) as usize) as usize;
                arch::clean(at, size_of::<T>());
            }
        }
        self.ctl.produced.store(to, Ordering::Release);
        self.clean_ctl();
    }

    fn close(&self, lost: u64) {
        self.ctl.lost.store(lost, Ordering::Relaxed);
        self.ctl.done.store(1, Ordering::Release);
        self.clean_ctl();
    }

    fn now(&self) -> u64 {
        arch::counter()
    }

    fn idle(&self) {
        core::hint::spin_loop();
        if let Some(f) = self.idle {
            f();
        }
    }
}

// SAFETY: the ring's pointer is written by one writer at a time (`new`'s contract; a
// stream's outlet moves between threads whole, behind a lock); the block's words are
// atomics.
unsafe impl<T: Send> Send for StreamRing<T> {}
