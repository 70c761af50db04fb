//! Registered kernels: kernel id → Rust function over its arguments.

use std::sync::Arc;

use pto_runtime_core::{CoreId, KernelId, TaskId};

/// What a kernel sees of the task it runs.
#[derive(Clone, Copy, Debug)]
pub struct KernelCtx<'a> {
    /// The task.
    pub task: TaskId,
    /// The core running this lane.
    pub core: CoreId,
    /// This lane (0 for single-core tasks).
    pub lane: u8,
    /// Lanes of the task.
    pub lanes: u8,
    /// Scalar arguments.
    pub args: &'a [u64],
}

/// A kernel: `Ok` reports FIN, `Err(code)` fails the task with a platform error code
/// (codes below 16 are the simulator's own, see [`error_code`]).
pub type KernelFn = dyn Fn(&KernelCtx<'_>) -> Result<(), u32> + Send + Sync;

/// Error codes the simulator reports in a core's status word.
pub mod error_code {
    /// The payload named a kernel that is not registered.
    pub const UNKNOWN_KERNEL: u32 = 1;
    /// The kernel panicked.
    pub const KERNEL_PANICKED: u32 = 2;
}

/// The dispatch table of the simulated machine.
#[derive(Clone, Default)]
pub struct KernelTable {
    kernels: Vec<Option<Arc<KernelFn>>>,
}

impl KernelTable {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers `f` as kernel `id` (replacing any earlier one).
    pub fn register(
        &mut self,
        id: KernelId,
        f: impl Fn(&KernelCtx<'_>) -> Result<(), u32> + Send + Sync + 'static,
    ) -> &mut Self {
        let i = id.0 as usize;
        if self.kernels.len() <= i {
            self.kernels.resize(i + 1, None);
        }
        self.kernels[i] = Some(Arc::new(f));
        self
    }

    /// The same table with `f` registered as kernel `id`.
    pub fn with(
        mut self,
        id: KernelId,
        f: impl Fn(&KernelCtx<'_>) -> Result<(), u32> + Send + Sync + 'static,
    ) -> Self {
        self.register(id, f);
        self
    }

    /// The kernel registered as `id`.
    pub fn get(&self, id: KernelId) -> Option<&Arc<KernelFn>> {
        self.kernels.get(id.0 as usize).and_then(|k| k.as_ref())
    }
}
