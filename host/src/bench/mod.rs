//! `pto-launch bench`: runs a synthetic DAG on the simulator and reports the scheduler's speed
//! (or times the communicator's barrier, the TCP bootstrap or the TCP transport).

mod barrier;
mod bootstrap;
mod calibrate;
mod deps;
mod options;
mod overhead;
mod report;
mod transport;
mod workload;

pub use barrier::{BarrierResult, run_barrier_bench};
pub use bootstrap::{BootstrapResult, run_bootstrap_bench};
pub use calibrate::{CalibrationResult, run_calibration};
pub use deps::{bench_deps, write_bench_deps};
pub use options::{BenchOptions, BenchOutput, MAX_PENDING};
pub use overhead::{OverheadShares, overhead_shares, producers_of};
pub use report::{
    BenchOutcome, BenchResult, HostFidelity, ON_CPU_AT_LEAST, run_bench, run_bench_with,
};
pub use transport::{TransportResult, run_transport_bench};
pub use workload::{BenchError, BenchPlan, Workload, bench_kernels, submit_workload};
