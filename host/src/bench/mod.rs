//! `pto-launch bench`: runs a synthetic DAG on the simulator and reports the scheduler's speed.

mod barrier;
mod report;
mod workload;

pub use barrier::{BarrierResult, run_barrier_bench};
pub use report::{BenchOutcome, BenchResult, run_bench};
pub use workload::{BenchError, BenchPlan, Workload, submit_workload};
