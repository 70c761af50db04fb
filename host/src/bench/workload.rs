//! The synthetic DAGs the bench runs. Every task runs the no-op kernel 0, except in the
//! deferred workload, whose kernel bumps a notification counter and waits on it.

use pto_runtime_core::{
    Buffer, Config, KernelId, SubmitError, TaskId, TaskSpec, TensorArg, Tile, WorkerClass,
};
use pto_sim::{KernelTable, SimError};
use pto_workloads::scene::Scene;

/// The shape of the DAG.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workload {
    /// N tasks without dependencies (AIC, AIV, AIV, … to fill whole clusters).
    Independent,
    /// N vector tasks, each depending on the one before (a hop is complete → release →
    /// dispatch → run).
    Chain,
    /// One source, N-2 tasks depending on it, one sink depending on all of them (joined
    /// through DUMMY tasks, `max_deps` at a time).
    Fanout,
    /// N tasks, each depending on up to 3 of the 64 tasks before it, chosen by a seeded RNG.
    Random,
    /// N independent vector tasks whose kernels bump one notification counter and complete
    /// only once it reaches their index + `--pending` + 1 (at most N): about `--pending`
    /// tasks wait in the deferred sets at any time while the others run and complete.
    Deferred,
    /// N independent tasks with `--args` K tensor arguments each (alternately read and
    /// written), every one a different row of one of 256 matrices: what finding dependencies
    /// through the tensor map costs at submit (`submit_ns_per_task`).
    Tensors,
    /// N independent vector tasks of `--blocks` SPMD blocks each: what a block costs
    /// (`ns_per_block`) against a task of one.
    Spmd,
    /// Not a task DAG: `--ranks` ranks (threads) meeting at the shared-memory barrier; reports
    /// `median_us` per barrier.
    Barrier,
    /// Not a task DAG: `--ranks` ranks (threads) forming a job over TCP on loopback; reports
    /// `bootstrap_ms`.
    Bootstrap,
    /// Not a task DAG: the TCP transport on loopback; reports `rtt_us` (8-byte round trip)
    /// and `bandwidth_gbps` (messages of `--message-bytes`).
    Transport,
    /// Not a task DAG: the silicon cost model's figures beside what the modelled chip did
    /// (status read, dispatch, FIN), and a dependent hop polling and in ring mode.
    Calibrate,
    /// A scene shaped like the C++ runtime's benchmark suite (`scene:NAME`), from
    /// `pto-workloads`: its own size (`--tasks` is refused), kernel durations per kernel
    /// id under `--silicon a2a3`, and the scheduler's overhead share of the makespan.
    Scene(Scene),
}

/// Every workload `--workload` takes, scenes last.
const ALL: [Workload; 18] = [
    Workload::Independent,
    Workload::Chain,
    Workload::Fanout,
    Workload::Random,
    Workload::Deferred,
    Workload::Tensors,
    Workload::Spmd,
    Workload::Barrier,
    Workload::Bootstrap,
    Workload::Transport,
    Workload::Calibrate,
    Workload::Scene(Scene::BatchedGemm),
    Workload::Scene(Scene::PagedAttention),
    Workload::Scene(Scene::PagedAttentionPerHead),
    Workload::Scene(Scene::DecodeLayer),
    Workload::Scene(Scene::DecodeSteps),
    Workload::Scene(Scene::DecodeStepsFresh),
    Workload::Scene(Scene::Moe),
];

impl clap::ValueEnum for Workload {
    fn value_variants<'a>() -> &'a [Self] {
        &ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.name()).help(self.about()))
    }
}

impl serde::Serialize for Workload {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl Workload {
    /// The name `--workload` takes and JSON prints (`independent`, `chain`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Workload::Independent => "independent",
            Workload::Chain => "chain",
            Workload::Fanout => "fanout",
            Workload::Random => "random",
            Workload::Deferred => "deferred",
            Workload::Tensors => "tensors",
            Workload::Spmd => "spmd",
            Workload::Barrier => "barrier",
            Workload::Bootstrap => "bootstrap",
            Workload::Transport => "transport",
            Workload::Calibrate => "calibrate",
            Workload::Scene(Scene::BatchedGemm) => "scene:batched-gemm",
            Workload::Scene(Scene::PagedAttention) => "scene:paged-attention",
            Workload::Scene(Scene::PagedAttentionPerHead) => "scene:paged-attention-per-head",
            Workload::Scene(Scene::DecodeLayer) => "scene:decode-layer",
            Workload::Scene(Scene::DecodeSteps) => "scene:decode-steps",
            Workload::Scene(Scene::DecodeStepsFresh) => "scene:decode-steps-fresh",
            Workload::Scene(Scene::Moe) => "scene:moe",
        }
    }
}

impl Workload {
    /// What it runs, in a line (`--help` prints it beside the name).
    pub fn about(self) -> &'static str {
        match self {
            Workload::Independent => "N tasks without dependencies",
            Workload::Chain => "N vector tasks, each depending on the one before",
            Workload::Fanout => "one source, N-2 tasks depending on it, one sink depending on all",
            Workload::Random => "N tasks, each depending on up to 3 of the 64 before it",
            Workload::Deferred => {
                "N tasks completing through a notification counter, --pending waiting"
            }
            Workload::Tensors => {
                "N independent tasks with --args tensor arguments each (submit cost)"
            }
            Workload::Spmd => "N vector tasks of --blocks SPMD blocks each",
            Workload::Barrier => "--ranks ranks meeting at the shared-memory barrier",
            Workload::Bootstrap => "--ranks ranks forming a job over TCP on loopback",
            Workload::Transport => "the TCP transport on loopback: round trip and bandwidth",
            Workload::Calibrate => "the silicon cost model beside what the modelled chip did",
            Workload::Scene(Scene::BatchedGemm) => "16 tiled GEMMs (320 tasks)",
            Workload::Scene(Scene::PagedAttention) => {
                "paged attention decode, a scope per layer (1 056 tasks)"
            }
            Workload::Scene(Scene::PagedAttentionPerHead) => {
                "paged attention decode, a scope per head (1 056 tasks)"
            }
            Workload::Scene(Scene::DecodeLayer) => "a qwen3-14b-like decode layer (546 tasks)",
            Workload::Scene(Scene::DecodeSteps) => {
                "2 tokens through 4 such layers, each layer replayed from one recorded graph \
                 (4 368 tasks)"
            }
            Workload::Scene(Scene::DecodeStepsFresh) => {
                "the same 2 tokens through 4 layers, every task submitted one by one (4 368 tasks)"
            }
            Workload::Scene(Scene::Moe) => {
                "a mixture-of-experts FFN, the 4 of 16 experts no token chose skipped by \
                 predicates (133 tasks, 32 skipped)"
            }
        }
    }

    /// The kernels a run of this workload registers: the bench's, or the scene's (no-ops,
    /// named).
    pub fn kernels(self) -> KernelTable {
        match self {
            Workload::Scene(s) => s.kernels(),
            _ => bench_kernels(),
        }
    }
}

/// What to run: the DAG, its size and its knobs.
#[derive(Clone, Copy, Debug)]
pub struct BenchPlan {
    /// The DAG shape.
    pub workload: Workload,
    /// Tasks per run.
    pub tasks: u64,
    /// Measured runs (after one warm-up run).
    pub repeats: u32,
    /// Seed of the random workload.
    pub seed: u64,
    /// Tasks kept waiting on deferred conditions (deferred workload).
    pub pending: u64,
    /// Tensor arguments per task (tensors workload).
    pub tensor_args: u16,
    /// SPMD blocks per task (spmd workload; 1 otherwise).
    pub blocks: u16,
}

/// Matrices the tensors workload spreads its tiles over, and their row length in f32.
const TENSOR_BUFFERS: u64 = 256;
const TENSOR_COLS: u64 = 64;
/// Device address of the tensors workload's first matrix (the map only compares addresses).
const TENSOR_BASE: u64 = 0x10_0000_0000;

/// Why the bench could not run.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// The simulator could not start or the run failed.
    #[error(transparent)]
    Sim(#[from] SimError),
    /// A submit was refused.
    #[error("submit failed: {0}")]
    Submit(#[from] SubmitError),
    /// The options make no sense.
    #[error("{0}")]
    Usage(String),
    /// The barrier workload's communicator failed.
    #[error("the barrier bench: {0}")]
    Barrier(#[from] crate::comm::CommError),
    /// The bootstrap workload's job did not form.
    #[error("the bootstrap bench: {0}")]
    Bootstrap(#[from] crate::transport::bootstrap::BootstrapError),
    /// The transport workload's connection failed.
    #[error("the transport bench: {0}")]
    Transport(#[from] crate::transport::TransportError),
    /// A scene could not be built.
    #[error("the scene: {0}")]
    Scene(#[from] pto_workloads::BuildError),
}

/// The no-op kernel every bench task runs.
pub const NOOP: KernelId = KernelId(0);
/// The deferred workload's kernel: `args = [counter, expected]`; adds 1 to the 64-bit
/// counter, then registers `counter >= expected`.
pub const NOTIFY_AND_WAIT: KernelId = KernelId(1);

/// A kernel table with the bench kernels.
pub fn bench_kernels() -> KernelTable {
    KernelTable::new().with(NOOP, "noop", |_| Ok(())).with(
        NOTIFY_AND_WAIT,
        "notify_and_wait",
        |ctx| {
            let [counter, expected] = ctx.args_array()?;
            ctx.memory().add64(counter, 1)?;
            ctx.defer_counter64(counter, expected).map_err(Into::into)
        },
    )
}

/// Task `i` of a workload that spreads over every core: AIC, AIV, AIV, … in the ratio of a
/// cluster (one kind only if the machine has one kind).
fn spread(cfg: &Config, i: u64) -> WorkerClass {
    match (cfg.aic_cores, cfg.aiv_cores) {
        (0, _) => WorkerClass::Aiv,
        (_, 0) => WorkerClass::Aic,
        _ if i.is_multiple_of(3) => WorkerClass::Aic,
        _ => WorkerClass::Aiv,
    }
}

/// The class of a workload that runs on one kind of core: vector if the machine has any.
fn vector(cfg: &Config) -> WorkerClass {
    if cfg.aiv_cores > 0 {
        WorkerClass::Aiv
    } else {
        WorkerClass::Aic
    }
}

/// A small xorshift generator: deterministic DAGs from a seed, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Submits the tasks of `plan` through `submit`; `counter` is the device address of a zeroed
/// 64-bit word (deferred workload). Returns how many were submitted (fanout adds DUMMY join
/// tasks).
pub fn submit_workload(
    cfg: &Config,
    plan: &BenchPlan,
    counter: u64,
    mut submit: impl FnMut(&TaskSpec<'_>) -> Result<TaskId, SubmitError>,
) -> Result<u64, SubmitError> {
    let (tasks, seed) = (plan.tasks, plan.seed);
    let mut n = 0u64;
    let mut go = |spec: &TaskSpec<'_>| {
        n += 1;
        submit(spec)
    };
    match plan.workload {
        Workload::Independent => {
            for i in 0..tasks {
                go(&TaskSpec::new(NOOP, spread(cfg, i)))?;
            }
        }
        Workload::Chain => {
            let mut prev: Option<TaskId> = None;
            for _ in 0..tasks {
                let deps = prev.as_slice();
                prev = Some(go(&TaskSpec::new(NOOP, vector(cfg)).deps(deps))?);
            }
        }
        Workload::Fanout => {
            let src = go(&TaskSpec::new(NOOP, spread(cfg, 0)))?;
            let mut level: Vec<TaskId> = Vec::with_capacity(tasks as usize);
            for i in 1..tasks.saturating_sub(1) {
                level.push(go(&TaskSpec::new(NOOP, spread(cfg, i)).deps(&[src]))?);
            }
            let fan_in = cfg.max_deps as usize;
            while level.len() > fan_in {
                let mut next = Vec::with_capacity(level.len() / fan_in + 1);
                for group in level.chunks(fan_in) {
                    next.push(go(&TaskSpec::dummy().deps(group))?);
                }
                level = next;
            }
            if tasks >= 2 {
                go(&TaskSpec::new(NOOP, spread(cfg, 1)).deps(&level))?;
            }
        }
        Workload::Random => {
            let mut rng = Rng(seed | 1);
            let mut recent: Vec<TaskId> = Vec::with_capacity(64);
            for i in 0..tasks {
                let mut deps = [TaskId::from_raw(0); 3];
                let k = if recent.is_empty() {
                    0
                } else {
                    (rng.next() % 4) as usize
                };
                for d in deps.iter_mut().take(k) {
                    *d = recent[(rng.next() % recent.len() as u64) as usize];
                }
                let class = match rng.next() % 8 {
                    0 if cfg.mix_clusters() > 0 => WorkerClass::Mix,
                    1 => WorkerClass::Dummy,
                    _ => spread(cfg, i),
                };
                let id = go(&TaskSpec::new(NOOP, class).deps(&deps[..k]))?;
                if recent.len() == 64 {
                    recent.remove(0);
                }
                recent.push(id);
            }
        }
        Workload::Spmd => {
            for _ in 0..tasks {
                go(&TaskSpec::new(NOOP, vector(cfg)).blocks(plan.blocks))?;
            }
        }
        Workload::Tensors => {
            let k = plan.tensor_args as u64;
            let rows = (tasks * k).div_ceil(TENSOR_BUFFERS).max(1);
            let stride = rows * TENSOR_COLS * 4;
            let mut args = Vec::with_capacity(k as usize);
            for i in 0..tasks {
                args.clear();
                for a in 0..k {
                    let j = i * k + a;
                    let buffer = Buffer::new(TENSOR_BASE + (j % TENSOR_BUFFERS) * stride, stride);
                    let row = j / TENSOR_BUFFERS;
                    let tile = Tile::block(
                        buffer.base + row * TENSOR_COLS * 4,
                        4,
                        1,
                        TENSOR_COLS as u32,
                        TENSOR_COLS,
                    );
                    args.push(if a % 2 == 0 {
                        TensorArg::input(buffer, tile)
                    } else {
                        TensorArg::output(buffer, tile)
                    });
                }
                go(&TaskSpec::new(NOOP, spread(cfg, i)).tensors(&args))?;
            }
        }
        // Run by `run_barrier_bench` and the others, not as tasks; scenes need the
        // orchestrator itself (heap buffers, scopes): `run_bench` submits them.
        Workload::Barrier
        | Workload::Bootstrap
        | Workload::Transport
        | Workload::Calibrate
        | Workload::Scene(_) => {}
        Workload::Deferred => {
            for i in 0..tasks {
                let expected = (i + 1).saturating_add(plan.pending).min(tasks);
                let args = [counter, expected];
                go(&TaskSpec::new(NOTIFY_AND_WAIT, vector(cfg)).args(&args))?;
            }
        }
    }
    Ok(n)
}
