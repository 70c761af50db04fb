//! The AICPU platform against register blocks in ordinary memory, threads playing the
//! AICore cores through the core side of the protocol: DAGs run in dependency order,
//! deferred consumers wait for their counters and engines, kernel errors and bad conditions
//! fail the run with typed errors. Native, and under qemu-aarch64 where the real counter,
//! barriers and cache instructions run.

use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytemuck::{Pod, Zeroable};
use pto_device_sys::aicore::AicoreSide;
use pto_device_sys::block::{CoreBlock, RawCondition};
use pto_device_sys::raw::arch;
use pto_device_sys::raw::memory::{EngineWords, MemRange, WatchedMemory};
use pto_device_sys::raw::regs::CoreBlocks;
use pto_device_sys::{AicpuConfig, AicpuPlatform, Coherence};
use pto_runtime_core::{
    Config, FatalCause, FatalKind, KernelId, ProfileLevel, RegionLayout, RunReport, Runtime,
    TaskSpec, WorkerClass,
};

/// `[slot, value]`: `mem[slot] = value`.
const WRITE: u32 = 0;
/// `[slot]`: `mem[slot] = mem[slot - 1] + 1`.
const CHAIN: u32 = 1;
/// `[slot, expected]`: completes once `mem[slot] >= expected` (a 64-bit counter).
const DEFER: u32 = 2;
/// `[engine, cookie]`: completes once the engine's watermark reaches the cookie.
const DEFER_ENGINE: u32 = 3;
/// Fails with code 77.
const FAIL: u32 = 4;
/// Registers a condition of an unknown kind.
const BAD: u32 = 5;
const KERNELS: u32 = 6;

#[derive(Clone, Copy, Pod, Zeroable)]
#[repr(C, align(64))]
struct Line([u8; 64]);

/// Device memory, register blocks and engine words for one run.
struct Machine {
    blocks: Vec<CoreBlock>,
    mem: Vec<AtomicU64>,
    engines: Vec<AtomicU64>,
}

impl Machine {
    fn new(cores: usize) -> Self {
        Machine {
            blocks: vec![CoreBlock::ZERO; cores],
            mem: (0..1024).map(|_| AtomicU64::new(0)).collect(),
            engines: (0..2).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    fn addr(&self, slot: u64) -> u64 {
        self.mem[slot as usize].as_ptr() as u64
    }
}

/// Plays core `i`: runs what its doorbell brings until `stop`.
fn play_core(m: &Machine, blocks: CoreBlocks<'_>, i: usize, stop: &AtomicBool) {
    let mut side = AicoreSide::new(blocks.core(i).unwrap());
    let base = m.mem[0].as_ptr() as u64;
    let mut idle = 0u32;
    while !stop.load(Ordering::Acquire) {
        let Some(d) = side.poll() else {
            // Five threads spin on fewer CPUs: give the CPU away now and then.
            idle += 1;
            if idle.is_multiple_of(64) {
                std::thread::yield_now();
            }
            std::hint::spin_loop();
            continue;
        };
        let start = arch::counter();
        let slot = d.args[0] as usize;
        let mut conds = Vec::new();
        match d.kernel {
            WRITE => m.mem[slot].store(d.args[1], Ordering::Relaxed),
            CHAIN => {
                let before = m.mem[slot - 1].load(Ordering::Relaxed);
                m.mem[slot].store(before + 1, Ordering::Relaxed);
            }
            DEFER => conds.push(RawCondition {
                kind: RawCondition::COUNTER64,
                word: base + 8 * slot as u64,
                expected: d.args[1],
                ..Default::default()
            }),
            DEFER_ENGINE => conds.push(RawCondition {
                kind: RawCondition::ENGINE,
                word: d.args[0],
                expected: d.args[1],
                ..Default::default()
            }),
            BAD => conds.push(RawCondition {
                kind: 99,
                word: base,
                expected: 1,
                ..Default::default()
            }),
            _ => {
                side.fail(&d, 77);
                continue;
            }
        }
        side.finish(&d, [start, arch::counter()], conds.len() as u32, &conds);
    }
}

/// Runs `orchestrate` on a 1 AIC + 2 AIV machine with one scheduler; returns the report.
fn run(
    m: &Machine,
    coherence: Coherence,
    profile: ProfileLevel,
    orchestrate: impl FnOnce(&mut dyn FnMut(TaskSpec<'_>) -> pto_runtime_core::TaskId),
) -> (RunReport, usize) {
    let cfg = Config {
        task_window: 64,
        max_args: 4,
        aic_cores: 1,
        aiv_cores: 2,
        schedulers: 1,
        profile,
        profile_capacity: 4096,
        task_timeout_us: 20_000_000,
        deferred_timeout_us: 20_000_000,
        ..Config::default()
    };
    let mut region = vec![Line([0; 64]); RegionLayout::new(&cfg).unwrap().size().div_ceil(64)];
    let rt = Runtime::init(bytemuck::cast_slice_mut(&mut region), cfg).unwrap();
    let base = NonNull::new(m.blocks.as_ptr() as *mut CoreBlock).unwrap();
    // SAFETY: `m.blocks` holds 3 zeroed blocks that outlive this function, and from here on
    // they are touched only through `CoreBlocks` (volatile word accesses).
    let blocks = unsafe { CoreBlocks::new(base, m.blocks.len()) };
    let ranges = [MemRange {
        base: m.addr(0),
        len: 8 * m.mem.len() as u64,
    }];
    // SAFETY: the range is `m.mem`, alive for the whole run, written only with atomics.
    let memory = unsafe { WatchedMemory::new(&ranges) };
    let eng = NonNull::new(m.engines.as_ptr() as *mut u64).unwrap();
    // SAFETY: `m.engines` holds 2 words, alive for the run, written only with atomics.
    let engines = unsafe { EngineWords::new(eng, m.engines.len()) };
    let ticks_per_us = calibrate();
    let p = AicpuPlatform::new(AicpuConfig {
        cores: blocks,
        memory,
        engines,
        kernels: KERNELS,
        ticks_per_us: Some(ticks_per_us),
        coherence,
        heap: (0, 0),
    })
    .unwrap();
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        for i in 0..3 {
            let stop = &stop;
            s.spawn(move || play_core(m, blocks, i, stop));
        }
        let sched = s.spawn(|| rt.scheduler(0, &p).unwrap().run());
        {
            let mut o = rt.orchestrator(&p).unwrap();
            orchestrate(&mut |spec| o.submit(&spec).unwrap());
        }
        let _ = sched.join().unwrap();
        stop.store(true, Ordering::Release);
    });
    (rt.report(), rt.task_records().count())
}

/// Counter ticks per microsecond, measured against the OS clock.
fn calibrate() -> u64 {
    if let Some(hz) = arch::counter_frequency() {
        return (hz / 1_000_000).max(1);
    }
    let (t0, c0) = (Instant::now(), arch::counter());
    std::thread::sleep(Duration::from_millis(20));
    let us = t0.elapsed().as_micros().max(1) as u64;
    ((arch::counter() - c0) / us).max(1)
}

fn spec(kernel: u32, class: WorkerClass) -> TaskSpec<'static> {
    TaskSpec::new(KernelId(kernel), class)
}

#[test]
fn a_dag_runs_in_dependency_order_through_the_register_blocks() {
    for coherence in [Coherence::Coherent, Coherence::Manual] {
        let m = Machine::new(3);
        let (report, records) = run(&m, coherence, ProfileLevel::Tasks, |submit| {
            // A chain of 300 hops over AIC and AIV alternately, beside 100 independent writes.
            let mut prev = submit(spec(WRITE, WorkerClass::Aiv).args(&[1, 1000]));
            for i in 2..=300u64 {
                let class = if i % 2 == 0 {
                    WorkerClass::Aic
                } else {
                    WorkerClass::Aiv
                };
                prev = submit(spec(CHAIN, class).args(&[i]).deps(&[prev]));
                submit(spec(WRITE, WorkerClass::Aiv).args(&[500 + i % 100, i]));
            }
        });
        assert_eq!(report.error, None, "{coherence:?}");
        assert_eq!((report.submitted, report.finished), (599, 599));
        assert_eq!(report.live_slots, 0);
        assert_eq!(records, 599, "one record per task");
        for i in 1..=300u64 {
            assert_eq!(
                m.mem[i as usize].load(Ordering::Relaxed),
                999 + i,
                "hop {i}"
            );
        }
    }
}

#[test]
fn deferred_consumers_wait_for_their_counter_and_engine() {
    let m = Machine::new(3);
    let landed = AtomicBool::new(false);
    std::thread::scope(|s| {
        // The "DMA": raises the counter and the engine's watermark a while after start.
        s.spawn(|| {
            std::thread::sleep(Duration::from_millis(30));
            m.mem[10].store(5, Ordering::Relaxed);
            m.engines[1].store(3, Ordering::Relaxed);
            landed.store(true, Ordering::Release);
            m.mem[11].fetch_add(1, Ordering::Release);
        });
        let (report, _) = run(&m, Coherence::Manual, ProfileLevel::Off, |submit| {
            let a = submit(spec(DEFER, WorkerClass::Aiv).args(&[11, 1]));
            let b = submit(spec(DEFER_ENGINE, WorkerClass::Aiv).args(&[1, 3]));
            // The consumer copies what landed: 5 only if it ran after both conditions held.
            submit(spec(CHAIN, WorkerClass::Aic).args(&[11]).deps(&[a, b]));
        });
        assert_eq!(report.error, None);
        assert_eq!(report.finished, 3);
    });
    assert!(landed.load(Ordering::Acquire));
    assert_eq!(
        m.mem[11].load(Ordering::Relaxed),
        6,
        "the consumer ran after the landing"
    );
}

#[test]
fn kernel_errors_and_bad_conditions_fail_the_run_with_typed_errors() {
    let m = Machine::new(3);
    let (report, _) = run(&m, Coherence::Coherent, ProfileLevel::Off, |submit| {
        let a = submit(spec(FAIL, WorkerClass::Aiv));
        submit(spec(WRITE, WorkerClass::Aic).args(&[3, 3]).deps(&[a]));
    });
    let e = report.error.expect("the kernel error fails the run");
    assert_eq!(e.cause, FatalCause::KernelFailed { code: 77 });
    assert!(e.core.is_some() && e.task.is_some());
    assert_eq!(
        m.mem[3].load(Ordering::Relaxed),
        0,
        "the consumer never ran"
    );

    let m = Machine::new(3);
    let (report, _) = run(&m, Coherence::Coherent, ProfileLevel::Off, |submit| {
        submit(spec(BAD, WorkerClass::Aiv).args(&[0]));
    });
    assert_eq!(
        report.error.map(|e| e.kind()),
        Some(FatalKind::BadCondition)
    );

    // A counter outside the watched memory is a bad condition too.
    let m = Machine::new(3);
    let (report, _) = run(&m, Coherence::Coherent, ProfileLevel::Off, |submit| {
        submit(spec(DEFER, WorkerClass::Aiv).args(&[5000, 1]));
    });
    assert_eq!(
        report.error.map(|e| e.kind()),
        Some(FatalKind::BadCondition)
    );
}
