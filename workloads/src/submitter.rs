//! Where a builder's tasks go: the orchestrator, counted, and recorded when asked; or, to
//! record them as a graph, kept instead of submitted.

use pto_runtime_core::{
    Bindings, Graph, GraphError, Instance, Orchestrator, Platform, Seq, SubmitError, TaskId,
    TaskSpec,
};
use pto_sim::DepGraph;

use crate::graph::CapturedTask;

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
    /// A capturing submitter's tasks, kept instead of submitted.
    captured: Option<Vec<CapturedTask>>,
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
            ..Self::default()
        }
    }

    /// A submitter that keeps each task instead of submitting it, to record the tasks as a
    /// graph ([`crate::graph::record_captured`]). The ids it returns name no task: a
    /// builder that named them as dependencies would be refused by the recording.
    pub fn capturing() -> Self {
        Submitter {
            captured: Some(Vec::new()),
            ..Self::default()
        }
    }

    /// Submits `spec` through `o`.
    pub fn submit<P: Platform>(
        &mut self,
        o: &mut Orchestrator<'_, '_, P>,
        spec: &TaskSpec<'_>,
    ) -> Result<TaskId, SubmitError> {
        let id = match (&mut self.graph, &mut self.captured) {
            (_, Some(kept)) => {
                kept.push(CapturedTask::of(spec));
                // Epoch 0 is no run's: any use of it as a dependency is refused.
                TaskId::new(0, 0, Seq(kept.len() as u64 - 1))
            }
            (Some(g), None) => g.submit(o, spec)?,
            (None, None) => o.submit(spec)?,
        };
        self.submitted += 1;
        Ok(id)
    }

    /// Replays `graph` through `o` with `bind`, counting its tasks (and, recording, their
    /// dependencies). A capturing submitter replays it too: it keeps only the tasks
    /// submitted one by one.
    pub fn replay<P: Platform>(
        &mut self,
        o: &mut Orchestrator<'_, '_, P>,
        graph: &Graph<'_>,
        bind: &Bindings<'_>,
    ) -> Result<Instance, GraphError> {
        let instance = match &mut self.graph {
            Some(g) => g.replay(o, graph, bind)?,
            None => o.replay(graph, bind)?,
        };
        self.submitted += u64::from(instance.len());
        Ok(instance)
    }

    /// Tasks submitted so far.
    pub fn submitted(&self) -> u64 {
        self.submitted
    }

    /// The dependencies recorded (a recording submitter only).
    pub fn graph(&self) -> Option<&DepGraph> {
        self.graph.as_ref()
    }

    /// The tasks a capturing submitter kept, taken.
    pub fn take_captured(&mut self) -> Vec<CapturedTask> {
        self.captured
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// The recorded graph, taken.
    pub fn into_graph(self) -> Option<DepGraph> {
        self.graph
    }
}
