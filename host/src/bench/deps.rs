//! `pto-launch bench --deps FILE`: one more run of the workload, unmeasured, recording the
//! dependencies the orchestrator wired ([`pto_sim::DepGraph`]), written as DOT or JSON.

use std::path::Path;

use pto_runtime_core::Config;
use pto_sim::{DepGraph, SimOptions, run};

use pto_workloads::Submitter;
use pto_workloads::scene::SceneSize;

use super::workload::{BenchError, BenchPlan, Workload, submit_workload};

/// Runs `plan` once on `cfg` and `sim`, recording every task's dependencies, and returns
/// the graph (see [`write_bench_deps`] to write it).
pub fn bench_deps(cfg: Config, sim: SimOptions, plan: &BenchPlan) -> Result<DepGraph, BenchError> {
    let out = run(cfg, plan.workload.kernels(), sim, |o| {
        if let Workload::Scene(s) = plan.workload {
            let mut sub = Submitter::recording();
            s.submit(SceneSize::Full, &mut sub, o)?;
            return Ok(sub.into_graph().unwrap_or_default());
        }
        let counter = o.platform().memory().alloc(8, 8).map_err(|e| {
            o.abort(1);
            BenchError::Usage(format!("no device memory for the counter: {e}"))
        })?;
        let mut graph = DepGraph::new();
        submit_workload(&cfg, plan, counter, |spec| graph.submit(o, spec))?;
        Ok::<_, BenchError>(graph)
    })?;
    out.value
}

/// [`bench_deps`], written to `path` (JSON if it ends in `.json`, Graphviz DOT otherwise).
/// Returns the number of tasks and of dependencies written.
pub fn write_bench_deps(
    cfg: Config,
    sim: SimOptions,
    plan: &BenchPlan,
    path: &Path,
) -> Result<(usize, usize), BenchError> {
    let graph = bench_deps(cfg, sim, plan)?;
    graph.write(path, &plan.workload.kernels()).map_err(|e| {
        BenchError::Usage(format!(
            "cannot write the dependency graph to {}: {e}",
            path.display()
        ))
    })?;
    let deps = graph.tasks().iter().map(|t| t.deps.len()).sum();
    Ok((graph.tasks().len(), deps))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pto_runtime_core::DepReason;

    #[test]
    fn the_chain_workload_records_each_task_waiting_for_the_one_before() {
        let plan = BenchPlan {
            workload: Workload::Chain,
            tasks: 50,
            repeats: 1,
            seed: 1,
            pending: 0,
            tensor_args: 0,
            blocks: 1,
        };
        let g = bench_deps(Config::tiny(), SimOptions::default(), &plan).unwrap();
        assert_eq!(g.tasks().len(), 50);
        for w in g.tasks().windows(2) {
            let [d] = w[1].deps.as_slice() else {
                panic!("{} has {} dependencies", w[1].id, w[1].deps.len());
            };
            assert_eq!(
                (d.producer, d.consumer, d.reason),
                (w[0].id, w[1].id, DepReason::Explicit)
            );
        }
    }
}
