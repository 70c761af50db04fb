//! The `Platform` trait: the scheduler's only access to the machine.
#![forbid(unsafe_code)]

use crate::condition::{Condition, Watch};
use crate::ids::{CoreId, KernelId, TaskId, Token};

/// What a core is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum CoreKind {
    /// A cube core.
    Aic,
    /// A vector core.
    Aiv,
}

/// The phase a core reports for the token in its status word.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum CorePhase {
    /// Nothing dispatched since start-up.
    Idle,
    /// The core took the token and is running it.
    Ack,
    /// The core finished the token; it then takes the next token, if one was rung.
    Fin,
    /// The kernel of the token failed with this platform error code.
    Error(u32),
}

/// A core's status word, decoded.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct CoreStatus {
    /// The token the phase is about.
    pub token: Token,
    /// What the core says about it.
    pub phase: CorePhase,
}

/// What a core needs to run one lane of a task.
#[derive(Clone, Copy, Debug)]
pub struct Payload<'a> {
    /// The task (for profiling and error reports).
    pub task: TaskId,
    /// The kernel to run.
    pub kernel: KernelId,
    /// This core's lane of the task (0 for single-core tasks; 0 = AIC, 1 and 2 = AIV of MIX).
    pub lane: u8,
    /// Lanes of the task in all.
    pub lanes: u8,
    /// Scalar arguments.
    pub args: &'a [u64],
    /// Record when the kernel starts and ends (profiling at `Tasks`), for
    /// [`Platform::lane_times`].
    pub profile: bool,
}

/// The scheduler's only access to the machine: clock, doorbells, status words, caches.
///
/// A core runs the tokens rung on its doorbell in order, one at a time, and holds at most two
/// (the running one and one pending): the scheduler never rings a third before the first
/// reported FIN. Implementations: the AICPU (`pto-device-sys`) and threads (`pto-sim`).
pub trait Platform: Sync {
    /// A monotonic cycle counter, shared by every thread of the run. Never blocks.
    fn now(&self) -> u64;

    /// Counter ticks per microsecond (50 on a2a3's 50 MHz system counter; at least 1).
    fn ticks_per_us(&self) -> u64;

    /// Whether `kernel` can be dispatched. Called at submit, so an unknown kernel is a typed
    /// submit error rather than a failed run.
    fn has_kernel(&self, kernel: KernelId) -> bool;

    /// Writes the payload of `token` for `core` into the buffer that `token` selects (two per
    /// core, by token parity). The core does not look at it before the doorbell rings. The
    /// scheduler only writes the buffer of a token whose predecessor-but-one reported FIN.
    /// Never blocks.
    fn write_payload(&self, core: CoreId, token: Token, payload: &Payload<'_>);

    /// Rings `core`'s doorbell with `token`. Release ordering: the payload written before this
    /// call is visible to the core when it observes the token. Never blocks.
    fn ring_doorbell(&self, core: CoreId, token: Token);

    /// The last token the core reported, with its phase. Acquire ordering: data the kernel
    /// wrote before FIN is visible after a FIN is read. Never blocks.
    fn core_status(&self, core: CoreId) -> CoreStatus;

    /// When the kernel of `token` on `core` started and ended (clock ticks), if its payload
    /// asked for times and the core has reported FIN for it. Read by the scheduler right after
    /// it saw that FIN, before the token's buffer is reused. Never blocks.
    fn lane_times(&self, core: CoreId, token: Token) -> Option<(u64, u64)>;

    /// How many deferred conditions the kernel of `token` on `core` registered (possibly more
    /// than the platform could store: the scheduler then fails the task). Read right after
    /// that token's FIN (or, under back-pressure, a few loops later), always before the
    /// token's buffer is reused. A token whose kernel registered none reports 0. Never blocks.
    fn conditions(&self, core: CoreId, token: Token) -> usize;

    /// Condition `i` of those; `None` past what the platform stored.
    fn condition(&self, core: CoreId, token: Token, i: usize) -> Option<Condition>;

    /// The current value of `watch`, with Acquire ordering: data that landed before the word
    /// was bumped is visible once the bumped value is read. `None` if the platform cannot
    /// read that word (an address outside device memory and the comm windows, a misaligned
    /// counter, an engine that does not exist). For counters the scheduler first calls
    /// [`Platform::invalidate`] on the word. Never blocks.
    fn read_watch(&self, watch: Watch) -> Option<u64>;

    /// Discards cached copies of `len` bytes at device address `addr` so the next read sees
    /// memory written by another agent (DMA, a peer chip). A no-op where caches are coherent.
    fn invalidate(&self, addr: u64, len: usize);

    /// Writes back cached copies of `len` bytes at device address `addr` so another agent
    /// reads them. A no-op where caches are coherent.
    fn flush(&self, addr: u64, len: usize);

    /// The device memory the orchestrator hands out as task output buffers
    /// ([`crate::Orchestrator::alloc`]): base address and length in bytes, split evenly
    /// between the rings. `(0, 0)` (the default) means no output heap.
    fn heap(&self) -> (u64, u64) {
        (0, 0)
    }

    /// Called in every loop iteration that found nothing to do. Never blocks for long: it may
    /// pause the pipeline or briefly yield, nothing more.
    fn spin_hint(&self);
}
