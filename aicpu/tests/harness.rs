//! The harness that does what CANN does with libpto_aicpu.so: loads it with
//! `dlopen(RTLD_LAZY | RTLD_GLOBAL)`, calls `init` once and `exec` per run on N threads,
//! each with a copy of the payload, while threads run the AICore executor (host build)
//! against fake register windows at the chip's strides and offsets. The DAG comes from a C
//! orchestration SO (`tests/c/orchestration.c`, built by `build.rs`) whose kernels (`tests/c/kernels.c`)
//! compute; every result is checked. Natively, and for aarch64 under qemu-aarch64.

mod harness {
    pub mod chip;
    pub mod so;
}

use std::sync::Mutex;

use harness::chip::Chip;
use harness::so::{exec_on_threads, so};
use pto_device_sys::abi::{
    PTO_AICPU_ABI, PtoAicpuCode, PtoAicpuExecArgs, PtoAicpuInitArgs, PtoAicpuReport,
};
use pto_device_sys::chip::layout::REG_COND;
use pto_runtime_core::ffi::PtoConfig;
use pto_runtime_core::{Config, FatalKind, RegionLayout};

unsafe extern "C" {
    fn pto_test_fill(args: *mut i64);
    fn pto_test_add(args: *mut i64);
    fn pto_test_sum(args: *mut i64);
    fn pto_test_fail(args: *mut i64);
    fn pto_test_hang(args: *mut i64);
    /// `tests/c/orchestration.c`, linked in too: the in-process alternative to its SO.
    fn pto_orchestrate(ops: *const std::ffi::c_void, args: *const u64, n: u32) -> i32;
}

/// The SO's state is the process's: one test at a time drives it.
static SERIAL: Mutex<()> = Mutex::new(());

const K_FILL: u64 = 0;
const K_ADD: u64 = 1;
const K_SUM: u64 = 2;
const K_FAIL: u64 = 3;
const K_HANG: u64 = 4;

// The timeouts below are bounds, never waited for on a good run: generous, because these
// tests run more threads than the machine has CPUs.

/// Counter ticks per µs: the CPU says on aarch64; on x86_64 the TSC is measured.
fn ticks_per_us() -> u64 {
    if cfg!(target_arch = "aarch64") {
        return 0;
    }
    let (t0, c0) = (std::time::Instant::now(), counter());
    std::thread::sleep(std::time::Duration::from_millis(20));
    let (dt, dc) = (t0.elapsed().as_micros() as u64, counter() - c0);
    (dc / dt.max(1)).max(1)
}

fn counter() -> u64 {
    pto_device_sys::raw::arch::counter()
}

fn init(watchdog_ms: u64, exit_ms: u64) {
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
struct Line([u64; 8]);

/// 64-byte aligned, zeroed words.
fn words(n: usize) -> Vec<Line> {
    vec![Line([0u64; 8]); n.div_ceil(8)]
}

/// How a run gets its orchestration.
#[derive(Clone, Copy)]
enum Orch<'a> {
    /// An orchestration SO's bytes, which the SO writes out and `dlopen`s.
    So(&'a [u8]),
    /// A function already in the process.
    Function,
}

/// The harness's orchestration SO (`tests/c/orchestration.c`), built by `build.rs`.
fn orch_so() -> Vec<u8> {
    std::fs::read(env!("PTO_TEST_ORCH_SO")).expect("the orchestration SO")
}

/// One machine and its buffers, for as many runs as a test wants.
struct Rig {
    chip: Chip,
    cfg: Config,
    region: Vec<Line>,
    data: Vec<Line>,
    kernels: Vec<u64>,
    heap: Vec<Line>,
    hang_flag: Box<i64>,
    orch_so: Vec<u8>,
    n: u64,
    blocks: u64,
}

impl Rig {
    fn new(schedulers: u8, task_timeout_us: u64) -> Self {
        let (aic, aiv) = (2, 4);
        let cfg = Config {
            aic_cores: aic as u16,
            aiv_cores: aiv as u16,
            schedulers,
            task_window: 64,
            task_timeout_us,
            ..Config::default()
        };
        let size = RegionLayout::new(&cfg).expect("layout").size();
        let (n, blocks) = (64, 6);
        let kernels = vec![
            pto_test_fill as *const () as usize as u64,
            pto_test_add as *const () as usize as u64,
            pto_test_sum as *const () as usize as u64,
            pto_test_fail as *const () as usize as u64,
            pto_test_hang as *const () as usize as u64,
        ];
        Rig {
            chip: Chip::new(aic, aiv),
            cfg,
            region: words(size / 8 + 8),
            data: words((3 * n * blocks + blocks) as usize),
            kernels,
            heap: words(64 << 10),
            hang_flag: Box::new(0),
            orch_so: orch_so(),
            n,
            blocks,
        }
    }

    fn data_ptr(&mut self) -> *mut i64 {
        self.data.as_mut_ptr().cast()
    }

    /// One run, as the host does it: executors first (except `skip`), then `exec` on every
    /// thread; the report once all returned.
    fn run(&mut self, extra: u64, skip: &[usize]) -> PtoAicpuReport {
        let so = std::mem::take(&mut self.orch_so);
        let r = self.run_with(Orch::So(&so), extra, skip);
        self.orch_so = so;
        r
    }

    /// One run with `orch`.
    fn run_with(&mut self, orch: Orch<'_>, extra: u64, skip: &[usize]) -> PtoAicpuReport {
        self.data.iter_mut().for_each(|w| *w = Line([u64::MAX; 8]));
        *self.hang_flag = 0;
        let mut report = PtoAicpuReport::default();
        let base = self.data_ptr() as u64;
        let (kx, kx_arg) = match extra {
            1 => (K_FAIL, 0),
            2 => (K_HANG, &raw mut *self.hang_flag as u64),
            _ => (0, 0),
        };
        let orch_args = [
            K_FILL,
            K_ADD,
            K_SUM,
            base,
            self.n,
            self.blocks,
            extra,
            kx,
            kx_arg,
        ];
        let (handshakes, slots, regs, nregs) = self.chip.addrs();
        let threads = self.cfg.schedulers as u32 + 1;
        let args = PtoAicpuExecArgs {
            abi: PTO_AICPU_ABI,
            threads,
            cpu_mask: 0,
            region: self.region.as_mut_ptr() as u64,
            region_len: (self.region.len() * 64) as u64,
            config: PtoConfig::from_config(&self.cfg),
            handshakes,
            slots,
            regs,
            nregs,
            coherence: 0,
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
        };
        self.chip.launch(skip);
        let rcs = exec_on_threads(args, threads as usize);
        // 3: a thread arrived after a failed setup closed the run (it took no part).
        assert!(
            rcs.iter().all(|&r| r == 0 || r == 3),
            "exec returned {rcs:?}"
        );
        // The host frees a hung kernel only by resetting the device; here it lets it end.
        // SAFETY: the flag outlives the executors, which are joined next.
        unsafe { (&raw mut *self.hang_flag).write_volatile(1) };
        self.chip.join();
        // SAFETY: the last thread out wrote the report before its `exec` returned.
        unsafe { (&raw const report).read_volatile() }
    }

    /// Whether every block's sum is the one the kernels must have computed.
    fn sums_check(&mut self) -> Result<(), String> {
        let (n, blocks) = (self.n as i64, self.blocks as i64);
        let sums = self.data_ptr();
        for b in 0..blocks {
            // SAFETY: inside `data`, written by the kernels before their FIN.
            let got = unsafe { sums.add((3 * n * blocks + b) as usize).read_volatile() };
            let want = n * (3 * b + 1) + n * (n - 1);
            if got != want {
                return Err(format!("block {b}: sum {got}, want {want}"));
            }
        }
        Ok(())
    }

    /// A run that must succeed, results checked; its report.
    fn good_run(&mut self) -> PtoAicpuReport {
        let r = self.run(0, &[]);
        self.check_good(r)
    }

    fn check_good(&mut self, r: PtoAicpuReport) -> PtoAicpuReport {
        assert_eq!(r.code, PtoAicpuCode::Ok as u32, "{r} {r:?}");
        assert_eq!(r.sched.finished, 4 * self.blocks, "{r}");
        assert_eq!(r.cores_closed as usize, self.chip.cores());
        self.sums_check().unwrap();
        assert!(
            self.chip.all_closed(),
            "every window closed, every exit acknowledged"
        );
        r
    }
}

#[test]
fn a_hundred_runs_in_one_process_each_checked() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    init(30_000, 5_000);
    let mut rig = Rig::new(2, 20_000_000);
    let start = std::time::Instant::now();
    let mut last_run = 0;
    // CI's pass under qemu-aarch64 runs fewer (`PTO_HARNESS_RUNS`): 100 runs there take
    // tens of minutes on a 2-CPU machine.
    let runs = std::env::var("PTO_HARNESS_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100u32);
    for _ in 0..runs {
        let r = rig.good_run();
        assert!(r.run > last_run, "runs are counted: {r}");
        last_run = r.run;
    }
    eprintln!("{runs} runs in {:?}", start.elapsed());
}

#[test]
fn a_failing_kernel_fails_the_run_and_the_next_run_works() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    init(30_000, 5_000);
    let mut rig = Rig::new(2, 20_000_000);
    let r = rig.run(1, &[]);
    assert_eq!(r.code, PtoAicpuCode::RunFailed as u32, "{r}");
    assert_eq!(r.sched.error_kind, FatalKind::KernelFailed as u32, "{r}");
    assert_eq!(r.sched.error_detail, 42, "the kernel's code: {r}");
    assert!(rig.chip.all_closed());
    rig.good_run();
}

#[test]
fn a_hung_kernel_is_stopped_by_the_watchdog_and_the_next_run_works() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    init(30_000, 2_000);
    let mut rig = Rig::new(2, 200_000);
    let r = rig.run(2, &[]);
    assert_eq!(r.code, PtoAicpuCode::RunFailed as u32, "{r}");
    assert_eq!(r.sched.error_kind, FatalKind::TaskTimeout as u32, "{r}");
    assert!(
        r.sched.error_detail >= 200_000,
        "waited past the timeout: {r}"
    );
    assert_eq!(
        r.cores_closed as usize,
        rig.chip.cores() - 1,
        "the hung core alone missed its exit: {r}"
    );
    // Freed, the core finished its kernel and then took the exit it was left.
    rig.good_run();
}

#[test]
fn the_run_watchdog_aborts_a_run_past_its_deadline() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // A deadline shorter than the task timeout: the run watchdog fires first.
    init(300, 50);
    let mut rig = Rig::new(2, 20_000_000);
    let r = rig.run(2, &[]);
    assert_eq!(r.code, PtoAicpuCode::Watchdog as u32, "{r}");
    assert_eq!(r.value, 300, "the deadline in ms: {r}");
    init(30_000, 5_000);
    rig.good_run();
}

#[test]
fn a_stale_cond_fails_the_run_and_the_next_run_works() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    init(30_000, 5_000);
    let mut rig = Rig::new(2, 20_000_000);
    rig.good_run();
    // A core of an earlier run reported FIN of token 5 and never acknowledged an exit.
    rig.chip.poke(3, REG_COND, 0x8000_0005);
    let r = rig.run(0, &[]);
    assert_eq!(r.code, PtoAicpuCode::StaleCond as u32, "{r} {r:?}");
    assert_eq!((r.core, r.value), (3, 0x8000_0005), "{r}");
    assert_eq!(r.sched.finished, 0, "nothing ran: {r}");
    assert!(
        rig.chip.all_closed(),
        "the exit went to every core, clearing COND"
    );
    rig.good_run();
}

#[test]
fn a_failing_orchestration_fails_the_run_and_the_next_run_works() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    init(30_000, 5_000);
    let mut rig = Rig::new(2, 20_000_000);
    let r = rig.run(3, &[]);
    assert_eq!(
        r.code,
        PtoAicpuCode::OrchestrationFailed as u32,
        "{r} {r:?}"
    );
    assert_eq!(r.value, 7, "the orchestration's return value: {r}");
    assert!(rig.chip.all_closed());
    rig.good_run();
}

#[test]
fn a_missing_executor_fails_the_run_and_the_next_run_works() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    init(30_000, 5_000);
    let mut rig = Rig::new(1, 20_000_000);
    let r = rig.run(0, &[4]);
    assert_eq!(r.code, PtoAicpuCode::CoreNotUp as u32, "{r}");
    assert_eq!(r.core, 4, "{r}");
    assert_eq!(r.cores_closed as usize, rig.chip.cores() - 1, "{r}");
    rig.good_run();
}

#[test]
fn an_orchestration_so_without_its_entry_is_refused_and_the_next_run_works() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    init(30_000, 5_000);
    let mut rig = Rig::new(2, 20_000_000);
    let misnamed = std::fs::read(env!("PTO_TEST_ORCH_MISNAMED_SO")).unwrap();
    let r = rig.run_with(Orch::So(&misnamed), 0, &[]);
    assert_eq!(r.code, PtoAicpuCode::OrchestrationLoad as u32, "{r}");
    assert_eq!(r.value, 3, "no `pto_orchestrate`: {r}");
    assert!(r.to_string().contains("pto_orchestrate"), "{r}");
    assert!(rig.chip.all_closed());
    rig.good_run();
    let garbage = vec![0x5au8; 4096];
    let r = rig.run_with(Orch::So(&garbage), 0, &[]);
    assert_eq!(r.code, PtoAicpuCode::OrchestrationLoad as u32, "{r}");
    assert_eq!(r.value, 2, "dlopen refused it: {r}");
    rig.good_run();
}

#[test]
fn an_orchestration_function_in_the_process_runs_too() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    init(30_000, 5_000);
    let mut rig = Rig::new(2, 20_000_000);
    let r = rig.run_with(Orch::Function, 0, &[]);
    rig.check_good(r);
}

#[test]
fn an_unwritten_report_says_so() {
    let r = PtoAicpuReport::default();
    assert!(r.to_string().contains("no AICPU thread took part"), "{r}");
}

#[test]
fn malformed_payloads_are_refused() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // SAFETY: a null block is part of the ABI (refused).
    assert_eq!(unsafe { (so().exec)(std::ptr::null_mut()) }, 1);
    // SAFETY: as above.
    assert_eq!(unsafe { (so().init)(std::ptr::null_mut()) }, 1);
    let mut a = PtoAicpuInitArgs {
        abi: 99,
        ..PtoAicpuInitArgs::default()
    };
    // SAFETY: a readable init block with a foreign ABI number (refused).
    assert_eq!(unsafe { (so().init)((&raw mut a).cast()) }, 1);
}
