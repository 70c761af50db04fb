//! Starting and stopping the simulated cores.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long dropping a machine waits for its core threads to leave their kernels.
pub const JOIN_DEADLINE: Duration = Duration::from_secs(2);

use pto_runtime_core::{Config, ConfigError, CoreId, Knob, MAX_ENGINE_QUEUES};

use crate::engine::{Engine, EngineClock, EngineOptions};
use crate::error::SimError;
use crate::kernels::KernelTable;
use crate::memory::DeviceMemory;
use crate::memory_map::MemoryMap;
use crate::platform::SimPlatform;
use crate::silicon::Silicon;

/// The environment variable that turns [`SimOptions::check_accesses`] on by default
/// (`PTO_SIM_CHECK_ACCESSES=1 cargo test` checks every run of a test suite).
pub const CHECK_ACCESSES_VAR: &str = "PTO_SIM_CHECK_ACCESSES";

/// The stack of a thread that runs simulated cores, and so the kernels' stack: as large as a
/// process's main thread usually has (it is reserved, not used, until a kernel needs it).
pub const CORE_STACK_BYTES: usize = 8 << 20;

/// Device address of the first byte of simulated device memory (address 0 stays invalid).
pub const MEMORY_BASE: u64 = 0x1_0000_0000;

/// Knobs of the simulated machine.
#[derive(Clone, Debug)]
pub struct SimOptions {
    /// Spin iterations an idle core polls its doorbell before it parks (tens of nanoseconds
    /// each). A few microseconds of spinning keeps back-to-back dispatches off the futex path;
    /// more steals the CPU from the scheduler on a small host.
    pub spin_before_park: u32,
    /// Pin scheduler threads and core threads to separate host CPUs (see [`CpuPlan`]), so the
    /// OS never time-slices a scheduler against the cores it drives. Off by default: tests
    /// run many simulations side by side.
    pub pin_threads: bool,
    /// Bytes of simulated device memory (counters, buffers, transfer sources and targets).
    pub memory_bytes: usize,
    /// Bytes of device memory set aside as the output heap the orchestrator allocates task
    /// buffers from (split between the rings).
    pub heap_bytes: usize,
    /// Simulated DMA/RDMA engines.
    pub engines: u32,
    /// Latency and jitter of every engine.
    pub engine: EngineOptions,
    /// The clock every engine lands its transfers by: the wall clock (the default), or a
    /// [`crate::VirtualClock`] the caller moves, for runs whose landing order must not
    /// depend on timing.
    pub engine_clock: EngineClock,
    /// How many host threads run the simulated cores.
    pub core_threads: CoreThreads,
    /// What the chip charges ([`Silicon::a2a3`]), or `None` (the default): every operation
    /// costs what the host takes, and kernels run as long as their functions do.
    pub silicon: Option<Silicon>,
    /// Place the machine's memory at the host addresses of its storage
    /// ([`DeviceMemory::host_addressed`]) instead of at [`MEMORY_BASE`], so kernels that
    /// dereference device addresses as pointers (C kernels of the device ABI, run in this
    /// process) reach it. Off by default: synthetic addresses make a stray pointer an error
    /// the simulator reports, not a write into the host's memory.
    pub host_addresses: bool,
    /// Name a crash in user code: a fatal signal (SIGSEGV, SIGBUS, SIGFPE, SIGILL) in a
    /// kernel or in the orchestration prints one line naming the kernel, the task, the core
    /// and the address (or the orchestration), and the process exits with
    /// [`crate::crash::exit_status`] of the signal (see [`crate::crash`]). On by default; the
    /// handler passes signals of other threads on to whatever handled them before.
    pub name_crashes: bool,
    /// Check every task's memory accesses against what the program declared (see
    /// [`crate::AccessReport`]): the run records the byte ranges each kernel reads and
    /// writes through the memory API and tensor views, and fails when two tasks touch the
    /// same bytes, one writing, with no dependency declared between them (a forgotten
    /// dependency, found in every run rather than one in twenty). Off by default (recording
    /// costs each access a thread-local push), unless the environment variable
    /// [`CHECK_ACCESSES_VAR`] is set (to anything but `0`): a whole test suite of workloads
    /// can then be checked without changing a line.
    pub check_accesses: bool,
    /// How task records leave the profile ring: drained by a host thread while the run goes
    /// (the default: a record per task, whatever `Config::profile_capacity`), or not at all.
    pub records: crate::RecordStream,
    /// Record every task's producers as it is submitted ([`crate::SimRun::producers`]), so a
    /// trace of the run carries its DAG (its critical path and overhead shares can then be
    /// read back, see `pto_trace::add_dependencies`). Off by default: a vector per task.
    pub record_producers: bool,
}

/// How the simulated cores map onto host threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CoreThreads {
    /// One thread per core: kernels run truly concurrently, but on a host with fewer CPUs
    /// than cores an idle core parks and costs a wake-up (the default; what tests want).
    PerCore,
    /// This many threads (at most one per core), each running its share of the cores as an
    /// event loop: no core parks while another of its thread has work, so many cores cost
    /// what few do. A kernel that blocks holds up the other cores of its thread.
    Shared(usize),
}

impl CoreThreads {
    /// One shared thread per host CPU left after `reserved` (schedulers and the
    /// orchestrator), at least one: what `pto-launch bench` uses.
    pub fn per_spare_cpu(reserved: usize) -> Self {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        CoreThreads::Shared(cpus.saturating_sub(reserved).max(1))
    }

    /// The cores of thread `t` of `threads`, for `cores` cores: round robin, so AIC and AIV
    /// cores spread evenly.
    fn cores_of(t: usize, threads: usize, cores: u16) -> Vec<CoreId> {
        (0..cores)
            .filter(|&i| i as usize % threads == t)
            .map(CoreId)
            .collect()
    }
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            spin_before_park: 100,
            pin_threads: false,
            memory_bytes: 16 << 20,
            heap_bytes: 1 << 20,
            engines: 2,
            engine: EngineOptions::default(),
            engine_clock: EngineClock::Wall,
            core_threads: CoreThreads::PerCore,
            silicon: None,
            host_addresses: false,
            name_crashes: true,
            check_accesses: std::env::var_os(CHECK_ACCESSES_VAR).is_some_and(|v| v != "0"),
            records: crate::RecordStream::DEFAULT,
            record_producers: false,
        }
    }
}

/// Which host CPU each simulator thread runs on when pinning: schedulers (and the
/// orchestrator, beside scheduler 0) take the first CPUs, all but one at most; cores share
/// the rest round-robin.
#[derive(Clone, Debug)]
pub struct CpuPlan {
    cpus: Vec<core_affinity::CoreId>,
    for_schedulers: usize,
}

impl CpuPlan {
    /// The plan for `schedulers` scheduler threads on this host, or `None` if the host CPUs
    /// cannot be listed or there is only one.
    pub fn new(schedulers: u8) -> Option<Self> {
        let cpus = core_affinity::get_core_ids()?;
        if cpus.len() < 2 {
            return None;
        }
        let for_schedulers = (schedulers as usize).clamp(1, cpus.len() - 1);
        Some(CpuPlan {
            cpus,
            for_schedulers,
        })
    }

    /// Pins the calling thread as scheduler `i`.
    pub fn pin_scheduler(&self, i: usize) {
        core_affinity::set_for_current(self.cpus[i % self.for_schedulers]);
    }

    /// Pins the calling thread as the orchestrator: beside scheduler 0, because on a small
    /// host the simulated cores' CPUs are the busier ones (measured: chain 0.73 vs 1.04
    /// µs/hop on 2 CPUs).
    pub fn pin_orchestrator(&self) {
        self.pin_scheduler(0);
    }

    /// Pins the calling thread as core `i`.
    pub fn pin_core(&self, i: usize) {
        let rest = &self.cpus[self.for_schedulers..];
        core_affinity::set_for_current(rest[i % rest.len()]);
    }
}

/// The simulated cores of one run, on threads as [`SimOptions::core_threads`] says.
/// Dropping the machine stops and joins them.
pub struct SimMachine {
    platform: Arc<SimPlatform>,
    threads: Vec<JoinHandle<()>>,
}

impl SimMachine {
    /// Starts the cores of `cfg` (AIC first, then AIV) on their threads.
    pub fn start(cfg: &Config, kernels: KernelTable, opts: SimOptions) -> Result<Self, SimError> {
        Self::start_with(cfg, kernels, opts, Vec::new())
    }

    /// Like [`SimMachine::start`], with `extra` memory ranges the machine can address besides
    /// its own (a multi-rank job's communication windows).
    pub fn start_with(
        cfg: &Config,
        kernels: KernelTable,
        opts: SimOptions,
        extra: Vec<Arc<DeviceMemory>>,
    ) -> Result<Self, SimError> {
        cfg.validate()?;
        if cfg.cores() == 0 {
            return Err(SimError::Config(ConfigError::NoCores));
        }
        let local = if opts.host_addresses {
            DeviceMemory::host_addressed(opts.memory_bytes)
        } else {
            DeviceMemory::new(MEMORY_BASE, opts.memory_bytes)
        };
        let local = Arc::new(local.map_err(|_| SimError::OutOfMemory {
            what: "simulated device memory",
            bytes: opts.memory_bytes as u64,
            knobs: &[Knob::MemoryBytes],
        })?);
        let mut memory = MemoryMap::new(local, extra).map_err(|e| SimError::Heap(e.to_string()))?;
        if opts.check_accesses {
            memory.log_accesses();
        }
        let memory = Arc::new(memory);
        let heap = match opts.heap_bytes {
            0 => (0, 0),
            n => (
                memory
                    .alloc(n, 64)
                    .map_err(|e| SimError::Heap(e.to_string()))?,
                n as u64,
            ),
        };
        let engines = (0..opts.engines)
            .map(|i| {
                // Engines the schedulers drain get a completion queue per scheduler.
                let queues = if (i as usize) < MAX_ENGINE_QUEUES {
                    cfg.schedulers
                } else {
                    0
                };
                Engine::start_on(
                    i,
                    memory.clone(),
                    opts.engine,
                    queues,
                    opts.engine_clock.clone(),
                )
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(SimError::Engine)?;
        let mut platform =
            SimPlatform::new(cfg, kernels, memory, engines, heap, opts.silicon.as_ref());
        if opts.check_accesses {
            platform.checker = Some(Arc::default());
        }
        if opts.record_producers {
            platform.producers = Some(std::sync::Mutex::default());
        }
        let platform = Arc::new(platform);
        let spin_before_park = opts.spin_before_park;
        let name_crashes = opts.name_crashes;
        // A kernel's panic is its error, reported with the run's: not printed by the hook too.
        crate::kernel_panic::install_quiet_hook();
        if name_crashes && let Err(e) = crate::crash::name_crashes() {
            log::warn!("crashes in kernels will not be named: {e}");
        }
        let plan = if opts.pin_threads {
            CpuPlan::new(cfg.schedulers)
        } else {
            None
        };
        let mut machine = SimMachine {
            platform: platform.clone(),
            threads: Vec::new(),
        };
        let cores = cfg.cores();
        let threads = match opts.core_threads {
            CoreThreads::PerCore => cores as usize,
            CoreThreads::Shared(n) => n.clamp(1, cores as usize),
        };
        for t in 0..threads {
            let ids = CoreThreads::cores_of(t, threads, cores);
            let p = platform.clone();
            let plan = plan.clone();
            let name = match ids.as_slice() {
                [one] if one.0 < cfg.aic_cores => format!("sim-aic-{}", one.0),
                [one] => format!("sim-aiv-{}", one.0),
                _ => format!("sim-cores-{t}"),
            };
            let mine = ids.clone();
            let handle = std::thread::Builder::new()
                .name(name.clone())
                .stack_size(CORE_STACK_BYTES)
                .spawn(move || {
                    if let Some(plan) = plan {
                        plan.pin_core(t);
                    }
                    let _named = name_crashes.then(crate::crash::prepare_thread);
                    crate::core_thread::core_loop(&p, &mine, spin_before_park)
                })
                .map_err(|source| SimError::Spawn { name, source })?;
            for id in ids {
                let _ = platform.cores[id.0 as usize]
                    .thread
                    .set(handle.thread().clone());
            }
            machine.threads.push(handle);
        }
        Ok(machine)
    }

    /// The platform the runtime drives.
    pub fn platform(&self) -> &SimPlatform {
        &self.platform
    }
}

impl Drop for SimMachine {
    /// Stops the cores and joins them, waiting at most `JOIN_DEADLINE` (2 s): a core still inside
    /// a kernel that never returns (the run has failed with a timeout by then) is left
    /// detached and named in the log, so dropping the machine never hangs.
    fn drop(&mut self) {
        self.platform.shutdown.store(true, Ordering::Release);
        for t in &self.threads {
            t.thread().unpark();
        }
        let deadline = Instant::now() + JOIN_DEADLINE;
        while Instant::now() < deadline && !self.threads.iter().all(|t| t.is_finished()) {
            std::thread::sleep(Duration::from_millis(1));
        }
        for t in self.threads.drain(..) {
            if t.is_finished() {
                let _ = t.join();
            } else {
                log::error!(
                    "simulated core thread {} is still inside a kernel after {JOIN_DEADLINE:?}; \
                     leaving it detached",
                    t.thread().name().unwrap_or("?")
                );
            }
        }
    }
}
