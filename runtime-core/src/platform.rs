//! The `Platform` trait: the scheduler's only access to the machine.
#![forbid(unsafe_code)]

use crate::condition::Watch;
use crate::ids::{CoreId, KernelId, TaskId, Token};
use crate::observe::stall::Stall;
use crate::protocol::{RawCondition, ResultWord, StatusWord};
use crate::queues::completion_queue::CompletionQueue;
use crate::task_spec::TaskSpec;
use crate::tensor::arg::KernelTensor;

/// What a core is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum CoreKind {
    /// A cube core.
    Aic,
    /// A vector core.
    Aiv,
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
    /// Lanes of one block of the task (3 for MIX, else 1).
    pub lanes: u8,
    /// This execution's SPMD block (0 for a task of one block).
    pub block: u16,
    /// Blocks of the task (1 unless it asked for more).
    pub blocks: u16,
    /// Scalar arguments.
    pub args: &'a [u64],
    /// Tensor arguments, in the order the task gave them.
    pub tensors: &'a [KernelTensor],
    /// Record when the kernel starts and ends (profiling at `Tasks`), for
    /// [`Platform::lane_times`].
    pub profile: bool,
}

/// The scheduler's only access to the machine: clock, doorbells, status and result words,
/// caches. Platforms move the words of [`crate::protocol`]; the scheduler decodes them.
///
/// A core runs the tokens rung on its doorbell in order, one at a time, and holds at most two
/// (the running one and one pending): the scheduler never rings a third before the first
/// retired. For each token the core writes the token's result word, then reports FIN in its
/// status word (it may report ACK first). Implementations: the AICPU (`pto-device-sys`),
/// threads (`pto-sim`), and C callbacks (`pto-runtime-capi`).
pub trait Platform: Sync {
    /// A monotonic cycle counter, shared by every thread of the run. Never blocks.
    fn now(&self) -> u64;

    /// Counter ticks per microsecond (50 on a2a3's 50 MHz system counter; at least 1).
    fn ticks_per_us(&self) -> u64;

    /// Whether `kernel` can be dispatched. Called at submit, so an unknown kernel is a typed
    /// submit error rather than a failed run.
    fn has_kernel(&self, kernel: KernelId) -> bool;

    /// Writes the payload of `token` for `core` into the slot that `token` selects (two per
    /// core, by token parity). The core does not look at it before the doorbell rings. The
    /// scheduler only writes the slot of a token whose predecessor-but-one it retired.
    /// Never blocks.
    fn write_payload(&self, core: CoreId, token: Token, payload: &Payload<'_>);

    /// Rings `core`'s doorbell with `token`. Release ordering: the payload written before this
    /// call is visible to the core when it observes the token. Never blocks.
    fn ring_doorbell(&self, core: CoreId, token: Token);

    /// The core's status word: the last token it reported, ACK or FIN. Acquire ordering:
    /// what the core wrote before the report (result words, conditions, kernel output) is
    /// visible once it is read. Read once per core when a scheduler starts (a core's tokens
    /// continue from the last one it reported, so no report of an earlier run is taken for
    /// this one's). [`StatusWord::NONE`] for a core that does not exist. Never blocks.
    fn core_status(&self, core: CoreId) -> StatusWord;

    /// The result word of the slot `token` selects on `core`. Read after the status word
    /// named `token` or a later token, before the slot is written again. Never blocks.
    fn result(&self, core: CoreId, token: Token) -> ResultWord;

    /// When the kernel of `token` on `core` started and ended (clock ticks), if its payload
    /// asked for times and the core has reported FIN for it. Read by the scheduler right after
    /// it saw that FIN, before the token's slot is reused. Never blocks.
    fn lane_times(&self, _core: CoreId, _token: Token) -> Option<(u64, u64)> {
        None
    }

    /// How many deferred conditions the kernel of `token` on `core` registered (possibly more
    /// than the platform could store: the scheduler then fails the task). Read after the
    /// token's FIN (or, under back-pressure, a few loops later), always before the token's
    /// slot is reused. A token whose kernel registered none reports 0. Never blocks.
    fn conditions(&self, _core: CoreId, _token: Token) -> usize {
        0
    }

    /// Condition `i` of those, as the core wrote it; `None` past what the platform stored.
    fn condition(&self, _core: CoreId, _token: Token, _i: usize) -> Option<RawCondition> {
        None
    }

    /// The current value of `watch`, with Acquire ordering: data that landed before the word
    /// was bumped is visible once the bumped value is read. `None` if the platform cannot
    /// read that word (an address outside device memory and the comm windows, a misaligned
    /// counter, an engine that does not exist). For counters the scheduler first calls
    /// [`Platform::invalidate`] on the word. Never blocks.
    fn read_watch(&self, _watch: Watch) -> Option<u64> {
        None
    }

    /// The `width`-byte element (1, 2, 4 or 8, aligned) at device address `addr` as a
    /// little-endian integer, read after the writes of tasks that finished before it (what a
    /// task's predicate tests at dispatch); `None` if the platform cannot read there (a
    /// predicate there is refused at submit). The default reads the aligned 32- or 64-bit
    /// counter that holds it through [`Platform::read_watch`].
    fn read_value(&self, addr: u64, width: u8) -> Option<u64> {
        if width == 8 {
            return self.read_watch(Watch::Counter64(addr));
        }
        let word = self.read_watch(Watch::Counter32(addr & !3))?;
        let shift = 8 * (addr & 3);
        let mask = match width {
            1 => 0xff,
            2 => 0xffff,
            _ => 0xffff_ffff,
        };
        Some(word >> shift & mask)
    }

    /// Discards cached copies of `len` bytes at device address `addr` so the next read sees
    /// memory written by another agent (DMA, a peer chip). The default does nothing, which
    /// is right where caches are coherent.
    fn invalidate(&self, _addr: u64, _len: usize) {}

    /// Writes back cached copies of `len` bytes at device address `addr` that this thread
    /// wrote, so other agents (cores, DMA) read what it wrote. The default does nothing,
    /// which is right where caches are coherent.
    fn clean(&self, _addr: u64, _len: usize) {}

    /// Scheduler `scheduler`'s completion queue: each core it owns
    /// ([`crate::Config::scheduler_of`]) appends a record there after each FIN (`source`
    /// the core's id, `id` the token, `status` 0 or 1 if the kernel failed), after writing
    /// the status word. Used in [`crate::CompletionMode::Ring`] only, where it must hold
    /// [`crate::Config::completion_queue_capacity`] records. `None` (the default) where the
    /// cores post no records. Never blocks.
    fn completion_queue(&self, _scheduler: u8) -> Option<CompletionQueue<'_>> {
        None
    }

    /// The completion queue engine `engine` posts to for the transfers of scheduler
    /// `scheduler`'s cores: one record per transfer (`source` the engine, `id` the post id,
    /// `status` a [`crate::transfer_status`] code, `time` when it ended or 0), in post order,
    /// after the transfer's data and signal landed (Release: they are visible once the record
    /// is popped). A full queue makes the engine wait, never drop. The scheduler is the
    /// queue's one consumer and drains it every loop; conditions of kind
    /// [`crate::Watch::Queue`] wait on it. `None` (the default) where the engine has only a
    /// watermark. Never blocks.
    fn engine_queue(&self, _scheduler: u8, _engine: u32) -> Option<CompletionQueue<'_>> {
        None
    }

    /// The device memory the orchestrator hands out as task output buffers
    /// ([`crate::Orchestrator::alloc`]): base address and length in bytes, split evenly
    /// between the rings. `(0, 0)` (the default) means no output heap.
    fn heap(&self) -> (u64, u64) {
        (0, 0)
    }

    /// Whether the orchestrator tells this platform of every task it submits
    /// ([`Platform::submitted`]). A constant: a platform that leaves it `false` (the default)
    /// has no code for it on the submit path.
    const OBSERVES_SUBMITS: bool = false;

    /// Whether to tell this run's submits (read per submit, only when
    /// [`Platform::OBSERVES_SUBMITS`] is `true`): a platform that observes some runs only
    /// (the chip, when the host asked for the run's dependencies) says so here.
    #[inline(always)]
    fn observing(&self) -> bool {
        Self::OBSERVES_SUBMITS
    }

    /// Told, on the orchestrator's thread, of each task submitted successfully (its id, what
    /// it was submitted with, and its producers: the tasks it depends on, explicitly or
    /// through its tensor arguments, finished or not), in submission order, when
    /// [`Platform::OBSERVES_SUBMITS`] is `true`: a simulator that checks its tasks' memory
    /// accesses learns what each declared, and one that traces a run learns its DAG. Never
    /// blocks for long.
    fn submitted(&self, _id: TaskId, _spec: &TaskSpec<'_>, _producers: &[TaskId]) {}

    /// Told, by each scheduler as it stops a failed run, what its cores ran and what its
    /// deferred set held: one call per running or held lane and per deferred task. The
    /// default drops them; a platform keeps them for its run report or log. Never blocks.
    fn stalled(&self, _stall: Stall) {}

    /// Called in every loop iteration that found nothing to do, with `idle`: how many
    /// iterations in a row the caller found nothing, this one included (1 after work). A short
    /// streak is a thread waiting a moment for work already under way (a FIN due in a few
    /// hundred ns); a long one, a thread with nothing to do, which may give its CPU away.
    /// Never blocks for long: it may pause the pipeline or briefly yield, nothing more.
    fn spin_hint(&self, idle: u32);
}
