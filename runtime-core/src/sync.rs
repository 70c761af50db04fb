//! The only place atomics are imported from, so loom sees the same code as the device; and the
//! cache-line padding the shared words sit in.
//!
//! Public so that the crates above (`pto-device-sys`) build their lock-free protocols on the
//! same types: under `cfg(loom)` these are loom's, and those protocols' loom models run the
//! code the device runs.
#![forbid(unsafe_code)]

#[cfg(not(loom))]
pub use core::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, Ordering, fence};
#[cfg(loom)]
pub use loom::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, Ordering, fence};

/// A hint inside a spin loop. Under loom it yields, so the model checker can run the thread
/// that the loop is waiting for.
#[inline]
pub fn spin_loop() {
    #[cfg(not(loom))]
    core::hint::spin_loop();
    #[cfg(loom)]
    loom::thread::yield_now();
}

/// A word alone on its cache line (threads that write neighbouring words do not share a line).
#[repr(C, align(64))]
pub(crate) struct CachePadded<T>(pub(crate) T);
