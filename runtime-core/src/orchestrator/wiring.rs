//! How a submit treats its task: a fresh task is checked and all its tensor arguments go
//! through the tensor map; a task of a graph's replay was checked when the graph was recorded,
//! and none of its arguments go through the map (its edges are named, and the instance meets
//! the map once per boundary buffer).
#![forbid(unsafe_code)]

/// What differs between a fresh submit and one task of a replay. [`Fresh`] (what
/// [`super::Orchestrator::submit`] uses) compiles to the plain path.
pub(super) trait Wiring {
    /// Whether the task is checked against the configuration and the run.
    const VALIDATE: bool;
    /// Whether tensor argument `k` goes through the tensor map.
    fn mapped(&self, k: usize) -> bool;
    /// Where the task's buffers start in its ring's heap, given where the buffers allocated
    /// since the ring's last submit start.
    fn heap_start(&self, pending: u64) -> u64;
}

/// A task submitted on its own.
pub(super) struct Fresh;

impl Wiring for Fresh {
    const VALIDATE: bool = true;
    #[inline(always)]
    fn mapped(&self, _: usize) -> bool {
        true
    }
    #[inline(always)]
    fn heap_start(&self, pending: u64) -> u64 {
        pending
    }
}

/// A task of a graph's instance.
pub(super) struct Replayed {
    /// Where the instance's buffers start: every task of the instance holds them, so they
    /// outlive its last task.
    pub(super) heap_start: u64,
}

impl Wiring for Replayed {
    const VALIDATE: bool = false;
    #[inline(always)]
    fn mapped(&self, _: usize) -> bool {
        false
    }
    #[inline(always)]
    fn heap_start(&self, _: u64) -> u64 {
        self.heap_start
    }
}
