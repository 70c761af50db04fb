//! What user code this thread runs right now, for the crash handler to name: a kernel (its
//! name and id, the task, the core, the lane) or an orchestration. Plain values in a
//! thread-local cell, written around each call, read by the signal handler (no allocation,
//! no lock, nothing lazily initialised).

use std::cell::Cell;
use std::marker::PhantomData;

use pto_runtime_core::{CoreId, KernelId, TaskId};

/// What a thread runs, as the crash handler reads it.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Running {
    /// Nothing of the user's: a crash here is not the simulator's to name.
    Nothing,
    /// A kernel.
    Kernel {
        /// Its id.
        id: KernelId,
        /// Its name (`name_len` bytes of UTF-8 at `name_ptr`, alive while it runs).
        name_ptr: *const u8,
        /// Bytes of the name.
        name_len: usize,
        /// The task it runs for.
        task: TaskId,
        /// The core it runs on.
        core: CoreId,
        /// Its lane of the task.
        lane: u8,
    },
    /// An orchestration (`label_len` bytes of UTF-8 at `label_ptr` say which).
    Orchestration {
        /// Its label.
        label_ptr: *const u8,
        /// Bytes of the label.
        label_len: usize,
    },
}

thread_local! {
    static RUNNING: Cell<Running> = const { Cell::new(Running::Nothing) };
    /// The lowest address of this thread's stack, when known (0: unknown): a fault just
    /// below it is a stack overflow.
    static STACK_LOW: Cell<usize> = const { Cell::new(0) };
}

/// What this thread runs now (for the signal handler).
pub(crate) fn current() -> Running {
    RUNNING.with(Cell::get)
}

/// The lowest address of this thread's stack, if [`set_stack_low`] recorded it.
pub(crate) fn stack_low() -> usize {
    STACK_LOW.with(Cell::get)
}

/// Records the lowest address of this thread's stack.
pub(crate) fn set_stack_low(at: usize) {
    STACK_LOW.with(|c| c.set(at));
}

/// While alive, this thread runs what it was made for; dropping it restores what ran before.
#[must_use = "the context holds only while the guard lives"]
pub struct RunningGuard<'a> {
    before: Running,
    /// Borrows the name or label it points at.
    _borrow: PhantomData<&'a str>,
}

impl Drop for RunningGuard<'_> {
    fn drop(&mut self) {
        RUNNING.with(|c| c.set(self.before));
    }
}

fn enter<'a>(now: Running) -> RunningGuard<'a> {
    RunningGuard {
        before: RUNNING.with(|c| c.replace(now)),
        _borrow: PhantomData,
    }
}

/// This thread runs kernel `id`, named `name`, for `task` on `core` (lane `lane`) while the
/// guard lives.
pub(crate) fn kernel<'a>(
    id: KernelId,
    name: &'a str,
    task: TaskId,
    core: CoreId,
    lane: u8,
) -> RunningGuard<'a> {
    enter(Running::Kernel {
        id,
        name_ptr: name.as_ptr(),
        name_len: name.len(),
        task,
        core,
        lane,
    })
}

/// This thread runs the orchestration `label` names (e.g. "the orchestration" or an SO's
/// file) while the guard lives: a fatal signal in it is named as the orchestration's.
///
/// ```
/// let _named = pto_sim::crash::orchestration("liborch.so");
/// // ... call into the orchestration SO ...
/// ```
pub fn orchestration(label: &str) -> RunningGuard<'_> {
    enter(Running::Orchestration {
        label_ptr: label.as_ptr(),
        label_len: label.len(),
    })
}
