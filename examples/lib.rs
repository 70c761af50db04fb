//! pto-examples: workloads of the PTO runtime on the simulator, each a single file that checks
//! its own result against plain Rust.
//!
//! - `vector_add.rs`: the minimal program, two kernels and a handful of tasks
//!   (`cargo run --example vector_add`).
//! - `tiled_gemm.rs`: a blocked matrix multiply with K-loop accumulation on cube cores and a
//!   vector epilogue, every dependency found through tensor arguments
//!   (`cargo run --example tiled_gemm`).
//!
//! - `paged_attention.rs`: the decode-phase DAG of attention over a paged KV cache (per-block
//!   QK, softmax, PV and an online-softmax merge per head, a scope per layer, intermediates
//!   from the output heap; `cargo run --example paged_attention [-- --deps FILE.dot]`).
//! - `ring_allreduce.rs`: ranks putting chunks into their neighbour's window, consumers
//!   waiting through deferred completion (`cargo run --example ring_allreduce`).
//!
//! `tiled_gemm` and `paged_attention` build their DAGs with `pto-workloads` (whose builders the
//! bench's scenes use too) and keep their kernels and checks here.
//!
//! Each takes `--trace FILE.json` to write a Chrome trace of its run (open it in Perfetto).
//! `cargo test -p pto-examples` runs every example and checks its result.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

use std::path::PathBuf;

/// The file after `--trace` on the command line, if any.
pub fn trace_arg() -> Option<PathBuf> {
    path_after("--trace")
}

/// The file after `--deps` on the command line, if any (the examples that record their
/// dependency graph write it there: JSON if it ends in `.json`, Graphviz DOT otherwise).
pub fn deps_arg() -> Option<PathBuf> {
    path_after("--deps")
}

fn path_after(flag: &str) -> Option<PathBuf> {
    let mut args = std::env::args_os().skip_while(|a| a != flag);
    args.next()?;
    args.next().map(PathBuf::from)
}
