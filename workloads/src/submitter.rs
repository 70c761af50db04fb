//! Where a builder's tasks go: the orchestrator, counted, and recorded when asked.

use pto_runtime_core::{SubmitError, TaskId, TaskSpec};
use pto_sim::{DepGraph, SimOrchestrator};

/// Submits a builder's tasks through the orchestrator and counts them; a recording
/// submitter also keeps the dependencies the orchestrator wired ([`DepGraph`]).
///
/// ```
/// use pto_runtime_core::{Config, KernelId, TaskSpec, WorkerClass};
/// use pto_sim::{KernelTable, SimOptions};
/// use pto_workloads::Submitter;
///
/// let kernels = KernelTable::new().with(KernelId(0), "noop", |_| Ok(()));
/// let out = pto_sim::run(Config::tiny(), kernels, SimOptions::default(), |o| {
///     let mut s = Submitter::recording();
///     s.submit(o, &TaskSpec::new(KernelId(0), WorkerClass::Aiv)).unwrap();
///     s
/// })?;
/// assert_eq!(out.value.submitted(), 1);
/// assert_eq!(out.value.graph().map(|g| g.tasks().len()), Some(1));
/// # Ok::<(), pto_sim::SimError>(())
/// ```
#[derive(Debug, Default)]
pub struct Submitter {
    graph: Option<DepGraph>,
    submitted: u64,
}

impl Submitter {
    /// A submitter that only counts.
    pub fn new() -> Self {
        Self::default()
    }

    /// A submitter that also records every task's dependencies.
    pub fn recording() -> Self {
        Submitter {
            graph: Some(DepGraph::new()),
            submitted: 0,
        }
    }

    /// Submits `spec` through `o`.
    pub fn submit(
        &mut self,
        o: &mut SimOrchestrator<'_, '_>,
        spec: &TaskSpec<'_>,
    ) -> Result<TaskId, SubmitError> {
        let id = match &mut self.graph {
            Some(g) => g.submit(o, spec)?,
            None => o.submit(spec)?,
        };
        self.submitted += 1;
        Ok(id)
    }

    /// Tasks submitted so far.
    pub fn submitted(&self) -> u64 {
        self.submitted
    }

    /// The dependencies recorded (a recording submitter only).
    pub fn graph(&self) -> Option<&DepGraph> {
        self.graph.as_ref()
    }

    /// The recorded graph, taken.
    pub fn into_graph(self) -> Option<DepGraph> {
        self.graph
    }
}
