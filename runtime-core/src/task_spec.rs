//! What to run: the description of one task that the orchestrator submits and the platform's
//! `submitted` hook sees. A word of the vocabulary, below both.
#![forbid(unsafe_code)]

use crate::ids::{KernelId, TaskId, WorkerClass};
use crate::predicate::Predicate;
use crate::tensor::arg::TensorArg;

/// What to run: a kernel on a class of core, its scalar arguments and the tasks it waits for.
#[derive(Clone, Copy, Debug)]
pub struct TaskSpec<'a> {
    /// The kernel (ignored for [`WorkerClass::Dummy`]).
    pub kernel: KernelId,
    /// Where it runs.
    pub class: WorkerClass,
    /// Scalar arguments, at most `max_args`.
    pub args: &'a [u64],
    /// Tasks that must finish first; duplicates count once. With the tasks found through
    /// `tensors`, at most `max_deps`.
    pub deps: &'a [TaskId],
    /// Tiles the task reads and writes, at most `max_tensors`: the task waits for every
    /// earlier live task whose tile conflicts (read after write, write after write, write
    /// after read).
    pub tensors: &'a [TensorArg],
    /// The ring the task lives in.
    pub ring: u8,
    /// SPMD blocks: the task runs as this many executions of its kernel, each on a core of
    /// its class (a cluster for MIX) and knowing its block index, and finishes when every
    /// one has. 1 (the default) up to the cores of its class; DUMMY tasks have 1.
    pub blocks: u16,
    /// The blocks start together: the task waits until one scheduler has a free core
    /// (cluster) of its class for every block, and none of them takes other work meanwhile.
    /// For blocks that wait for one another (a barrier among them). At most the cores of
    /// its class that one scheduler owns.
    pub sync_start: bool,
    /// A MIX task's kernels for its two AIV lanes (`kernel` runs on the AIC lane); `None`:
    /// `kernel` on all three. Each kernel knows its lane (0 AIC, 1 and 2 AIV).
    pub aiv_kernels: Option<[KernelId; 2]>,
    /// A test of one element of device memory, read when the task is about to be
    /// dispatched (its producers have finished): if false, the task is skipped, finishing as
    /// a DUMMY task would (no core runs it, its consumers are released).
    pub predicate: Option<Predicate>,
}

impl<'a> TaskSpec<'a> {
    /// A task of `class` running `kernel`, with no arguments or dependencies, in ring 0.
    pub const fn new(kernel: KernelId, class: WorkerClass) -> Self {
        TaskSpec {
            kernel,
            class,
            args: &[],
            deps: &[],
            tensors: &[],
            ring: 0,
            blocks: 1,
            sync_start: false,
            aiv_kernels: None,
            predicate: None,
        }
    }
    /// A MIX task with a kernel per lane: `aic` on the cluster's cube core, `aiv[0]` and
    /// `aiv[1]` on its two vector cores.
    pub const fn mix(aic: KernelId, aiv: [KernelId; 2]) -> Self {
        let mut spec = Self::new(aic, WorkerClass::Mix);
        spec.aiv_kernels = Some(aiv);
        spec
    }
    /// One block, not sync-start, one kernel on every lane: what most tasks are, and what
    /// the submit path is tuned for (the rest is out of line).
    #[inline(always)]
    pub(crate) fn is_plain(&self) -> bool {
        self.blocks == 1
            && !self.sync_start
            && self.aiv_kernels.is_none()
            && self.predicate.is_none()
    }
    /// A task that runs on no core: it completes as soon as its dependencies have.
    pub const fn dummy() -> Self {
        Self::new(KernelId(0), WorkerClass::Dummy)
    }
    /// The same task with these arguments.
    pub const fn args(mut self, args: &'a [u64]) -> Self {
        self.args = args;
        self
    }
    /// The same task with these dependencies.
    pub const fn deps(mut self, deps: &'a [TaskId]) -> Self {
        self.deps = deps;
        self
    }
    /// The same task with these tensor arguments.
    pub const fn tensors(mut self, tensors: &'a [TensorArg]) -> Self {
        self.tensors = tensors;
        self
    }
    /// The same task in `ring`.
    pub const fn ring(mut self, ring: u8) -> Self {
        self.ring = ring;
        self
    }
    /// The same task as `blocks` SPMD blocks (see [`TaskSpec::blocks`](TaskSpec#structfield.blocks)).
    pub const fn blocks(mut self, blocks: u16) -> Self {
        self.blocks = blocks;
        self
    }
    /// The same task, run only if `predicate` holds when it is about to be dispatched (see
    /// [`TaskSpec::predicate`](TaskSpec#structfield.predicate)).
    pub const fn when(mut self, predicate: Predicate) -> Self {
        self.predicate = Some(predicate);
        self
    }
    /// The same task with its blocks starting together (see
    /// [`TaskSpec::sync_start`](TaskSpec#structfield.sync_start)).
    pub const fn sync_start(mut self) -> Self {
        self.sync_start = true;
        self
    }
}
