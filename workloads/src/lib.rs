//! pto-workloads: the DAG builders of the example workloads, and the bench's scenes built
//! from them.
//!
//! A builder submits a workload's tasks through a [`Submitter`] (which can also record the
//! dependencies the orchestrator wired): [`gemm::submit_tiled_gemm`] a blocked matrix
//! multiply, [`attention::submit_paged_attention`] the decode-phase attention over a paged KV
//! cache, [`decode_layer::submit_decode_layer`] a transformer decode layer built from both.
//! Every dependency of every builder comes from tensor arguments, found by the runtime's
//! tensor map. The builders name kernel ids only: the examples register kernels that compute
//! (and check their results against plain Rust), the bench's [`scene::Scene`]s register
//! no-op kernels the silicon cost model gives chip-like durations.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod attention;
pub mod decode_layer;
mod error;
pub mod gemm;
pub mod graph;
pub mod moe;
pub mod scene;
mod submitter;

pub use error::BuildError;
pub use submitter::Submitter;

use pto_runtime_core::{Buffer, Tile};

/// `n` elements of `elem` bytes from element `at` of `b`.
pub fn span(b: Buffer, elem: u32, at: usize, n: usize) -> Tile {
    Tile::contiguous(b.at((at * elem as usize) as u64), elem, n as u32)
}

/// All of `b`, in elements of `elem` bytes.
pub fn whole(b: Buffer, elem: u32) -> Tile {
    Tile::contiguous(b.base, elem, (b.len / elem as u64) as u32)
}
