//! Recording a builder's tasks as a graph: a capturing [`Submitter`](crate::Submitter) keeps
//! the tasks, and [`record_captured`] records them with the buffers the caller names as the
//! graph's boundaries; every other buffer they use becomes an internal buffer of the graph,
//! allocated anew for each instance.

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

/// Records `tasks` on `o` into `vecs` as a graph whose boundaries are `boundaries` (a
/// tensor argument may name a part of one); every other buffer the tasks use becomes part
/// of an internal buffer (64-byte aligned): buffers that share bytes are views of one
/// allocation, which becomes one internal buffer, each view at its offset in it, its tiles
/// (and predicates) moved with it.
pub fn record_captured<'s, P: Platform>(
    o: &Orchestrator<'_, '_, P>,
    vecs: &'s mut GraphVecs,
    boundaries: &[Buffer],
    tasks: &[CapturedTask],
) -> Result<Graph<'s>, GraphError> {
    let mut rec = o.record(vecs.storage(), boundaries)?;
    let in_boundary = |b: &Buffer| {
        boundaries
            .iter()
            .any(|x| x.base <= b.base && b.end() <= x.end())
    };
    let mut views: Vec<Buffer> = tasks
        .iter()
        .flat_map(|t| t.tensors.iter().map(|a| a.buffer))
        .filter(|b| !in_boundary(b))
        .collect();
    views.sort_by_key(|b| (b.base, b.len));
    views.dedup();
    // The allocations: views merged while they share bytes (or a base).
    let mut allocations: Vec<(u64, u64)> = Vec::new();
    for v in &views {
        match allocations.last_mut() {
            Some((base, end)) if v.base < *end || v.base == *base => *end = (*end).max(v.end()),
            _ => allocations.push((v.base, v.end())),
        }
    }
    let mut internal = Vec::with_capacity(allocations.len());
    for &(base, end) in &allocations {
        internal.push((base, end, rec.internal(end - base, 64)?));
    }
    // Where an address of an allocation lies in its internal buffer.
    let moved = |addr: u64, len: u64| {
        internal
            .iter()
            .find(|(base, end, _)| *base <= addr && addr + len <= *end)
            .map(|(base, _, to)| to.base + (addr - base))
    };
    for task in tasks {
        let mut tensors = Vec::with_capacity(task.tensors.len());
        for a in &task.tensors {
            let to = match moved(a.buffer.base, a.buffer.len) {
                Some(at) => Buffer::new(at, a.buffer.len),
                None => a.buffer, // a boundary, or a part of one
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
        let predicate = task.predicate.map(|p| match moved(p.addr, p.width as u64) {
            Some(addr) => Predicate { addr, ..p },
            None => p,
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
