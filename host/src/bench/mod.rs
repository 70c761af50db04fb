//! `pto-launch bench`: runs a synthetic DAG on the simulator and reports the scheduler's speed.

mod barrier;
mod bootstrap;
mod deps;
mod report;
mod transport;
mod workload;

pub use barrier::{BarrierResult, run_barrier_bench};
pub use bootstrap::{BootstrapResult, run_bootstrap_bench};
pub use deps::{bench_deps, write_bench_deps};
pub use report::{BenchOutcome, BenchResult, run_bench};
pub use transport::{TransportResult, run_transport_bench};
pub use workload::{BenchError, BenchPlan, Workload, bench_kernels, submit_workload};
