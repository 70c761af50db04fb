//! What a replay and its one-by-one fall-back share: the instance's buffers (its bindings
//! and its block of internal buffers), its patched scalars met task after task, and a
//! recorded task's spec on them.
#![forbid(unsafe_code)]

use super::{
    BASES, Bindings, BufferRef, Graph, GraphRecordedArg, GraphRecordedTask, MAX_GRAPH_BOUNDARIES,
    Patch, UNSHIFTED,
};
use crate::error::SubmitError;
use crate::orchestrator::{Orchestrator, TaskSpec};
use crate::platform::Platform;
use crate::predicate::Predicate;
use crate::region::config::MAX_ARGS;
use crate::tensor::arg::Buffer;

/// The buffers of one instance: the bindings and the internal buffers' block.
pub(super) struct InstanceBuffers<'a> {
    graph: &'a Graph<'a>,
    bind: &'a Bindings<'a>,
    block: u64,
    /// Where the instance's buffers start in its ring's heap: every task of it holds them.
    pub(super) heap_start: u64,
    /// By [`BufferRef::index`]: where each of the instance's buffers starts, a boundary
    /// moved by its shift; then each boundary's binding unmoved ([`UNSHIFTED`]).
    bases: [u64; BASES],
}

impl<P: Platform> Orchestrator<'_, '_, P> {
    /// Allocates the internal buffers of an instance of `graph` bound by `bind` (one block,
    /// each at its recorded offset), from `bind.ring`'s heap.
    pub(super) fn instance_buffers<'a>(
        &mut self,
        graph: &'a Graph<'a>,
        bind: &'a Bindings<'a>,
    ) -> Result<InstanceBuffers<'a>, SubmitError> {
        let heap_start = self.heaps[bind.ring as usize].pending;
        let block = match graph.block.len {
            0 => 0,
            len => self.alloc(bind.ring, len, graph.block.align)?,
        };
        let mut bases = [0; BASES];
        for (i, b) in bind.buffers.iter().enumerate() {
            // Checked by the caller to keep the tasks' bytes inside the binding.
            bases[i] = b.base.wrapping_add_signed(bind.shift(i));
            bases[UNSHIFTED + i] = b.base;
        }
        for (to, i) in bases[MAX_GRAPH_BOUNDARIES..]
            .iter_mut()
            .zip(&graph.internals)
        {
            *to = block + i.offset;
        }
        Ok(InstanceBuffers {
            graph,
            bind,
            block,
            heap_start,
            bases,
        })
    }
}

impl InstanceBuffers<'_> {
    /// The instance's buffer `b`.
    #[inline(always)]
    pub(super) fn of(&self, b: BufferRef) -> Buffer {
        match b {
            BufferRef::Boundary(i) => self.bind.buffers[i as usize],
            BufferRef::Internal(j) => {
                let i = &self.graph.internals[j as usize];
                Buffer::new(self.block + i.offset, i.at.len)
            }
        }
    }

    /// Where the instance's buffer `b` starts, moved by its shift: where what was recorded
    /// at its start goes.
    #[inline(always)]
    pub(super) fn base_of(&self, b: BufferRef) -> u64 {
        self.bases[b.index()]
    }

    /// Where recorded argument `a`'s tile and buffer are placed from: its buffer's moved
    /// start, and its own buffer's (the same, but for an argument naming a whole boundary,
    /// which stays where it is bound).
    #[inline(always)]
    pub(super) fn bases_of(&self, a: &GraphRecordedArg) -> (u64, u64) {
        (self.bases[a.at[0] as usize], self.bases[a.at[1] as usize])
    }

    /// Recorded `task`'s spec in this instance, with scalar arguments `args`, into `ring`:
    /// its predicate moved with its buffer; no dependencies or tensors (the caller's).
    #[inline(always)]
    pub(super) fn spec<'s>(&self, task: &GraphRecordedTask, args: &'s [u64]) -> TaskSpec<'s> {
        TaskSpec {
            kernel: task.kernel,
            class: task.class,
            args,
            deps: &[],
            tensors: &[],
            ring: self.bind.ring,
            blocks: task.blocks,
            sync_start: task.sync_start,
            aiv_kernels: task.aiv_kernels,
            predicate: task.predicate.map(|(p, at)| match at {
                Some(b) => Predicate {
                    addr: self.base_of(b) + p.addr,
                    ..p
                },
                None => p,
            }),
        }
    }
}

/// A graph's patched scalars, met task after task (in order).
pub(super) struct Patched<'g> {
    left: &'g [Patch],
    scalars: &'g [u64],
    args: [u64; MAX_ARGS as usize],
}

impl<'g> Patched<'g> {
    /// `graph`'s patches, set from `scalars` (as many as they take: checked by the caller).
    pub(super) fn new(graph: &'g Graph<'g>, scalars: &'g [u64]) -> Self {
        Patched {
            left: &graph.patches,
            scalars,
            args: [0; MAX_ARGS as usize],
        }
    }

    /// The scalar arguments of task `n` (recorded as `recorded`), its patches applied.
    #[inline(always)]
    pub(super) fn args_of<'a>(
        &'a mut self,
        n: usize,
        task: &GraphRecordedTask,
        recorded: &'a [u64],
    ) -> &'a [u64] {
        if !task.patched {
            return recorded;
        }
        self.apply(n as u32, recorded)
    }

    #[cold]
    fn apply(&mut self, n: u32, recorded: &[u64]) -> &[u64] {
        let mine = self.left.iter().take_while(|p| p.task == n).count();
        let into = &mut self.args[..recorded.len()];
        into.copy_from_slice(recorded);
        for p in &self.left[..mine] {
            // Checked at record (the argument) and at the replay's start (the slot).
            into[p.arg as usize] = self.scalars[p.slot as usize];
        }
        self.left = &self.left[mine..];
        into
    }
}
