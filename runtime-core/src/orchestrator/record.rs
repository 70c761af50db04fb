//! What a submit wired, for people: each dependency of the new task, why it has it (named, or
//! found through which tensor argument), and whether the producer was still live.
#![forbid(unsafe_code)]

use super::{Orchestrator, TaskSpec};
use crate::error::SubmitError;
use crate::ids::TaskId;
use crate::platform::Platform;
use crate::region::config::MAX_DEPS;

/// For each dependency the tensor map found, the index of the argument that found it.
type ArgList = heapless::Vec<u8, { MAX_DEPS as usize }>;

/// What a submit tells about its wiring, as it goes. [`NoRecord`] (what
/// [`Orchestrator::submit`] uses) compiles to nothing.
pub(super) trait Recorder {
    /// Whether anything is recorded (a constant, so the plain submit keeps no trace of it).
    const ON: bool;
    /// The tensor map found a new dependency through tensor argument `k`.
    fn found(&mut self, k: usize);
    /// `consumer` was wired with `deps` (named first, then those found, in order); bit `i`
    /// of `live` says whether `deps[i]` was pinned.
    fn report(&mut self, consumer: TaskId, deps: &[TaskId], live: u64);
}

/// Records nothing.
pub(super) struct NoRecord;

impl Recorder for NoRecord {
    const ON: bool = false;
    #[inline(always)]
    fn found(&mut self, _: usize) {}
    #[inline(always)]
    fn report(&mut self, _: TaskId, _: &[TaskId], _: u64) {}
}

/// Records into a user's callback, task after task.
pub(super) struct Record<'a> {
    sink: &'a mut dyn FnMut(Dependency),
    found: ArgList,
}

impl<'a> Record<'a> {
    /// Records into `sink`.
    pub(super) fn new(sink: &'a mut dyn FnMut(Dependency)) -> Self {
        Record {
            sink,
            found: ArgList::new(),
        }
    }
}

impl Recorder for Record<'_> {
    const ON: bool = true;
    fn found(&mut self, k: usize) {
        // As long as the task's dependency list (both at most MAX_DEPS): cannot fail.
        let _ = self.found.push(k as u8);
    }
    fn report(&mut self, consumer: TaskId, deps: &[TaskId], live: u64) {
        report(consumer, deps, &self.found, live, self.sink);
        self.found.clear();
    }
}

/// Why a task depends on another.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum DepReason {
    /// The task named it ([`TaskSpec::deps`]).
    Explicit,
    /// The tensor map found it: the producer's tile conflicts with the task's tensor
    /// argument `arg` (the first such argument, if several do).
    Tensor {
        /// The index of the task's tensor argument.
        arg: u8,
    },
}

/// One dependency of a submitted task, as the orchestrator wired it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Dependency {
    /// The task submitted.
    pub consumer: TaskId,
    /// The task it depends on.
    pub producer: TaskId,
    /// Why.
    pub reason: DepReason,
    /// The producer was still live at submit, so an edge was wired (the consumer waits for
    /// it unless it finishes first). `false`: it was long done and cost nothing.
    pub live: bool,
}

impl<P: Platform> Orchestrator<'_, '_, P> {
    /// [`Orchestrator::submit`], calling `record` once for each dependency of the task (each
    /// producer once, named dependencies first), so a user can see why a task waited. The
    /// same checks, errors and wiring as `submit`; `record` is called only if the submit
    /// succeeds.
    ///
    /// ```
    /// use pto_runtime_core::{
    ///     Buffer, DepReason, KernelId, Orchestrator, Platform, SubmitError, TaskSpec,
    ///     TensorArg, Tile, WorkerClass,
    /// };
    ///
    /// /// Submits a writer and a reader of one tile; returns why the reader waits.
    /// fn why<P: Platform>(o: &mut Orchestrator<'_, '_, P>) -> Result<DepReason, SubmitError> {
    ///     let buf = Buffer::new(0x1000, 256);
    ///     let tile = Tile::contiguous(buf.base, 4, 64);
    ///     let (w, r) = ([TensorArg::output(buf, tile)], [TensorArg::input(buf, tile)]);
    ///     let writer = o.submit(&TaskSpec::new(KernelId(0), WorkerClass::Aiv).tensors(&w))?;
    ///     let reader = TaskSpec::new(KernelId(0), WorkerClass::Aiv).tensors(&r);
    ///     let mut found = Vec::new();
    ///     o.submit_recorded(&reader, &mut |d| found.push(d))?;
    ///     assert_eq!(found[0].producer, writer);
    ///     Ok(found[0].reason) // DepReason::Tensor { arg: 0 }
    /// }
    /// ```
    pub fn submit_recorded(
        &mut self,
        spec: &TaskSpec<'_>,
        record: &mut dyn FnMut(Dependency),
    ) -> Result<TaskId, SubmitError> {
        self.submit_inner::<_, true>(spec, &mut Record::new(record), None)
    }
}

/// Calls `record` for each of `deps` (explicit ones first, then one per entry of `found`),
/// bit `i` of `live` saying whether `deps[i]` was pinned.
fn report(
    consumer: TaskId,
    deps: &[TaskId],
    found: &ArgList,
    live: u64,
    record: &mut dyn FnMut(Dependency),
) {
    let explicit = deps.len() - found.len();
    for (i, &producer) in deps.iter().enumerate() {
        let reason = match i.checked_sub(explicit) {
            None => DepReason::Explicit,
            Some(j) => DepReason::Tensor { arg: found[j] },
        };
        record(Dependency {
            consumer,
            producer,
            reason,
            live: live >> i & 1 == 1,
        });
    }
}
