//! The only place atomics are imported from, so loom sees the same code as the device.
#![forbid(unsafe_code)]

#[cfg(not(loom))]
pub(crate) use core::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, Ordering, fence};
#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, Ordering, fence};

/// A hint inside a spin loop. Under loom it yields, so the model checker can run the thread
/// that the loop is waiting for.
#[inline]
pub(crate) fn spin_loop() {
    #[cfg(not(loom))]
    core::hint::spin_loop();
    #[cfg(loom)]
    loom::thread::yield_now();
}
