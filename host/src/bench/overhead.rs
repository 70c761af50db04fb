//! The overhead shares of a scene's run (`pto_trace::overhead_shares`, which a trace's
//! reader computes alike), and the producers they need, from the dependency graph the
//! bench recorded.

use pto_runtime_core::TaskId;
use pto_sim::DepGraph;

pub use pto_trace::{OverheadShares, overhead_shares};

/// Each task of `graph` in submission order, with its producers.
pub fn producers_of(graph: &DepGraph) -> Vec<(TaskId, Vec<TaskId>)> {
    graph
        .tasks()
        .iter()
        .map(|t| (t.id, t.deps.iter().map(|d| d.producer).collect()))
        .collect()
}
