//! What a trace calls each kernel: the names its writer asks for by id.

use pto_runtime_core::KernelId;

/// Names kernels for a trace's slices (the simulator's kernel table is one).
pub trait KernelNames {
    /// The name of kernel `id`, or `None` if it has none (its slices read `kernel N`).
    fn kernel_name(&self, id: KernelId) -> Option<&str>;
}

/// No names: every kernel slice reads `kernel N`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Unnamed;

impl KernelNames for Unnamed {
    fn kernel_name(&self, _: KernelId) -> Option<&str> {
        None
    }
}

/// Names given as `(id, name)` pairs; the first pair for an id wins.
impl KernelNames for [(KernelId, &str)] {
    fn kernel_name(&self, id: KernelId) -> Option<&str> {
        self.iter().find(|(k, _)| *k == id).map(|(_, n)| *n)
    }
}
