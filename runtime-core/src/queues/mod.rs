//! The lock-free rings between threads: the generic sequenced ring, the ready queues (one
//! per worker class, orchestrator and schedulers push, schedulers pop) and the completion
//! queues (cores and engines push, the owning scheduler pops).
#![forbid(unsafe_code)]

pub(crate) mod completion_queue;
pub(crate) mod ready_queue;
pub(crate) mod seq_ring;

#[cfg(all(test, loom))]
mod loom_ready_queue;
