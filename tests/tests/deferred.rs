//! Deferred completion end to end on the simulator: kernels post transfers to the simulated
//! DMA/RDMA engines and register conditions; consumers must see the landed data.

use std::time::Duration;

use pto_runtime_core::{Config, FatalCause, KernelId, TaskId, TaskSpec, Watch, WorkerClass};
use pto_sim::{KernelCtx, KernelError, KernelTable, Signal, SimOptions, SimRun, Transfer, run};
use pto_tests::failed;

/// `[src, dst, counter, words, latency_us]`: copies `words` words, bumps the 32-bit counter,
/// and completes once the counter reached 1.
const PUT_COUNTER: KernelId = KernelId(0);
/// `[src, dst, words, latency_us]`: copies on engine 0 and completes once engine 0 has
/// completed this post.
const PUT_ENGINE: KernelId = KernelId(1);
/// `[dst, words, pattern]`: fails with code 90 if `dst` does not hold the pattern.
const CHECK: KernelId = KernelId(2);
/// `[src, dst, counter]`: posts a transfer that is lost, waiting for the counter.
const PUT_LOST: KernelId = KernelId(3);
/// `[n]`: registers `n` conditions that hold.
const MANY: KernelId = KernelId(4);

const WORDS: usize = 8;
const STALE: u32 = 90;

fn pattern(i: u64, w: usize) -> u64 {
    i.wrapping_mul(0x9e37_79b9) ^ w as u64
}

fn kernels() -> KernelTable {
    KernelTable::new()
        .with(PUT_COUNTER, "put_counter", |ctx| {
            let [src, dst, counter, words, us] = ctx.args_array()?;
            let t = Transfer::copy(src, dst, words as usize)
                .signal(Signal::Add32 {
                    addr: counter,
                    delta: 1,
                })
                .after(Duration::from_micros(us));
            ctx.post(0, t)?;
            ctx.defer_counter32(counter, 1).map_err(Into::into)
        })
        .with(PUT_ENGINE, "put_engine", |ctx| {
            let [src, dst, words, us] = ctx.args_array()?;
            let t = Transfer::copy(src, dst, words as usize).after(Duration::from_micros(us));
            let cookie = ctx.post(0, t)?;
            ctx.defer_engine(0, cookie).map_err(Into::into)
        })
        .with(CHECK, "check", |ctx: &KernelCtx<'_>| {
            let [dst, words, i] = ctx.args_array()?;
            let mut got = vec![0u64; words as usize];
            ctx.memory().read(dst, &mut got)?;
            let ok = got.iter().enumerate().all(|(w, &v)| v == pattern(i, w));
            if ok {
                Ok(())
            } else {
                Err(KernelError::new(STALE, "stale data"))
            }
        })
        .with(PUT_LOST, "put_lost", |ctx| {
            let [src, dst, counter] = ctx.args_array()?;
            let t = Transfer::copy(src, dst, 1)
                .signal(Signal::Add32 {
                    addr: counter,
                    delta: 1,
                })
                .lost();
            ctx.post(1, t)?;
            ctx.defer_counter32(counter, 1).map_err(Into::into)
        })
        .with(MANY, "many", |ctx| {
            let counter = ctx.memory().alloc(8, 8)?;
            for _ in 0..ctx.args[0] {
                // Holds at once (0 >= 0); past 64 the slab refuses, the count still grows.
                let _ = ctx.defer_counter64(counter, 0);
            }
            Ok(())
        })
}

fn cfg() -> Config {
    Config {
        task_window: 16,
        max_args: 8,
        schedulers: 2,
        aic_cores: 2,
        aiv_cores: 4,
        deferred_timeout_us: 5_000_000,
        ..Config::tiny()
    }
}

/// Submits `n` pairs of (producer posting a pattern with latency `latency(i)` µs, consumer
/// checking it) and runs them.
fn pairs(
    n: u64,
    producer: KernelId,
    latency: impl Fn(u64) -> u64 + Send + Sync,
) -> SimRun<Vec<(TaskId, TaskId)>> {
    let cfg = Config {
        profile: pto_runtime_core::ProfileLevel::Tasks,
        ..cfg()
    };
    run(cfg, kernels(), SimOptions::default(), |o| {
        let mem = o.platform().memory();
        let mut ids = Vec::new();
        for i in 0..n {
            let src = mem.alloc(WORDS * 8, 8).unwrap();
            let dst = mem.alloc(WORDS * 8, 8).unwrap();
            let counter = mem.alloc(8, 8).unwrap();
            let data: Vec<u64> = (0..WORDS).map(|w| pattern(i, w)).collect();
            mem.write(src, &data).unwrap();
            let args: Vec<u64> = if producer == PUT_COUNTER {
                vec![src, dst, counter, WORDS as u64, latency(i)]
            } else {
                vec![src, dst, WORDS as u64, latency(i)]
            };
            let p = o
                .submit(&TaskSpec::new(producer, WorkerClass::Aiv).args(&args))
                .unwrap();
            let c = o
                .submit(
                    &TaskSpec::new(CHECK, WorkerClass::Aic)
                        .args(&[dst, WORDS as u64, i])
                        .deps(&[p]),
                )
                .unwrap();
            ids.push((p, c));
        }
        ids
    })
    .unwrap()
}

#[test]
fn consumers_of_deferred_tasks_read_the_landed_data() {
    // Latencies up to 300 µs: far longer than the kernels, so a consumer released at FIN
    // would read a stale buffer and fail the run with code 90.
    let out = pairs(48, PUT_COUNTER, |i| 50 + (i * 37) % 250);
    assert_eq!(out.report.finished, 96);
    for (p, _) in &out.value {
        let r = out.records.iter().find(|r| r.task == *p).unwrap();
        assert!(
            r.deferred_done >= r.fin && r.complete >= r.deferred_done,
            "{r:?}"
        );
    }
}

#[test]
fn engine_posts_landing_out_of_order_release_each_waiter_once_its_data_landed() {
    // Later submissions post shorter transfers, so posts land out of order; a producer waits
    // for the engine's watermark to pass its own post, and its consumer checks the data.
    let n = 12;
    let out = pairs(n, PUT_ENGINE, |i| 100 * (n - i));
    assert_eq!(out.report.finished, 2 * n);
    let done: Vec<u64> = out
        .value
        .iter()
        .map(|(p, _)| {
            let r = out.records.iter().find(|r| r.task == *p).unwrap();
            assert!(r.deferred_done >= r.fin, "{r:?}");
            r.deferred_done
        })
        .collect();
    assert!(done.iter().all(|&d| d > 0));
}

#[test]
fn a_lost_transfer_ends_in_a_timeout_naming_task_word_and_values() {
    let cfg = Config {
        deferred_timeout_us: 50_000,
        ..cfg()
    };
    let (e, (lost, _, counter), report) = failed(run(cfg, kernels(), SimOptions::default(), |o| {
        let mem = o.platform().memory();
        let (src, dst, counter) = (
            mem.alloc(8, 8).unwrap(),
            mem.alloc(8, 8).unwrap(),
            mem.alloc(8, 8).unwrap(),
        );
        let lost = o
            .submit(&TaskSpec::new(PUT_LOST, WorkerClass::Aiv).args(&[src, dst, counter]))
            .unwrap();
        let consumer = o
            .submit(
                &TaskSpec::new(CHECK, WorkerClass::Aic)
                    .args(&[dst, 1, 7])
                    .deps(&[lost]),
            )
            .unwrap();
        (lost, consumer, counter)
    }));
    assert_eq!(
        (e.cause, e.task),
        (
            FatalCause::DeferredTimeout {
                watch: Watch::Counter32(counter),
                expected: 1,
                last: 0
            },
            Some(lost),
        )
    );
    assert_eq!(
        report.finished, 0,
        "neither the task nor its consumer completed"
    );
    let msg = e.to_string();
    assert!(
        msg.contains("deferred_timeout_us") && msg.contains(&format!("{lost}")),
        "{msg}"
    );
}

#[test]
fn registering_one_condition_too_many_fails_the_task_with_a_typed_error() {
    for n in [5u64, 65] {
        // tiny(): max_conditions = 4; 65 also overflows the simulator's slab.
        let (e, task, _) = failed(run(Config::tiny(), kernels(), SimOptions::default(), |o| {
            o.submit(&TaskSpec::new(MANY, WorkerClass::Aiv).args(&[n]))
                .unwrap()
        }));
        assert_eq!(
            (e.cause, e.task),
            (
                FatalCause::TooManyConditions {
                    registered: n as u32,
                    limit: 4
                },
                Some(task)
            )
        );
    }
    let out = run(Config::tiny(), kernels(), SimOptions::default(), |o| {
        o.submit(&TaskSpec::new(MANY, WorkerClass::Aiv).args(&[4]))
            .unwrap()
    });
    assert!(out.is_ok(), "four conditions are within the limit");
}
