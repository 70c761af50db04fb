//! Tensor descriptors, the words the orchestrator, the platform and the scheduler share: a
//! tile of memory and how tiles overlap ([`tile`]), a tensor argument and the descriptor a
//! kernel receives ([`arg`]), and element types ([`dtype`]).

pub(crate) mod arg;
pub(crate) mod dtype;
pub(crate) mod tile;

#[cfg(all(test, not(loom)))]
mod tile_tests;
