//! Multi-rank support the device side uses: the communication context kernels read and the
//! shared-memory barrier.
#![forbid(unsafe_code)]

pub(crate) mod barrier;
pub(crate) mod context;

#[cfg(all(test, loom))]
mod loom_barrier;
