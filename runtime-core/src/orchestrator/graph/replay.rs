//! Replaying a graph: the bindings checked once, the internal buffers allocated, and the tasks
//! submitted in order into one ring, each with its recorded edges named and only its boundary
//! arguments going through the tensor map.
#![forbid(unsafe_code)]

use super::{BufferRef, Graph, GraphRecordedArg, Instance};
use crate::error::{GraphError, SubmitError};
use crate::ids::{Seq, TaskId};
use crate::orchestrator::record::{NoRecord, Record, Recorder};
use crate::orchestrator::wiring::Replayed;
use crate::orchestrator::{Dependency, Orchestrator, TaskSpec};
use crate::platform::Platform;
use crate::predicate::Predicate;
use crate::region::config::{MAX_DEPS, MAX_TENSORS};
use crate::tensor::arg::{Buffer, TensorArg};
use crate::tensor::tile::Tile;

use super::MAX_GRAPH_BUFFERS;

impl<P: Platform> Orchestrator<'_, '_, P> {
    /// Submits an instance of `graph` with `bind`'s buffers: its tasks, in the recording's
    /// order, into `bind.ring`, ordered among themselves as recorded and against every other
    /// task (fresh, or of other instances) by the boundary buffers they share, as if they had
    /// been submitted one by one. Each instance gets its own internal buffers, held until its
    /// last task is reclaimed. Bindings that do not fit the recording (count, length, buffers
    /// that share bytes) are refused before anything is submitted; a task refused later (its
    /// ring's window stayed full, say) is [`GraphError::Submit`], the tasks before it
    /// submitted.
    pub fn replay(
        &mut self,
        graph: &Graph<'_>,
        bind: &super::Bindings<'_>,
    ) -> Result<Instance, GraphError> {
        self.replay_inner(graph, bind, &mut NoRecord)
    }

    /// [`Orchestrator::replay`], telling `record` each dependency of each task as it is
    /// wired (recorded edges as [`crate::DepReason::Explicit`]).
    pub fn replay_recorded(
        &mut self,
        graph: &Graph<'_>,
        bind: &super::Bindings<'_>,
        record: &mut dyn FnMut(Dependency),
    ) -> Result<Instance, GraphError> {
        self.replay_inner(graph, bind, &mut Record::new(record))
    }

    fn replay_inner<R: Recorder>(
        &mut self,
        graph: &Graph<'_>,
        bind: &super::Bindings<'_>,
        rec: &mut R,
    ) -> Result<Instance, GraphError> {
        let before = |error| GraphError::Submit { task: 0, error };
        self.check_running().map_err(before)?;
        if graph.stamp != self.stamp() {
            return Err(GraphError::OtherRun);
        }
        let cfg = *self.t.cfg();
        let ring = bind.ring;
        if ring >= cfg.rings {
            return Err(before(SubmitError::BadRing {
                ring,
                rings: cfg.rings,
            }));
        }
        check_bindings(graph, bind.buffers)?;
        self.check_deps(bind.after).map_err(before)?;
        if bind.after.len() > cfg.max_deps as usize {
            return Err(before(SubmitError::TooManyDeps {
                given: bind.after.len(),
                max: cfg.max_deps,
            }));
        }
        let r = ring as usize;
        // The buffers allocated from here on are the instance's: every task of it holds
        // them.
        let heap_start = self.heaps[r].pending;
        let mut internal = heapless::Vec::<Buffer, MAX_GRAPH_BUFFERS>::new();
        for i in &graph.internals {
            let b = self.alloc_buffer(ring, i.at.len, i.align).map_err(before)?;
            // As many as the graph has: fits.
            let _ = internal.push(b);
        }
        let bound = |b: BufferRef| match b {
            BufferRef::Boundary(i) => bind.buffers[i as usize],
            BufferRef::Internal(j) => internal[j as usize],
        };
        let (epoch, first) = (cfg.epoch, self.next[r]);
        for (n, task) in graph.tasks.iter().enumerate() {
            let mut tensors = heapless::Vec::<TensorArg, { MAX_TENSORS as usize }>::new();
            for a in task.tensors.of(graph.args) {
                // At most max_tensors (checked at record): fits.
                let _ = tensors.push(rebase(a, bound(a.buffer)));
            }
            let mut deps = heapless::Vec::<TaskId, { MAX_DEPS as usize }>::new();
            let preds = task.preds.of(graph.words);
            if preds.is_empty() {
                // At most max_deps (checked above): fits.
                let _ = deps.extend_from_slice(bind.after);
            }
            for &p in preds {
                let _ = deps.push(TaskId::new(epoch, ring, Seq(first + p)));
            }
            let spec = TaskSpec {
                kernel: task.kernel,
                class: task.class,
                args: task.args.of(graph.words),
                deps: &deps,
                tensors: &tensors,
                ring,
                blocks: task.blocks,
                sync_start: task.sync_start,
                aiv_kernels: task.aiv_kernels,
                predicate: task.predicate.map(|(p, at)| match at {
                    Some(b) => Predicate {
                        addr: bound(b).base + p.addr,
                        ..p
                    },
                    None => p,
                }),
            };
            let how = Replayed {
                mapped: task.mapped,
                heap_start,
            };
            let id = self
                .submit_inner::<R, Replayed, true>(&spec, rec, &how)
                .map_err(|error| GraphError::Submit {
                    task: n as u32,
                    error,
                })?;
            debug_assert_eq!(id.seq().0, first + n as u64);
        }
        Ok(Instance {
            first: TaskId::new(epoch, ring, Seq(first)),
            tasks: graph.tasks.len() as u32,
        })
    }
}

/// Checks `buffers` against `graph`'s boundaries: one each, each as long, none sharing a
/// byte with another.
fn check_bindings(graph: &Graph<'_>, buffers: &[Buffer]) -> Result<(), GraphError> {
    if buffers.len() != graph.boundaries.len() {
        return Err(GraphError::WrongCount {
            given: buffers.len(),
            recorded: graph.boundaries.len(),
        });
    }
    for (i, (b, r)) in buffers.iter().zip(&graph.boundaries).enumerate() {
        if b.len != r.len {
            return Err(GraphError::WrongSize {
                index: i as u32,
                given: b.len,
                recorded: r.len,
            });
        }
        if let Some(j) = buffers[..i]
            .iter()
            .position(|a| a.base < b.end() && b.base < a.end())
        {
            return Err(GraphError::Aliased {
                a: j as u32,
                b: i as u32,
            });
        }
    }
    Ok(())
}

/// Recorded argument `a` moved into buffer `to` (as long as the recording's): the same tile
/// at the same offset.
fn rebase(a: &GraphRecordedArg, to: Buffer) -> TensorArg {
    let offset = a.arg.tile.base - a.arg.buffer.base;
    TensorArg {
        buffer: to,
        tile: Tile {
            base: to.base + offset,
            ..a.arg.tile
        },
        ..a.arg
    }
}
