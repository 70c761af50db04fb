//! `SimPlatform`: doorbells, payload buffers and status words in host memory.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::Thread;

use pto_runtime_core::{
    CompletionCell, CompletionEnds, CompletionMode, CompletionQueue, Config, CoreId, KernelId,
    KernelTensor, MAX_ARGS, MAX_TENSORS, Payload, Platform, RawCondition, ResultWord, StatusWord,
    TaskId, TaskSpec, TensorCell, Token, Watch,
};

use crate::access_check::AccessChecker;
use crate::engine::Engine;
use crate::kernel_error::{Failures, KernelFailure};
use crate::kernels::KernelTable;
use crate::memory_map::MemoryMap;
use crate::silicon::{Silicon, SiliconSums, SiliconTicks, spin_for};
use crate::slab::Slab;
use pto_runtime_core::Stall;

/// `spin_hint` yields the CPU at every this many idle calls in a row: a thread idle that long
/// has nothing under way, while a scheduler waiting a few hundred ns for the FIN of a chain's
/// hop (a short streak) keeps its CPU, and the FIN does not wait for a system call.
const YIELD_EVERY: u32 = 16;

/// One payload buffer of a core. The doorbell of a token is the `rung` word of the buffer the
/// token selects, so a dispatch moves one cache line to the core, not two.
#[repr(C, align(64))]
pub(crate) struct PayloadBuf {
    /// The token whose payload this is, stored last (the doorbell).
    pub(crate) rung: AtomicU32,
    /// When the doorbell rang (clock ticks; written only when the run models silicon).
    pub(crate) rung_at: AtomicU64,
    pub(crate) task: AtomicU64,
    pub(crate) kernel: AtomicU32,
    /// `lane | lanes << 8 | nargs << 16 | profile << 24 | ntensors << 25`.
    pub(crate) shape: AtomicU32,
    /// `block | blocks << 16`: the SPMD block this execution runs, of how many.
    pub(crate) block: AtomicU32,
    pub(crate) args: [AtomicU64; MAX_ARGS as usize],
    pub(crate) tensors: [TensorCell; MAX_TENSORS as usize],
}

impl PayloadBuf {
    fn new() -> Self {
        PayloadBuf {
            rung: AtomicU32::new(0),
            rung_at: AtomicU64::new(0),
            task: AtomicU64::new(0),
            kernel: AtomicU32::new(0),
            shape: AtomicU32::new(0),
            block: AtomicU32::new(1 << 16),
            args: std::array::from_fn(|_| AtomicU64::new(0)),
            tensors: std::array::from_fn(|_| TensorCell::new()),
        }
    }
}

/// A value alone on its cache line (what the core writes never shares a line with what the
/// scheduler writes).
#[repr(C, align(64))]
pub(crate) struct Line<T>(pub(crate) T);

/// What a core reports, on one cache line: the status word and, beside it, the result words
/// and kernel times of the last two tokens (by parity), so a FIN moves no extra line.
pub(crate) struct StatusLine {
    /// A [`StatusWord`].
    pub(crate) word: AtomicU32,
    /// The [`ResultWord`] of the token of each parity, written before its FIN.
    pub(crate) results: [AtomicU64; 2],
    /// `(start, end)` of the token of each parity, written before its FIN.
    pub(crate) times: [(AtomicU64, AtomicU64); 2],
}

/// One scheduler's completion queue ([`CompletionMode::Ring`]), in host memory.
pub(crate) struct SimQueue {
    cells: Box<[CompletionCell]>,
    ends: CompletionEnds,
}

impl SimQueue {
    pub(crate) fn view(&self) -> CompletionQueue<'_> {
        CompletionQueue::new(&self.cells, &self.ends)
    }
}

/// The registers of one simulated core.
pub(crate) struct SimCore {
    /// The completion queue this core posts to after each FIN (ring mode only).
    pub(crate) queue: Option<usize>,
    /// The scheduler that owns this core (whose engine queues its transfers report to).
    pub(crate) scheduler: u8,
    /// Written by the core only.
    pub(crate) status: Line<StatusLine>,
    /// Written by the scheduler, selected by token parity.
    pub(crate) payload: [PayloadBuf; 2],
    /// Deferred conditions of the token in the payload buffer of the same parity.
    pub(crate) slabs: [Slab; 2],
    /// Set by the core thread just before it parks.
    pub(crate) sleeping: Line<AtomicBool>,
    pub(crate) thread: OnceLock<Thread>,
}

/// The simulated machine as the scheduler sees it.
pub struct SimPlatform {
    /// The cycle counter (the TSC where it is invariant, else the OS monotonic clock).
    clock: quanta::Clock,
    /// Its reading at start-up, so stamps start near 0.
    origin: u64,
    /// Its ticks per microsecond.
    ticks_per_us: u64,
    pub(crate) cores: Box<[SimCore]>,
    /// Each scheduler's completion queue (ring mode; empty when schedulers poll).
    pub(crate) queues: Box<[SimQueue]>,
    pub(crate) kernels: KernelTable,
    pub(crate) memory: Arc<MemoryMap>,
    pub(crate) engines: Box<[Engine]>,
    /// The output heap in `memory`: base and length.
    heap: (u64, u64),
    pub(crate) shutdown: AtomicBool,
    /// What the kernels that failed said (the result word carries only their codes).
    pub(crate) failures: Failures,
    /// The access check, when the run checks accesses ([`crate::SimOptions::check_accesses`]).
    pub(crate) checker: Option<Arc<AccessChecker>>,
    /// Every task submitted with its producers, when the run records them
    /// ([`crate::SimOptions::record_producers`]).
    pub(crate) producers: Option<std::sync::Mutex<Producers>>,
    /// What the schedulers reported about their lanes and deferred tasks as they stopped a
    /// failed run.
    pub(crate) stalls: std::sync::Mutex<Vec<Stall>>,
    /// The chip's costs, if the run models them.
    pub(crate) silicon: Option<SiliconTicks>,
    /// What the modelled cores took.
    pub(crate) silicon_sums: Line<SiliconSums>,
    /// Times a core thread parked.
    pub(crate) parks: Line<AtomicU64>,
    /// Times a doorbell had to wake a parked core.
    pub(crate) wakes: Line<AtomicU64>,
    /// Times `spin_hint` gave its thread's CPU away.
    yields: Line<AtomicU64>,
}

/// Every task submitted with its producers, in submission order.
pub type Producers = Vec<(TaskId, Vec<TaskId>)>;

impl SimPlatform {
    pub(crate) fn new(
        cfg: &Config,
        kernels: KernelTable,
        memory: Arc<MemoryMap>,
        engines: Vec<Engine>,
        heap: (u64, u64),
        silicon: Option<&Silicon>,
    ) -> Self {
        let clock = quanta::Clock::new();
        let per_us = ticks_per_us(&clock);
        let ring = cfg.completion == CompletionMode::Ring;
        let queues = if ring {
            let cap = cfg.completion_queue_capacity();
            (0..cfg.schedulers)
                .map(|_| SimQueue {
                    cells: (0..cap).map(CompletionCell::new).collect(),
                    ends: CompletionEnds::new(),
                })
                .collect()
        } else {
            Box::default()
        };
        let cores = cfg.cores();
        SimPlatform {
            queues,
            ticks_per_us: per_us,
            silicon: silicon.map(|s| SiliconTicks::new(s, per_us)),
            silicon_sums: Line(SiliconSums::default()),
            origin: clock.raw(),
            clock,
            cores: (0..cores)
                .map(|i| SimCore {
                    queue: ring.then(|| cfg.scheduler_of(CoreId(i)) as usize),
                    scheduler: cfg.scheduler_of(CoreId(i)),
                    status: Line(StatusLine {
                        word: AtomicU32::new(StatusWord::NONE.bits()),
                        results: std::array::from_fn(|_| AtomicU64::new(0)),
                        times: std::array::from_fn(|_| (AtomicU64::new(0), AtomicU64::new(0))),
                    }),
                    payload: [PayloadBuf::new(), PayloadBuf::new()],
                    slabs: [Slab::new(), Slab::new()],
                    sleeping: Line(AtomicBool::new(false)),
                    thread: OnceLock::new(),
                })
                .collect(),
            kernels,
            memory,
            engines: engines.into_boxed_slice(),
            heap,
            shutdown: AtomicBool::new(false),
            failures: Failures::default(),
            checker: None,
            producers: None,
            stalls: std::sync::Mutex::new(Vec::new()),
            parks: Line(AtomicU64::new(0)),
            wakes: Line(AtomicU64::new(0)),
            yields: Line(AtomicU64::new(0)),
        }
    }

    /// The memory that kernels, engines and deferred counters share: the machine's own, and
    /// any communication windows it was given.
    pub fn memory(&self) -> &MemoryMap {
        &self.memory
    }

    /// The simulated DMA/RDMA engines.
    pub fn engines(&self) -> &[Engine] {
        &self.engines
    }

    /// Number of simulated cores.
    pub fn core_count(&self) -> usize {
        self.cores.len()
    }

    /// What the kernel of `task` that failed with `code` said, if a kernel failed so on this
    /// machine (the first 64 failures of a run are kept).
    pub fn kernel_failure(&self, task: TaskId, code: u32) -> Option<KernelFailure> {
        self.failures.find(task, code)
    }

    /// With the silicon model: the mean doorbell-to-start and kernel-end-to-FIN delays the
    /// modelled cores took, in ns, so far.
    pub fn silicon_delays_ns(&self) -> Option<(f64, f64)> {
        self.silicon.as_ref()?;
        let ns = |ticks: f64| ticks * 1_000.0 / self.ticks_per_us.max(1) as f64;
        Some((
            ns(SiliconSums::mean(&self.silicon_sums.0.dispatch)),
            ns(SiliconSums::mean(&self.silicon_sums.0.fin)),
        ))
    }

    /// With the silicon model: how late this host showed the modelled chip's events so far.
    pub fn silicon_lateness(&self) -> Option<crate::silicon::Lateness> {
        self.silicon.as_ref()?;
        let ns = |ticks: f64| ticks * 1_000.0 / self.ticks_per_us.max(1) as f64;
        Some(self.silicon_sums.0.lateness(ns))
    }

    /// How often core threads parked, and how often a doorbell had to wake one.
    pub fn park_counts(&self) -> (u64, u64) {
        (
            self.parks.0.load(Ordering::Relaxed),
            self.wakes.0.load(Ordering::Relaxed),
        )
    }

    /// How often a scheduler or the orchestrator, idle long enough, gave its CPU away
    /// ([`Platform::spin_hint`]).
    pub fn yields(&self) -> u64 {
        self.yields.0.load(Ordering::Relaxed)
    }

    /// Wakes core `i` if it is parked.
    pub(crate) fn wake(&self, core: &SimCore) {
        if core.sleeping.0.load(Ordering::SeqCst)
            && let Some(t) = core.thread.get()
        {
            self.wakes.0.fetch_add(1, Ordering::Relaxed);
            t.unpark();
        }
    }

    fn core(&self, id: CoreId) -> Option<&SimCore> {
        self.cores.get(id.0 as usize)
    }
}

impl Platform for SimPlatform {
    const OBSERVES_SUBMITS: bool = true;

    fn submitted(&self, id: TaskId, spec: &TaskSpec<'_>, producers: &[TaskId]) {
        if let Some(c) = &self.checker {
            c.submitted(id, spec);
        }
        if let Some(p) = &self.producers {
            p.lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push((id, producers.to_vec()));
        }
    }

    fn now(&self) -> u64 {
        // One counter read (~20 cycles), where `Instant::now` costs a clock_gettime: the
        // scheduler reads the clock at every busy loop phase when profiling.
        self.clock.raw().wrapping_sub(self.origin).max(1)
    }

    fn ticks_per_us(&self) -> u64 {
        self.ticks_per_us
    }

    fn has_kernel(&self, kernel: KernelId) -> bool {
        self.kernels.get(kernel).is_some()
    }

    fn write_payload(&self, core: CoreId, token: Token, payload: &Payload<'_>) {
        let Some(c) = self.core(core) else { return };
        let buf = &c.payload[(token.bits() & 1) as usize];
        buf.task.store(payload.task.raw(), Ordering::Relaxed);
        buf.kernel.store(payload.kernel.0, Ordering::Relaxed);
        let n = payload.args.len().min(MAX_ARGS as usize);
        let nt = payload.tensors.len().min(MAX_TENSORS as usize);
        buf.shape.store(
            payload.lane as u32
                | (payload.lanes as u32) << 8
                | (n as u32) << 16
                | (payload.profile as u32) << 24
                | (nt as u32) << 25,
            Ordering::Relaxed,
        );
        buf.block.store(
            u32::from(payload.block) | u32::from(payload.blocks) << 16,
            Ordering::Relaxed,
        );
        for (dst, &a) in buf.args.iter().zip(&payload.args[..n]) {
            dst.store(a, Ordering::Relaxed);
        }
        for (dst, a) in buf.tensors.iter().zip(&payload.tensors[..nt]) {
            dst.store(a);
        }
    }

    fn ring_doorbell(&self, core: CoreId, token: Token) {
        let Some(c) = self.core(core) else { return };
        if let Some(s) = &self.silicon {
            c.payload[(token.bits() & 1) as usize]
                .rung_at
                .store(self.now(), Ordering::Relaxed);
            spin_for(|| self.now(), s.doorbell);
        }
        // SeqCst pairs with the core's `sleeping` store and doorbell re-check: either the
        // core sees the token, or this thread sees it asleep and wakes it.
        c.payload[(token.bits() & 1) as usize]
            .rung
            .store(token.bits(), Ordering::SeqCst);
        self.wake(c);
    }

    fn core_status(&self, core: CoreId) -> StatusWord {
        if let Some(s) = &self.silicon {
            spin_for(|| self.now(), s.status_read);
        }
        self.core(core).map_or(StatusWord::NONE, |c| {
            StatusWord::from_bits(c.status.0.word.load(Ordering::Acquire))
        })
    }

    fn result(&self, core: CoreId, token: Token) -> ResultWord {
        self.core(core).map_or(ResultWord::default(), |c| {
            ResultWord::from_bits(
                c.status.0.results[(token.bits() & 1) as usize].load(Ordering::Relaxed),
            )
        })
    }

    fn lane_times(&self, core: CoreId, token: Token) -> Option<(u64, u64)> {
        let buf = &self.core(core)?.payload[(token.bits() & 1) as usize];
        if buf.shape.load(Ordering::Relaxed) >> 24 & 1 == 0 {
            return None;
        }
        let (start, end) = &self.core(core)?.status.0.times[(token.bits() & 1) as usize];
        Some((start.load(Ordering::Relaxed), end.load(Ordering::Relaxed)))
    }

    fn conditions(&self, core: CoreId, token: Token) -> usize {
        self.core(core)
            .map_or(0, |c| c.slabs[(token.bits() & 1) as usize].len())
    }

    fn condition(&self, core: CoreId, token: Token, i: usize) -> Option<RawCondition> {
        self.core(core)?.slabs[(token.bits() & 1) as usize].get(i)
    }

    fn read_watch(&self, watch: Watch) -> Option<u64> {
        match watch {
            Watch::Counter32(a) => self.memory.load32(a).ok().map(u64::from),
            Watch::Counter64(a) => self.memory.load64(a).ok(),
            Watch::Engine(e) => self.engines.get(e as usize).map(Engine::completed),
            // The scheduler drains engine queues itself (`engine_queue`).
            Watch::Queue(_) => None,
        }
    }

    // Host memory is coherent: nothing to invalidate (the trait's default).

    fn heap(&self) -> (u64, u64) {
        self.heap
    }

    fn completion_queue(&self, scheduler: u8) -> Option<CompletionQueue<'_>> {
        self.queues.get(scheduler as usize).map(SimQueue::view)
    }

    fn stalled(&self, stall: Stall) {
        self.stalls
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(stall);
    }

    fn engine_queue(&self, scheduler: u8, engine: u32) -> Option<CompletionQueue<'_>> {
        self.engines.get(engine as usize)?.queue(scheduler)
    }

    fn spin_hint(&self, idle: u32) {
        // Simulated threads may outnumber host CPUs: a thread idle for a while gives the CPU
        // to one with work (a core about to report FIN, the orchestrator). The streak is the
        // caller's own count, so a thread whose idle passes are slow (a scheduler polling
        // deferred tasks) yields as often as a fast one.
        //
        // Between yields, no spin-wait pause: the next look comes at once. A chain's hop is
        // a streak of a few idle iterations, and a pause (about 25 ns on the development
        // machine's AMD EPYC) delays the FIN's discovery by half of one on average: chain
        // 0.93 of the pausing build (12 interleaved rounds), the other workloads unchanged.
        if idle.is_multiple_of(YIELD_EVERY) {
            self.yields.0.fetch_add(1, Ordering::Relaxed);
            std::thread::yield_now();
        }
    }
}

/// Ticks of `clock`'s raw counter per microsecond (at least 1), from its calibration.
fn ticks_per_us(clock: &quanta::Clock) -> u64 {
    const SPAN: u64 = 1 << 30;
    let ns = clock.delta_as_nanos(0, SPAN).max(1);
    (SPAN.saturating_mul(1000) / ns).max(1)
}

/// What a core reads of a payload besides its arguments.
pub(crate) struct PayloadHead {
    pub(crate) task: TaskId,
    pub(crate) kernel: KernelId,
    pub(crate) lane: u8,
    pub(crate) lanes: u8,
    pub(crate) block: u16,
    pub(crate) blocks: u16,
    /// Scalar arguments read into the caller's array.
    pub(crate) nargs: usize,
}

/// Reads the payload of `token` on `core` (the core thread's side of `write_payload`).
pub(crate) fn read_payload(
    core: &SimCore,
    token: Token,
    args: &mut [u64; MAX_ARGS as usize],
    tensors: &mut Vec<KernelTensor>,
) -> PayloadHead {
    let buf = &core.payload[(token.bits() & 1) as usize];
    let shape = buf.shape.load(Ordering::Relaxed);
    let n = (((shape >> 16) & 0xff) as usize).min(MAX_ARGS as usize);
    for (dst, src) in args[..n].iter_mut().zip(buf.args.iter()) {
        *dst = src.load(Ordering::Relaxed);
    }
    let nt = ((shape >> 25) as usize).min(MAX_TENSORS as usize);
    tensors.clear();
    tensors.extend(buf.tensors[..nt].iter().map(TensorCell::load));
    let block = buf.block.load(Ordering::Relaxed);
    PayloadHead {
        task: TaskId::from_raw(buf.task.load(Ordering::Relaxed)),
        kernel: KernelId(buf.kernel.load(Ordering::Relaxed)),
        lane: shape as u8,
        lanes: (shape >> 8) as u8,
        block: block as u16,
        blocks: (block >> 16) as u16,
        nargs: n,
    }
}
