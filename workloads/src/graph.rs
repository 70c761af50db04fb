//! Recording a builder's tasks as a graph: a capturing [`Submitter`](crate::Submitter) keeps
//! the tasks, and [`record_captured`] records them with the buffers the caller names as the
//! graph's boundaries; every other buffer they use becomes an internal buffer of the graph,
//! allocated anew for each instance.

use std::collections::HashMap;

use pto_runtime_core::{
    Buffer, Graph, GraphError, GraphRecordedArg, GraphRecordedTask, GraphStorage, KernelId,
    MAX_DEPS, Orchestrator, Platform, Predicate, TaskSpec, TensorArg, Tile, WorkerClass,
};

/// A task as a capturing submitter keeps it: its spec, owned.
#[derive(Clone, Debug)]
pub struct CapturedTask {
    /// The kernel.
    pub kernel: KernelId,
    /// Where it runs.
    pub class: WorkerClass,
    /// Scalar arguments.
    pub args: Vec<u64>,
    /// Tensor arguments.
    pub tensors: Vec<TensorArg>,
    /// SPMD blocks.
    pub blocks: u16,
    /// Whether its blocks start together.
    pub sync_start: bool,
    /// A MIX task's AIV lanes' kernels.
    pub aiv_kernels: Option<[KernelId; 2]>,
    /// Its predicate.
    pub predicate: Option<Predicate>,
}

impl CapturedTask {
    /// `spec`, owned (its dependencies and ring are not kept: a graph names neither).
    pub fn of(spec: &TaskSpec<'_>) -> Self {
        CapturedTask {
            kernel: spec.kernel,
            class: spec.class,
            args: spec.args.to_vec(),
            tensors: spec.tensors.to_vec(),
            blocks: spec.blocks,
            sync_start: spec.sync_start,
            aiv_kernels: spec.aiv_kernels,
            predicate: spec.predicate,
        }
    }
}

/// Owned storage for a graph's recording, sized for a list of tasks.
pub struct GraphVecs {
    tasks: Vec<GraphRecordedTask>,
    args: Vec<GraphRecordedArg>,
    words: Vec<u64>,
}

impl GraphVecs {
    /// Room for `tasks` and the most edges they could have.
    pub fn for_tasks(tasks: &[CapturedTask]) -> Self {
        let args = tasks.iter().map(|t| t.tensors.len()).sum();
        let scalars: usize = tasks.iter().map(|t| t.args.len()).sum();
        let edges = tasks.len() * MAX_DEPS as usize;
        GraphVecs {
            tasks: vec![GraphRecordedTask::EMPTY; tasks.len()],
            args: vec![GraphRecordedArg::EMPTY; args],
            words: vec![0; scalars + edges],
        }
    }

    /// The storage, for [`Orchestrator::record`].
    pub fn storage(&mut self) -> GraphStorage<'_> {
        GraphStorage {
            tasks: &mut self.tasks,
            args: &mut self.args,
            words: &mut self.words,
        }
    }
}

/// Records `tasks` on `o` into `vecs` as a graph whose boundaries are `boundaries`; every
/// other buffer the tasks use becomes an internal buffer (64-byte aligned), its tiles (and
/// predicates) moved into it.
pub fn record_captured<'s, P: Platform>(
    o: &Orchestrator<'_, '_, P>,
    vecs: &'s mut GraphVecs,
    boundaries: &[Buffer],
    tasks: &[CapturedTask],
) -> Result<Graph<'s>, GraphError> {
    let mut rec = o.record(vecs.storage(), boundaries)?;
    let mut internal: HashMap<Buffer, Buffer> = HashMap::new();
    for task in tasks {
        let mut tensors = Vec::with_capacity(task.tensors.len());
        for a in &task.tensors {
            let to = if boundaries.contains(&a.buffer) {
                a.buffer
            } else if let Some(&b) = internal.get(&a.buffer) {
                b
            } else {
                let b = rec.internal(a.buffer.len, 64)?;
                internal.insert(a.buffer, b);
                b
            };
            tensors.push(TensorArg {
                buffer: to,
                tile: Tile {
                    base: to.base + (a.tile.base - a.buffer.base),
                    ..a.tile
                },
                ..*a
            });
        }
        let predicate = task.predicate.map(|p| {
            match internal
                .iter()
                .find(|(from, _)| from.holds(p.addr, p.addr + p.width as u64))
            {
                Some((from, to)) => Predicate {
                    addr: to.base + (p.addr - from.base),
                    ..p
                },
                None => p,
            }
        });
        let mut spec = TaskSpec::new(task.kernel, task.class)
            .args(&task.args)
            .tensors(&tensors)
            .blocks(task.blocks);
        spec.sync_start = task.sync_start;
        spec.aiv_kernels = task.aiv_kernels;
        spec.predicate = predicate;
        rec.add(&spec)?;
    }
    Ok(rec.finish())
}
