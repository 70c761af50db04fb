//! A graph's tasks submitted one by one on bindings that do not fit its recording (a length
//! that differs, buffers that share bytes), when the replay asked for it
//! ([`super::Bindings::or_submit`]): each task checked and wired through the tensor map as any
//! submit, its recorded edges named, its internal buffers allocated as a replay's, and the
//! instance saying why ([`super::Instance::fell_back`]). An argument on a boundary names the
//! binding itself (a view of part of it becomes the whole), its tile at its recorded offset.
#![forbid(unsafe_code)]

use super::instance::Patched;
use super::replay::rebase;
use super::{Bindings, BufferRef, Graph, Instance};
use crate::error::GraphError;
use crate::ids::{Seq, TaskId};
use crate::orchestrator::record::Recorder;
use crate::orchestrator::{DepList, Orchestrator, TaskSpec};
use crate::platform::Platform;
use crate::region::config::MAX_TENSORS;
use crate::tensor::arg::TensorArg;

impl<P: Platform> Orchestrator<'_, '_, P> {
    /// Submits `graph`'s tasks one by one on `bind` (which `why` says does not fit it).
    pub(super) fn submit_one_by_one<R: Recorder>(
        &mut self,
        graph: &Graph<'_>,
        bind: &Bindings<'_>,
        why: GraphError,
        rec: &mut R,
    ) -> Result<Instance, GraphError> {
        let before = |error| GraphError::Submit { task: 0, error };
        let (ring, r) = (bind.ring, bind.ring as usize);
        // The replay checked the run, the ring and the count of buffers before the lengths
        // and the aliasing; the count of scalars after them.
        if bind.scalars.len() != graph.scalars {
            return Err(GraphError::WrongScalars {
                given: bind.scalars.len(),
                recorded: graph.scalars,
            });
        }
        super::replay::check_shifts(graph, bind)?;
        let buffers = self.instance_buffers(graph, bind).map_err(before)?;
        let buffer = |b| buffers.of(b);
        let (epoch, first) = (self.t.cfg().epoch, self.next[r]);
        let mut patched = Patched::new(graph, bind.scalars);
        for (n, task) in graph.tasks.iter().enumerate() {
            let refused = |error| GraphError::Submit {
                task: n as u32,
                error,
            };
            let mut tensors = heapless::Vec::<TensorArg, { MAX_TENSORS as usize }>::new();
            for a in task.tensors.of(graph.args) {
                let to = buffer(a.buffer);
                let mut moved = rebase(a, buffers.bases_of(a));
                // On a binding of another length, the argument names the binding itself:
                // the submit checks the tile against it.
                if let BufferRef::Boundary(_) = a.buffer {
                    moved.buffer = to;
                }
                // At most max_tensors (checked at record): fits.
                let _ = tensors.push(moved);
            }
            let preds = task.preds.of(graph.words);
            let mut deps: DepList = preds
                .iter()
                .map(|&p| TaskId::new(epoch, ring, Seq(first + p)))
                .collect();
            if preds.is_empty() {
                for &d in bind.after {
                    if !deps.contains(&d) && deps.push(d).is_err() {
                        break; // the submit refuses what passes max_deps
                    }
                }
            }
            let args = patched.args_of(n, task, task.args.of(graph.words));
            let spec = TaskSpec {
                deps: &deps,
                tensors: &tensors,
                ..buffers.spec(task, args)
            };
            self.submit_inner::<R, true>(&spec, rec, Some(buffers.heap_start))
                .map_err(refused)?;
        }
        Ok(Instance {
            first: TaskId::new(epoch, ring, Seq(first)),
            tasks: graph.tasks.len() as u32,
            fell_back: Some(why),
        })
    }
}
