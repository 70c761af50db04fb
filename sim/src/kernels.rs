//! Registered kernels: kernel id → Rust function over its arguments.

use std::sync::Arc;

use pto_runtime_core::{Condition, CoreId, KernelId, KernelTensor, TaskId};

use crate::engine::{Engine, EngineError, Transfer};
use crate::kernel_error::{KernelError, error_code};
use crate::memory_map::MemoryMap;
use crate::slab::{Slab, SlabFull};
use crate::tensor_view::TensorView;

/// What a kernel sees of the task it runs, and what it can do besides computing: touch
/// device memory, post transfers to engines, and register deferred conditions.
#[derive(Clone, Copy)]
pub struct KernelCtx<'a> {
    /// The task.
    pub task: TaskId,
    /// The core running this lane.
    pub core: CoreId,
    /// This lane (0 for single-core tasks).
    pub lane: u8,
    /// Lanes of one block of the task (3 for MIX, else 1).
    pub lanes: u8,
    /// This execution's SPMD block: 0 up to `blocks` (0 for a task of one block).
    pub block: u16,
    /// The task's SPMD blocks (1 unless it asked for more, with [`pto_runtime_core::TaskSpec::blocks`]).
    pub blocks: u16,
    /// Scalar arguments.
    pub args: &'a [u64],
    /// The scheduler that owns the core (its engine queues get this lane's reports).
    pub(crate) scheduler: u8,
    /// Tensor arguments, in the order the task gave them (see [`KernelCtx::tensor`]).
    pub tensors: &'a [KernelTensor],
    pub(crate) memory: &'a MemoryMap,
    pub(crate) engines: &'a [Engine],
    pub(crate) slab: &'a Slab,
}

impl std::fmt::Debug for KernelCtx<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KernelCtx")
            .field("task", &self.task)
            .field("core", &self.core)
            .field("lane", &self.lane)
            .field("lanes", &self.lanes)
            .field("block", &self.block)
            .field("blocks", &self.blocks)
            .field("args", &self.args)
            .field("tensors", &self.tensors)
            .finish_non_exhaustive()
    }
}

impl<'a> KernelCtx<'a> {
    /// Scalar argument `i`, or [`error_code::MISSING_ARGS`] if the task has fewer.
    pub fn arg(&self, i: usize) -> Result<u64, KernelError> {
        self.args.get(i).copied().ok_or_else(|| self.missing(i + 1))
    }

    /// The first `N` scalar arguments, or [`error_code::MISSING_ARGS`] if the task has fewer
    /// (more are fine): `let [src, dst, n] = ctx.args_array()?;`.
    pub fn args_array<const N: usize>(&self) -> Result<[u64; N], KernelError> {
        self.args
            .get(..N)
            .and_then(|a| a.try_into().ok())
            .ok_or_else(|| self.missing(N))
    }

    /// Tensor argument `i` as a typed view (address, shape, strides, element reads and
    /// writes), or [`error_code::BAD_TENSOR`] if the task has fewer.
    pub fn tensor(&self, i: usize) -> Result<TensorView<'a>, KernelError> {
        let arg = self.tensors.get(i).ok_or_else(|| {
            KernelError::sim(
                error_code::BAD_TENSOR,
                format!(
                    "the kernel reads tensor argument {i} but the task has {}",
                    self.tensors.len()
                ),
            )
        })?;
        Ok(TensorView::new(i, *arg, self.memory))
    }

    fn missing(&self, wanted: usize) -> KernelError {
        KernelError::sim(
            error_code::MISSING_ARGS,
            format!(
                "the kernel reads {wanted} scalar arguments but the task has {}",
                self.args.len()
            ),
        )
    }

    /// The memory the machine can address: its own, and any communication windows.
    pub fn memory(&self) -> &MemoryMap {
        self.memory
    }

    /// Posts `t` to engine `engine`; returns its post id (the cookie an engine condition
    /// waits for).
    ///
    /// A kernel that copies `words` words to a peer and completes once they landed (the
    /// engine adds 1 to `counter` after the copy):
    ///
    /// ```
    /// use pto_sim::{KernelCtx, KernelError, Signal, Transfer};
    ///
    /// fn put(ctx: &KernelCtx<'_>) -> Result<(), KernelError> {
    ///     let [src, dst, words, counter] = ctx.args_array()?;
    ///     let words = words as usize;
    ///     let cookie = ctx.post(0, Transfer::copy(src, dst, words).signal(Signal::Add32 { addr: counter, delta: 1 }))?;
    ///     ctx.defer_counter32(counter, 1)?;   // or ctx.defer_engine(0, cookie)
    ///     let _ = cookie;
    ///     Ok(())
    /// }
    /// # let _ = put;
    /// ```
    pub fn post(&self, engine: u32, t: Transfer) -> Result<u64, EngineError> {
        // What the transfer will read and write is this task's (the task completes only
        // once it landed, when the kernel waits for it).
        if self.memory.logs() {
            let bytes = t.words.saturating_mul(8);
            crate::access_check::record(t.src, bytes, false);
            crate::access_check::record(t.dst, bytes, true);
        }
        self.engines
            .get(engine as usize)
            .ok_or(EngineError::NoSuchEngine {
                engine,
                engines: self.engines.len(),
            })?
            .post(t)
    }

    /// Posts `t` to engine `engine`, reporting its end as an entry on the engine's
    /// completion queue of this core's scheduler; returns its post id. Wait for the entry
    /// with [`KernelCtx::defer_entry`]: an error entry ([`Transfer::fail`], or a transfer
    /// that could not land) fails the task with the runtime's `TransferFailed` at once, and
    /// its consumers are cancelled.
    ///
    /// ```
    /// use pto_sim::{KernelCtx, KernelError, Transfer};
    ///
    /// fn put(ctx: &KernelCtx<'_>) -> Result<(), KernelError> {
    ///     let [src, dst, words] = ctx.args_array()?;
    ///     let post = ctx.post_queued(0, Transfer::copy(src, dst, words as usize))?;
    ///     ctx.defer_entry(0, post)?;
    ///     Ok(())
    /// }
    /// # let _ = put;
    /// ```
    pub fn post_queued(&self, engine: u32, t: Transfer) -> Result<u64, EngineError> {
        self.post(engine, t.report_to(self.scheduler))
    }

    /// The task completes only once the entry of post `post` arrived on engine `engine`'s
    /// completion queue (a post made with [`KernelCtx::post_queued`] on that engine).
    pub fn defer_entry(&self, engine: u32, post: u64) -> Result<(), SlabFull> {
        self.defer(Condition::entry(engine, post))
    }

    /// The task completes only once `c` holds (after this kernel returns). A lane may
    /// register up to [`pto_runtime_core::MAX_CONDITIONS`]; past that the call fails, and so
    /// does the task, with the runtime's `TooManyConditions` error. The runtime's own limit is
    /// `Config::max_conditions` per task.
    pub fn defer(&self, c: Condition) -> Result<(), SlabFull> {
        self.slab.push(c)
    }

    /// The task completes only once the 32-bit counter at `addr` reads at least `expected`.
    pub fn defer_counter32(&self, addr: u64, expected: u32) -> Result<(), SlabFull> {
        self.defer(Condition::counter32(addr, expected))
    }

    /// The task completes only once the 64-bit counter at `addr` reads at least `expected`.
    pub fn defer_counter64(&self, addr: u64, expected: u64) -> Result<(), SlabFull> {
        self.defer(Condition::counter64(addr, expected))
    }

    /// The task completes only once `engine` completed every post up to `cookie`.
    pub fn defer_engine(&self, engine: u32, cookie: u64) -> Result<(), SlabFull> {
        self.defer(Condition::engine(engine, cookie))
    }
}

/// A kernel: `Ok` reports FIN, `Err` fails the task with the error's code (the run's error
/// shows its message; see [`KernelError`]).
pub type KernelFn = dyn Fn(&KernelCtx<'_>) -> Result<(), KernelError> + Send + Sync;

/// One registered kernel: its name and function.
#[derive(Clone)]
struct Entry {
    name: Arc<str>,
    f: Arc<KernelFn>,
    /// A C kernel: it reaches memory through raw pointers, which the simulator cannot see.
    opaque: bool,
}

/// The dispatch table of the simulated machine: kernel id to name and function. Ids are what
/// task payloads carry (`TaskSpec::new(id, class)`); names are for people (errors, logs,
/// traces) and need not be unique.
///
/// ```
/// use pto_runtime_core::KernelId;
/// use pto_sim::KernelTable;
///
/// const ADD: KernelId = KernelId(0);
/// let table = KernelTable::new().with(ADD, "add", |_ctx| Ok(()));
/// assert_eq!(table.name(ADD), Some("add"));
/// assert_eq!(table.name(KernelId(1)), None);
/// ```
#[derive(Clone, Default)]
pub struct KernelTable {
    kernels: Vec<Option<Entry>>,
}

impl std::fmt::Debug for KernelTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map()
            .entries(
                self.kernels
                    .iter()
                    .enumerate()
                    .filter_map(|(i, k)| Some((i, &*k.as_ref()?.name))),
            )
            .finish()
    }
}

impl KernelTable {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers `f` as kernel `id`, named `name` (replacing any earlier kernel `id`).
    pub fn register(
        &mut self,
        id: KernelId,
        name: impl Into<Arc<str>>,
        f: impl Fn(&KernelCtx<'_>) -> Result<(), KernelError> + Send + Sync + 'static,
    ) -> &mut Self {
        self.insert(id, name.into(), Arc::new(f), false)
    }

    /// Registers `f` as kernel `id`; `opaque` for a kernel whose memory accesses the
    /// simulator cannot see (a C kernel).
    pub(crate) fn insert(
        &mut self,
        id: KernelId,
        name: Arc<str>,
        f: Arc<KernelFn>,
        opaque: bool,
    ) -> &mut Self {
        let i = id.0 as usize;
        if self.kernels.len() <= i {
            self.kernels.resize(i + 1, None);
        }
        self.kernels[i] = Some(Entry { name, f, opaque });
        self
    }

    /// Whether kernel `id` reaches memory in ways the simulator cannot see (a C kernel).
    pub(crate) fn is_opaque(&self, id: KernelId) -> bool {
        self.slot(id).is_some_and(|e| e.opaque)
    }

    /// The same table with `f` registered as kernel `id`, named `name`.
    pub fn with(
        mut self,
        id: KernelId,
        name: impl Into<Arc<str>>,
        f: impl Fn(&KernelCtx<'_>) -> Result<(), KernelError> + Send + Sync + 'static,
    ) -> Self {
        self.register(id, name, f);
        self
    }

    /// The kernel registered as `id`.
    pub fn get(&self, id: KernelId) -> Option<&Arc<KernelFn>> {
        Some(&self.slot(id)?.f)
    }

    /// The name of the kernel registered as `id`.
    pub fn name(&self, id: KernelId) -> Option<&str> {
        Some(&self.slot(id)?.name)
    }

    /// The name and function of the kernel registered as `id`, in one lookup.
    pub(crate) fn entry(&self, id: KernelId) -> Option<(&str, &Arc<KernelFn>)> {
        let e = self.slot(id)?;
        Some((&e.name, &e.f))
    }

    fn slot(&self, id: KernelId) -> Option<&Entry> {
        self.kernels.get(id.0 as usize)?.as_ref()
    }
}
