//! pto-examples: workloads of the PTO runtime on the simulator, each a single file that checks
//! its own result against plain Rust.
//!
//! - `vector_add.rs`: the minimal program, two kernels and a handful of tasks
//!   (`cargo run --example vector_add`).
//! - `tiled_gemm.rs`: a blocked matrix multiply with K-loop accumulation on cube cores and a
//!   vector epilogue, every dependency found through tensor arguments
//!   (`cargo run --example tiled_gemm`).
//!
//! Each takes `--trace FILE.json` to write a Chrome trace of its run (open it in Perfetto).
//! `cargo test -p pto-examples` runs every example and checks its result.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

use std::path::PathBuf;

/// The file after `--trace` on the command line, if any.
pub fn trace_arg() -> Option<PathBuf> {
    let mut args = std::env::args_os().skip_while(|a| a != "--trace");
    args.next()?;
    args.next().map(PathBuf::from)
}
