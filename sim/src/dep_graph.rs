//! The dependency graph of a run, as the orchestrator wired it: every task submitted through
//! [`DepGraph::submit`], and for each of its dependencies why it has it (named, or found by
//! the tensor map through which tensor argument) and whether the producer was still live.
//! Written as Graphviz DOT or JSON, so a user can see why a task waited.

use std::fmt::Write as _;
use std::path::Path;

use pto_runtime_core::{
    Bindings, DepReason, Dependency, Graph, GraphError, Instance, KernelId, Node, Orchestrator,
    Platform, SubmitError, TaskId, TaskSpec, WorkerClass,
};

use crate::kernels::KernelTable;

/// One task of a [`DepGraph`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DepTask {
    /// The task.
    pub id: TaskId,
    /// Its kernel.
    pub kernel: KernelId,
    /// Where it runs.
    pub class: WorkerClass,
    /// Its dependencies, each producer once, named ones first.
    pub deps: Vec<Dependency>,
}

/// Tasks and the dependencies the orchestrator wired for them.
///
/// ```
/// use pto_runtime_core::{Config, KernelId, TaskSpec, TensorArg, WorkerClass};
/// use pto_sim::{DepGraph, KernelTable, SimOptions};
///
/// const K: KernelId = KernelId(0);
/// let kernels = KernelTable::new().with(K, "step", |_| Ok(()));
/// let out = pto_sim::run(Config::tiny(), kernels.clone(), SimOptions::default(), |o| {
///     let buf = o.platform().memory().alloc_buffer(64, 64).unwrap();
///     let mut graph = DepGraph::new();
///     for _ in 0..3 {
///         let t = [TensorArg::whole_inout(buf, 4)];
///         graph.submit(o, &TaskSpec::new(K, WorkerClass::Aiv).tensors(&t)).unwrap();
///     }
///     graph
/// })?;
/// let dot = out.value.to_dot(&kernels);
/// assert_eq!(dot.matches("->").count(), 2, "a chain: each task waits for the one before");
/// assert!(dot.contains("tensor 0"));
/// # Ok::<(), pto_sim::SimError>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct DepGraph {
    tasks: Vec<DepTask>,
}

impl DepGraph {
    /// An empty graph.
    pub fn new() -> Self {
        Self::default()
    }

    /// Submits `spec` through `o` ([`Orchestrator::submit_recorded`]) and adds the task and
    /// its dependencies.
    pub fn submit<P: Platform>(
        &mut self,
        o: &mut Orchestrator<'_, '_, P>,
        spec: &TaskSpec<'_>,
    ) -> Result<TaskId, SubmitError> {
        let mut deps = Vec::new();
        let id = o.submit_recorded(spec, &mut |d| deps.push(d))?;
        self.tasks.push(DepTask {
            id,
            kernel: spec.kernel,
            class: spec.class,
            deps,
        });
        Ok(id)
    }

    /// Replays `graph` through `o` with `bind` ([`Orchestrator::replay_recorded`]) and adds
    /// the instance's tasks and their dependencies.
    pub fn replay<P: Platform>(
        &mut self,
        o: &mut Orchestrator<'_, '_, P>,
        graph: &Graph<'_>,
        bind: &Bindings<'_>,
    ) -> Result<Instance, GraphError> {
        let mut deps: Vec<Dependency> = Vec::new();
        let instance = o.replay_recorded(graph, bind, &mut |d| deps.push(d))?;
        // Reported task after task, in order: each task's run of `deps`.
        let mut rest = deps.as_slice();
        for n in 0..instance.len() {
            let node = Node::at(n);
            let (Some(id), Some((kernel, class))) = (instance.task(node), graph.kernel_of(node))
            else {
                continue;
            };
            let mine = rest.iter().take_while(|d| d.consumer == id).count();
            self.tasks.push(DepTask {
                id,
                kernel,
                class,
                deps: rest[..mine].to_vec(),
            });
            rest = &rest[mine..];
        }
        Ok(instance)
    }

    /// The tasks, in submission order.
    pub fn tasks(&self) -> &[DepTask] {
        &self.tasks
    }

    /// The graph in Graphviz DOT (`dot -Tsvg`): a node per task (its kernel's name from
    /// `kernels`, its id, its class), an edge from each producer to its consumer labelled
    /// with why (`dep` for a named dependency, `tensor K` for one found through tensor
    /// argument K), dashed when the producer was done before the consumer came.
    pub fn to_dot(&self, kernels: &KernelTable) -> String {
        let mut s = String::from("digraph deps {\n  rankdir=LR;\n  node [shape=box];\n");
        for t in &self.tasks {
            let _ = writeln!(
                s,
                "  \"{}\" [label=\"{}\\n{} {:?}\"];",
                t.id,
                escape(&kernel_name(kernels, t)),
                t.id,
                t.class
            );
        }
        for t in &self.tasks {
            for d in &t.deps {
                let style = if d.live { "" } else { ", style=dashed" };
                let _ = writeln!(
                    s,
                    "  \"{}\" -> \"{}\" [label=\"{}\"{style}];",
                    d.producer,
                    d.consumer,
                    reason(d.reason)
                );
            }
        }
        s.push_str("}\n");
        s
    }

    /// The graph as JSON: `{"tasks": [{"id", "ring", "seq", "kernel", "name", "class",
    /// "deps": [{"producer", "ring", "seq", "reason", "arg", "live"}]}]}`, ids as their raw
    /// 64-bit values.
    pub fn to_json(&self, kernels: &KernelTable) -> String {
        let mut s = String::from("{\"tasks\":[");
        for (i, t) in self.tasks.iter().enumerate() {
            if i > 0 {
                s.push(',');
            }
            let _ = write!(
                s,
                "{{\"id\":{},\"ring\":{},\"seq\":{},\"kernel\":{},\"name\":\"{}\",\
                 \"class\":\"{:?}\",\"deps\":[",
                t.id.raw(),
                t.id.ring(),
                t.id.seq().0,
                t.kernel.0,
                escape(&kernel_name(kernels, t)),
                t.class
            );
            for (j, d) in t.deps.iter().enumerate() {
                if j > 0 {
                    s.push(',');
                }
                let (why, arg) = match d.reason {
                    DepReason::Explicit => ("explicit", "null".to_string()),
                    DepReason::Tensor { arg } => ("tensor", arg.to_string()),
                };
                let _ = write!(
                    s,
                    "{{\"producer\":{},\"ring\":{},\"seq\":{},\"reason\":\"{why}\",\
                     \"arg\":{arg},\"live\":{}}}",
                    d.producer.raw(),
                    d.producer.ring(),
                    d.producer.seq().0,
                    d.live
                );
            }
            s.push_str("]}");
        }
        s.push_str("]}\n");
        s
    }

    /// Writes the graph to `path`: JSON if its name ends in `.json`, DOT otherwise.
    pub fn write(&self, path: &Path, kernels: &KernelTable) -> std::io::Result<()> {
        let text = if path.extension().is_some_and(|e| e == "json") {
            self.to_json(kernels)
        } else {
            self.to_dot(kernels)
        };
        std::fs::write(path, text)
    }
}

fn kernel_name(kernels: &KernelTable, t: &DepTask) -> String {
    match t.class {
        WorkerClass::Dummy => "dummy".into(),
        _ => kernels
            .name(t.kernel)
            .map_or_else(|| format!("kernel {}", t.kernel.0), str::to_owned),
    }
}

fn reason(r: DepReason) -> String {
    match r {
        DepReason::Explicit => "dep".into(),
        DepReason::Tensor { arg } => format!("tensor {arg}"),
    }
}

/// `name` with the characters JSON and DOT strings cannot hold as they are escaped.
fn escape(name: &str) -> String {
    let mut s = String::with_capacity(name.len());
    for c in name.chars() {
        match c {
            '"' => s.push_str("\\\""),
            '\\' => s.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(s, "\\u{:04x}", c as u32);
            }
            c => s.push(c),
        }
    }
    s
}
