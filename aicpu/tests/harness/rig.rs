//! One fake machine and its buffers, for as many runs of libpto_aicpu.so as a test wants:
//! the chip (`chip.rs`), the runtime's region, the data the orchestration's DAG computes
//! on, the output heap, the tensor descriptor area, an engine's watermark word and the
//! task records the SO copies back. `run` does what the host does for one run.
#![allow(dead_code)]

use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use pto_device_sys::abi::{
    PTO_AICPU_ABI, PtoAicpuCode, PtoAicpuExecArgs, PtoAicpuInitArgs, PtoAicpuReport, PtoProducers,
    PtoRecordStream,
};
use pto_runtime_core::ffi::{PtoConfig, PtoRecord, PtoTensor};
use pto_runtime_core::{Config, ProfileLevel, RegionLayout};

use super::chip::Chip;
use super::record_host::{HostEnd, RecordHost};
use super::so::{exec_on_threads, so};

unsafe extern "C" {
    fn pto_test_fill(args: *mut i64);
    fn pto_test_add(args: *mut i64);
    fn pto_test_sum(args: *mut i64);
    fn pto_test_fail(args: *mut i64);
    fn pto_test_hang(args: *mut i64);
    fn pto_test_land(args: *mut i64);
    fn pto_test_bad_condition(args: *mut i64);
    /// `examples/c/vector_add/add.c`'s kernel (the README's), renamed by the build.
    fn pto_example_vector_add(args: *mut i64);
    /// `tests/c/orchestration.c`, linked in too: the in-process alternative to its SO.
    pub fn pto_orchestrate(ops: *const std::ffi::c_void, args: *const u64, n: u32) -> i32;
}

/// The SO's state is the process's: one test at a time drives it.
pub static SERIAL: Mutex<()> = Mutex::new(());

pub const K_FILL: u64 = 0;
pub const K_ADD: u64 = 1;
pub const K_SUM: u64 = 2;
pub const K_FAIL: u64 = 3;
pub const K_HANG: u64 = 4;
pub const K_LAND: u64 = 5;
pub const K_EXAMPLE_ADD: u64 = 6;
pub const K_BAD_CONDITION: u64 = 7;

/// The f32 values of each vector of examples/c's vector add in the harness (two of its
/// chunks).
pub const EXAMPLE_N: usize = 2048;

/// What the orchestration adds to its DAG (`tests/c/orchestration.c`'s `extra`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Extra {
    /// Nothing.
    None = 0,
    /// A task whose kernel fails with code 42.
    Fail = 1,
    /// A task whose kernel hangs until the test frees it.
    Hang = 2,
    /// The orchestration returns 7.
    Return7 = 3,
    /// A deferred producer whose output the test's engine lands, and its consumer.
    Deferred = 4,
    /// The same, but the engine never lands it.
    NeverLands = 5,
    /// A task whose kernel registers a condition of an unknown kind.
    BadCondition = 6,
    /// After its tasks, the orchestration submits nothing and keeps its submissions open
    /// until an operation is refused (the run's deadline).
    Starve = 7,
}

// The timeouts below are bounds, never waited for on a good run: generous, because these
// tests run more threads than the machine has CPUs.

/// Counter ticks per µs: the CPU says on aarch64; on x86_64 the TSC is measured.
fn ticks_per_us() -> u64 {
    if cfg!(target_arch = "aarch64") {
        return 0;
    }
    let (t0, c0) = (Instant::now(), counter());
    std::thread::sleep(Duration::from_millis(20));
    let (dt, dc) = (t0.elapsed().as_micros() as u64, counter() - c0);
    (dc / dt.max(1)).max(1)
}

fn counter() -> u64 {
    pto_device_sys::raw::arch::counter()
}

/// `init` with a run watchdog and an exit timeout.
pub fn init(watchdog_ms: u64, exit_ms: u64) {
    let mut a = PtoAicpuInitArgs {
        abi: PTO_AICPU_ABI,
        device_id: 0,
        ticks_per_us: ticks_per_us(),
        watchdog_us: watchdog_ms * 1000,
        handshake_timeout_us: 5_000_000,
        exit_timeout_us: exit_ms * 1000,
    };
    // SAFETY: `a` is an init block of the SO's ABI, alive for the call.
    assert_eq!(unsafe { (so().init)((&raw mut a).cast()) }, 0, "init");
}

/// A 64-byte line of device memory.
#[repr(C, align(64))]
#[derive(Clone, Copy)]
pub struct Line([u64; 8]);

/// 64-byte aligned, zeroed words.
fn words(n: usize) -> Vec<Line> {
    vec![Line([0u64; 8]); n.div_ceil(8)]
}

/// How a run gets its orchestration.
#[derive(Clone, Copy)]
pub enum Orch<'a> {
    /// An orchestration SO's bytes, which the SO writes out and `dlopen`s.
    So(&'a [u8]),
    /// A function already in the process.
    Function,
}

/// The harness's orchestration SO (`tests/c/orchestration.c`), built by `build.rs`.
fn orch_so() -> Vec<u8> {
    std::fs::read(env!("PTO_TEST_ORCH_SO")).expect("the orchestration SO")
}

/// Task records the SO may copy back per run.
const RECORDS: usize = 256;

/// One machine and its buffers.
pub struct Rig {
    pub chip: Chip,
    pub cfg: Config,
    region: Vec<Line>,
    data: Vec<Line>,
    kernels: Vec<u64>,
    heap: Vec<Line>,
    descs: Vec<Line>,
    hang_flag: Box<i64>,
    /// Engine 0's completion watermark (the test plays the engine).
    watermark: Box<AtomicU64>,
    /// Set by the deferred producer's kernel once it ran.
    ran: Box<AtomicI64>,
    pub records: Vec<PtoRecord>,
    /// The exec arguments' `coherence` (1: the AICPU maintains its caches).
    pub coherence: u32,
    /// `exec` threads, if not `schedulers + 1` (`+ 2` with a record stream).
    pub threads: Option<u32>,
    /// Whether the records stream to the host while the run goes (`records` is then the
    /// pump's ring), and how the host end is played.
    pub record_host: Option<RecordHost>,
    /// What the host end of the last run's record stream took, and its control block.
    pub streamed: Option<(Vec<PtoRecord>, PtoRecordStream)>,
    /// The ring each task's producers stream through, when the run streams them.
    pub producers: Option<Vec<PtoProducers>>,
    /// What the host end of the last run's producers' stream took, and its control block.
    pub streamed_producers: Option<(Vec<PtoProducers>, PtoRecordStream)>,
    orch_so: Vec<u8>,
    pub n: u64,
    pub blocks: u64,
}

impl Rig {
    /// A machine of 2 AIC and 4 AIV cores, `schedulers` schedulers, tasks timed out after
    /// `task_timeout_us`, profiled at `Tasks` (the SO copies the records back).
    pub fn new(schedulers: u8, task_timeout_us: u64) -> Self {
        Self::with(Config {
            schedulers,
            task_timeout_us,
            ..Self::config()
        })
    }

    /// The rig's default configuration.
    pub fn config() -> Config {
        Config {
            aic_cores: 2,
            aiv_cores: 4,
            schedulers: 2,
            task_window: 64,
            task_timeout_us: 20_000_000,
            profile: ProfileLevel::Tasks,
            ..Config::default()
        }
    }

    /// A machine run with `cfg`.
    pub fn with(cfg: Config) -> Self {
        let size = RegionLayout::new(&cfg).map_or(1 << 20, |l| l.size());
        let (n, blocks) = (64, 6);
        let kernels = vec![
            pto_test_fill as *const () as usize as u64,
            pto_test_add as *const () as usize as u64,
            pto_test_sum as *const () as usize as u64,
            pto_test_fail as *const () as usize as u64,
            pto_test_hang as *const () as usize as u64,
            pto_test_land as *const () as usize as u64,
            pto_example_vector_add as *const () as usize as u64,
            pto_test_bad_condition as *const () as usize as u64,
        ];
        let cores = (cfg.aic_cores + cfg.aiv_cores) as usize;
        Rig {
            chip: Chip::new(cfg.aic_cores as usize, cfg.aiv_cores as usize),
            region: words(size / 8 + 8),
            // The DAG's words, or examples/c's vector add of EXAMPLE_N f32s (three vectors),
            // or its layers (five).
            data: words(((2 * n * blocks + blocks + n + 8) as usize).max(5 * EXAMPLE_N / 2)),
            kernels,
            heap: words(64 << 10),
            descs: words(cores * 2 * cfg.max_tensors as usize * size_of::<PtoTensor>() / 8),
            hang_flag: Box::new(0),
            watermark: Box::new(AtomicU64::new(0)),
            ran: Box::new(AtomicI64::new(0)),
            records: vec![PtoRecord::default(); RECORDS],
            coherence: 0,
            threads: None,
            record_host: None,
            streamed: None,
            producers: None,
            streamed_producers: None,
            orch_so: orch_so(),
            n,
            blocks,
            cfg,
        }
    }

    fn data_ptr(&mut self) -> *mut i64 {
        self.data.as_mut_ptr().cast()
    }

    /// Word `i` of the data.
    pub fn word(&mut self, i: u64) -> i64 {
        // SAFETY: inside `data` (callers index what the DAG writes), written by kernels
        // before their FIN.
        unsafe { self.data_ptr().add(i as usize).read_volatile() }
    }

    /// Sets word `i` of the data.
    pub fn set_word(&mut self, i: u64, v: i64) {
        // SAFETY: inside `data` (callers index what they own); no run is going on.
        unsafe { self.data_ptr().add(i as usize).write_volatile(v) }
    }

    /// Where the deferred producer's buffer starts (words into the data).
    pub fn deferred_buffer(&self) -> u64 {
        2 * self.n * self.blocks + self.blocks
    }

    /// One run, as the host does it: executors first (except `skip`), then `exec` on every
    /// thread; the report once all returned.
    pub fn run(&mut self, extra: Extra, skip: &[usize]) -> PtoAicpuReport {
        let so = std::mem::take(&mut self.orch_so);
        let r = self.run_with(Orch::So(&so), extra, skip);
        self.orch_so = so;
        r
    }

    /// One run of the DAG with `orch`.
    pub fn run_with(&mut self, orch: Orch<'_>, extra: Extra, skip: &[usize]) -> PtoAicpuReport {
        self.data.iter_mut().for_each(|w| *w = Line([u64::MAX; 8]));
        let base = self.data_ptr() as u64;
        let (kx, kx_arg) = match extra {
            Extra::Fail => (K_FAIL, 0),
            Extra::Hang => (K_HANG, &raw mut *self.hang_flag as u64),
            Extra::Deferred | Extra::NeverLands => (K_LAND, self.ran.as_ptr() as u64),
            Extra::BadCondition => (K_BAD_CONDITION, 0),
            _ => (0, 0),
        };
        let orch_args = [
            K_FILL,
            K_ADD,
            K_SUM,
            base,
            self.n,
            self.blocks,
            extra as u64,
            kx,
            kx_arg,
        ];
        self.exec(orch, &orch_args, extra, skip)
    }

    /// Sets f32 `i` of the data (the data as f32 values).
    pub fn set_f32(&mut self, i: usize, v: f32) {
        assert!(i < self.data.len() * 16, "inside the data");
        // SAFETY: inside `data` (asserted), which no kernel runs on between runs.
        unsafe { self.data_ptr().cast::<f32>().add(i).write_volatile(v) }
    }

    /// F32 `i` of the data.
    pub fn f32_at(&mut self, i: usize) -> f32 {
        assert!(i < self.data.len() * 16, "inside the data");
        // SAFETY: inside `data` (asserted), written by kernels before their FIN.
        unsafe { self.data_ptr().cast::<f32>().add(i).read_volatile() }
    }

    /// A base address for the orchestration's own use: the data words (their contents as
    /// the test left them).
    pub fn data_base(&mut self) -> u64 {
        self.data_ptr() as u64
    }

    /// Word `i` of the output heap.
    pub fn heap_word(&self, i: usize) -> u64 {
        self.heap[i / 8].0[i % 8]
    }

    /// One run of `orch` with `orch_args`, as the host does it: executors first (except
    /// `skip`), then `exec` on every thread; the report once all returned.
    pub fn exec(
        &mut self,
        orch: Orch<'_>,
        orch_args: &[u64],
        extra: Extra,
        skip: &[usize],
    ) -> PtoAicpuReport {
        *self.hang_flag = 0;
        self.watermark.store(0, Ordering::Relaxed);
        self.ran.store(0, Ordering::Relaxed);
        let mut report = PtoAicpuReport::default();
        let base = self.data_ptr() as u64;
        let (handshakes, slots, regs, nregs) = self.chip.addrs();
        let host = self
            .record_host
            .map(|how| HostEnd::start(how, self.records.as_ptr(), self.records.len()));
        let pump = u32::from(host.is_some());
        let producers_host = self
            .producers
            .as_ref()
            .map(|p| HostEnd::start(RecordHost::Collects, p.as_ptr(), p.len()));
        let threads = self
            .threads
            .unwrap_or(self.cfg.schedulers as u32 + 1 + pump);
        let args = PtoAicpuExecArgs {
            threads,
            region: self.region.as_mut_ptr() as u64,
            region_len: (self.region.len() * 64) as u64,
            config: PtoConfig::from_config(&self.cfg),
            handshakes,
            slots,
            regs,
            nregs,
            kernels: self.kernels.as_ptr() as u64,
            nkernels: self.kernels.len() as u32,
            norch_args: orch_args.len() as u32,
            orchestrate: match orch {
                Orch::So(_) => 0,
                Orch::Function => pto_orchestrate as *const () as usize as u64,
            },
            orch_args: orch_args.as_ptr() as u64,
            heap_base: self.heap.as_mut_ptr() as u64,
            heap_len: (self.heap.len() * 64) as u64,
            report: &raw mut report as u64,
            orch_so: match orch {
                Orch::So(b) => b.as_ptr() as u64,
                Orch::Function => 0,
            },
            orch_so_len: match orch {
                Orch::So(b) => b.len() as u64,
                Orch::Function => 0,
            },
            tensors: self.descs.as_mut_ptr() as u64,
            engines: self.watermark.as_ptr() as u64,
            nengines: 1,
            records: self.records.as_mut_ptr() as u64,
            records_cap: self.records.len() as u32,
            coherence: self.coherence,
            record_stream: host.as_ref().map_or(0, HostEnd::addr),
            producers: self.producers.as_ref().map_or(0, |p| p.as_ptr() as u64),
            producers_cap: self.producers.as_ref().map_or(0, |p| p.len() as u32),
            producer_stream: producers_host.as_ref().map_or(0, HostEnd::addr),
            ..PtoAicpuExecArgs::default()
        };
        self.chip.launch(skip);
        let engine = (extra == Extra::Deferred).then(|| self.engine(base));
        let rcs = exec_on_threads(args, threads as usize);
        self.streamed = host.map(HostEnd::finish);
        self.streamed_producers = producers_host.map(HostEnd::finish);
        // 3: a thread arrived after a failed setup closed the run (it took no part).
        assert!(
            rcs.iter().all(|&r| r == 0 || r == 3),
            "exec returned {rcs:?}"
        );
        // The host frees a hung kernel only by resetting the device; here it lets it end.
        // SAFETY: the flag outlives the executors, which are joined next.
        unsafe { (&raw mut *self.hang_flag).write_volatile(1) };
        self.chip.join();
        if let Some(e) = engine {
            assert!(e.join().expect("engine thread"), "the producer ran");
        }
        // SAFETY: the last thread out wrote the report before its `exec` returned.
        unsafe { (&raw const report).read_volatile() }
    }

    /// Plays engine 0: once the deferred producer's kernel ran (bounded wait), lands its
    /// buffer (`1000 + i` in word `i`), then raises the watermark to post 1. Whether the
    /// producer ran in time.
    fn engine(&self, base: u64) -> std::thread::JoinHandle<bool> {
        let ran = self.ran.as_ptr() as usize;
        let mark = self.watermark.as_ptr() as usize;
        let buf = base as usize + 8 * self.deferred_buffer() as usize;
        let n = self.n as usize;
        std::thread::spawn(move || {
            // SAFETY: the rig's flag, watermark and data outlive the run this thread is
            // joined in.
            let (ran, mark) =
                unsafe { (&*(ran as *const AtomicI64), &*(mark as *const AtomicU64)) };
            let start = Instant::now();
            while ran.load(Ordering::Acquire) == 0 {
                if start.elapsed() > Duration::from_secs(20) {
                    return false;
                }
                std::thread::yield_now();
            }
            for i in 0..n {
                // SAFETY: inside the data; nothing else writes the buffer now.
                unsafe { (buf as *mut i64).add(i).write_volatile(1000 + i as i64) };
            }
            mark.store(1, Ordering::Release);
            true
        })
    }

    /// Whether every block's sum is the one the kernels must have computed.
    pub fn sums_check(&mut self) -> Result<(), String> {
        let (n, blocks) = (self.n as i64, self.blocks as i64);
        for b in 0..blocks {
            let got = self.word((2 * n * blocks + b) as u64);
            let want = n * (3 * b + 1) + n * (n - 1);
            if got != want {
                return Err(format!("block {b}: sum {got}, want {want}"));
            }
        }
        Ok(())
    }

    /// A run that must succeed, results checked; its report.
    pub fn good_run(&mut self) -> PtoAicpuReport {
        let r = self.run(Extra::None, &[]);
        self.check_good(r)
    }

    /// Checks a run that must have succeeded: its report, the sums, its task records, and
    /// that every core was closed.
    pub fn check_good(&mut self, r: PtoAicpuReport) -> PtoAicpuReport {
        assert_eq!(r.code, PtoAicpuCode::Ok as u32, "{r} {r:?}");
        assert_eq!(r.sched.finished, 4 * self.blocks, "{r}");
        assert_eq!(r.cores_closed as usize, self.chip.cores());
        assert_eq!(r.nstalls, 0, "a good run reports no stalls: {r}");
        self.sums_check().unwrap();
        assert_eq!(
            (r.records as u64, r.records_total as u64),
            (r.sched.finished, r.sched.finished),
            "a record per task: {r}"
        );
        let recs = match &self.streamed {
            Some((taken, _)) => &taken[..],
            None => &self.records[..r.records as usize],
        };
        assert_eq!(recs.len(), r.records as usize, "{r}");
        assert!(
            recs.iter()
                .all(|t| t.kernel <= K_SUM as u32 && t.core != 0xffff && t.complete >= t.fin),
            "records name their kernels and cores: {recs:?}"
        );
        assert!(
            self.chip.all_closed(),
            "every window closed, every exit acknowledged"
        );
        r
    }
}
