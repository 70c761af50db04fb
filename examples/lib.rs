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
//! - `half_precision.rs`: an f16 matrix multiply accumulated in f32 and a row softmax stored
//!   as bf16, through tensor views, checked against plain Rust in f32 with
//!   `pto_sim::expect_close` (`cargo run --example half_precision`).
//!
//! `tiled_gemm` and `paged_attention` build their DAGs with `pto-workloads` (whose builders the
//! bench's scenes use too) and keep their kernels and checks here.
//!
//! Each takes `--trace FILE.json` to write a Chrome trace of its run (open it in Perfetto),
//! and says on stderr if the trace misses tasks (`SimRun::missing_records`). An example that
//! fails prints its error's message (`error: ...`) and exits non-zero ([`finish`]).
//! `cargo test -p pto-examples` runs every example and checks its result.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

use std::fmt::Display;
use std::path::PathBuf;
use std::process::ExitCode;

/// What an example's `main` returns for `result`: success, or the error's message on stderr
/// (`error: ...`, all of it: a failed run's message ends with its stall report) and a failing
/// exit code. (`main` returning the `Result` itself would print the error's `Debug` form.)
///
/// ```
/// use std::process::ExitCode;
///
/// fn run() -> Result<(), String> {
///     Err("the sum is off".into())
/// }
///
/// // An example's `main` is `pto_examples::finish(run())`.
/// assert_eq!(pto_examples::finish(run()), ExitCode::FAILURE); // stderr: "error: the sum is off"
/// assert_eq!(pto_examples::finish(Ok::<(), String>(())), ExitCode::SUCCESS);
/// ```
pub fn finish<E: Display>(result: Result<(), E>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

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
