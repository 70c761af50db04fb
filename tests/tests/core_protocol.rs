//! The core protocol's promises on the simulator, through the public API only: a kernel
//! error is never lost behind the core's next token, back-pressure on the deferred set
//! neither times out nor starves MIX-capable clusters, the output heap aligns in every ring,
//! duplicate dependencies count once, and a config too large for memory is an error.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::{Duration, Instant};

use pto_runtime_core::{Config, FatalCause, KernelId, SubmitError, TaskId, TaskSpec, WorkerClass};
use pto_sim::{
    EngineClock, KernelError, KernelTable, Signal, SimError, SimOptions, SimOrchestrator, Transfer,
    VirtualClock, run,
};
use pto_tests::failed;

/// Does nothing.
const OK: KernelId = KernelId(0);
/// Waits 3 ms, then fails with code 77 (on lane `args[0]` of its task only).
const SLOW_FAIL: KernelId = KernelId(1);
/// Sets the `ran` flag of the test.
const MARK: KernelId = KernelId(2);
/// `[counter, expected, started]`: completes once the 32-bit counter reaches `expected`;
/// adds 1 to the 32-bit counter `started` (if given) before it returns.
const WAIT: KernelId = KernelId(3);
/// `[counter, latency_ms]`: an engine bumps the counter after the latency; completes once it
/// did.
const BUMP_LATE: KernelId = KernelId(4);
/// `[a, b]`: sets both 32-bit counters to 1.
const SET_BOTH: KernelId = KernelId(5);
/// `[counter]`: records in `zero` whether the counter still reads 0, then moves the
/// engines' virtual clock (if the run has one) a second forward.
const PEEK: KernelId = KernelId(6);

const CODE: u32 = 77;

struct Flags {
    ran: AtomicBool,
    zero: AtomicU32,
    /// The engines' virtual clock, if the run has one: `PEEK` moves it a second forward
    /// once it looked.
    clock: Option<VirtualClock>,
}

fn kernels(flags: Arc<Flags>) -> KernelTable {
    let (f1, f2) = (flags.clone(), flags);
    KernelTable::new()
        .with(OK, "ok", |_| Ok(()))
        .with(SLOW_FAIL, "slow_fail", |ctx| {
            if u64::from(ctx.lane) != ctx.args.first().copied().unwrap_or(0) {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(3));
            Err(KernelError::new(CODE, "slow failure"))
        })
        .with(MARK, "mark", move |_| {
            f1.ran.store(true, Ordering::SeqCst);
            Ok(())
        })
        .with(WAIT, "wait", |ctx| {
            let [counter, expected] = ctx.args_array()?;
            ctx.defer_counter32(counter, expected as u32)?;
            if let Some(&started) = ctx.args.get(2) {
                // Atomically: two waiters on two cores may count at once.
                ctx.memory().add32(started, 1)?;
            }
            Ok(())
        })
        .with(BUMP_LATE, "bump_late", |ctx| {
            let [counter, ms] = ctx.args_array()?;
            let t = Transfer::signal_only(Signal::Add32 {
                addr: counter,
                delta: 1,
            })
            .after(Duration::from_millis(ms));
            ctx.post(0, t)?;
            ctx.defer_counter32(counter, 1).map_err(Into::into)
        })
        .with(SET_BOTH, "set_both", |ctx| {
            for &a in &ctx.args[..2] {
                ctx.memory().store32(a, 1)?;
            }
            Ok(())
        })
        .with(PEEK, "peek", move |ctx| {
            let v = ctx.memory().load32(ctx.args[0])?;
            f2.zero.store(u32::from(v == 0), Ordering::SeqCst);
            if let Some(c) = &f2.clock {
                c.advance(Duration::from_secs(1));
            }
            Ok(())
        })
}

fn flags() -> Arc<Flags> {
    flags_on(None)
}

fn flags_on(clock: Option<VirtualClock>) -> Arc<Flags> {
    Arc::new(Flags {
        ran: AtomicBool::new(false),
        zero: AtomicU32::new(2),
        clock,
    })
}

fn task(k: KernelId, class: WorkerClass) -> TaskSpec<'static> {
    TaskSpec::new(k, class)
}

#[test]
fn a_kernel_error_is_not_lost_when_the_core_holds_its_next_task() {
    // One AIV core: the failing task runs, the independent one waits in the core's pending
    // slot and runs the moment the failure is reported, the consumer must never run.
    let cfg = Config {
        aic_cores: 0,
        aiv_cores: 1,
        ..Config::tiny()
    };
    for round in 0..12 {
        fails_before_the_consumer(cfg, &format!("round {round}"), |o| {
            let a = o.submit(&task(SLOW_FAIL, WorkerClass::Aiv)).unwrap();
            o.submit(&task(OK, WorkerClass::Aiv)).unwrap();
            let _ = o.submit(&task(MARK, WorkerClass::Aiv).deps(&[a]));
            a
        });
    }
}

#[test]
fn a_failing_mix_lane_is_not_lost_behind_the_pending_tasks() {
    let cfg = Config {
        aic_cores: 1,
        aiv_cores: 2,
        ..Config::tiny()
    };
    for lane in 0..3u64 {
        fails_before_the_consumer(cfg, &format!("lane {lane}"), |o| {
            let m = o
                .submit(&task(SLOW_FAIL, WorkerClass::Mix).args(&[lane]))
                .unwrap();
            o.submit(&task(OK, WorkerClass::Aic)).unwrap();
            o.submit(&task(OK, WorkerClass::Aiv)).unwrap();
            let _ = o.submit(&task(MARK, WorkerClass::Aiv).deps(&[m]));
            m
        });
    }
}

/// Runs `submit` on `cfg`, which submits a `SLOW_FAIL` task (and returns it) with a `MARK`
/// consumer: the run must fail for that task's error, and the consumer must never run. `what`
/// names the case in a failure.
fn fails_before_the_consumer(
    cfg: Config,
    what: &str,
    submit: impl FnOnce(&mut SimOrchestrator<'_, '_>) -> TaskId + Send,
) {
    let f = flags();
    let (e, failing, _) = failed(run(cfg, kernels(f.clone()), SimOptions::default(), submit));
    assert_eq!(
        (e.cause, e.task),
        (FatalCause::KernelFailed { code: CODE }, Some(failing)),
        "{what}"
    );
    assert!(!f.ran.load(Ordering::SeqCst), "{what}: the consumer ran");
}

/// One AIV core and room for one unmet condition.
fn one_waiter(task_timeout_us: u64) -> Config {
    Config {
        aic_cores: 0,
        aiv_cores: 1,
        max_conditions: 1,
        deferred_capacity: 1,
        task_timeout_us,
        ..Config::tiny()
    }
}

#[test]
fn a_fin_held_back_by_a_full_deferred_set_is_not_a_task_timeout() {
    // A's condition lands after 150 ms; B waits for the same counter but finds no room. B's
    // kernel returned long before the 20 ms task timeout: it must not be reported as hung.
    let f = flags();
    let out = run(
        one_waiter(20_000),
        kernels(f.clone()),
        SimOptions::default(),
        |o| {
            let counter = o.alloc(0, 8, 8).unwrap();
            o.submit(&task(BUMP_LATE, WorkerClass::Aiv).args(&[counter, 150]))
                .unwrap();
            o.submit(&task(WAIT, WorkerClass::Aiv).args(&[counter, 1]))
                .unwrap();
        },
    )
    .unwrap();
    assert_eq!(out.report.error, None);
    assert_eq!(out.report.finished, 2);
}

#[test]
fn a_condition_that_holds_already_needs_no_room() {
    // The set is full with A (its counter lands 300 ms after its post, on a virtual clock
    // only B's consumer moves). B's condition holds at its FIN, so B completes at once and
    // its consumer runs before A's counter lands. Had B waited for room, it would wait for
    // A, whose counter never lands: the run would time out.
    let clock = VirtualClock::new();
    let f = flags_on(Some(clock.clone()));
    let out = run(
        one_waiter(10_000_000),
        kernels(f.clone()),
        SimOptions {
            engine_clock: EngineClock::Virtual(clock),
            ..SimOptions::default()
        },
        |o| {
            let late = o.alloc(0, 8, 8).unwrap();
            let zero = o.alloc(0, 8, 8).unwrap();
            o.submit(&task(BUMP_LATE, WorkerClass::Aiv).args(&[late, 300]))
                .unwrap();
            let b = o
                .submit(&task(WAIT, WorkerClass::Aiv).args(&[zero, 0]))
                .unwrap();
            o.submit(&task(PEEK, WorkerClass::Aiv).args(&[late]).deps(&[b]))
                .unwrap();
        },
    )
    .unwrap();
    assert_eq!(out.report.error, None);
    assert_eq!(
        f.zero.load(Ordering::SeqCst),
        1,
        "B's consumer ran only after A's counter landed: B waited for room it did not need"
    );
}

#[test]
fn a_waiting_mix_task_does_not_starve_the_task_that_releases_the_deferred_ones() {
    // One cluster, room for one unmet condition: two AIV tasks wait on counters, a MIX task
    // waits for the whole cluster, and only the AIC task behind it sets the counters.
    for mix in [true, false] {
        let cfg = Config {
            aic_cores: 1,
            aiv_cores: 2,
            max_conditions: 1,
            deferred_capacity: 1,
            deferred_timeout_us: 3_000_000,
            ..Config::tiny()
        };
        let f = flags();
        let out = run(cfg, kernels(f), SimOptions::default(), |o| {
            let x = o.alloc(0, 8, 8).unwrap();
            let y = o.alloc(0, 8, 8).unwrap();
            let started = o.alloc(0, 8, 8).unwrap();
            o.submit(&task(WAIT, WorkerClass::Aiv).args(&[x, 1, started]))
                .unwrap();
            o.submit(&task(WAIT, WorkerClass::Aiv).args(&[y, 1, started]))
                .unwrap();
            // The scenario needs both waiters on their cores before the MIX task comes (an
            // idle cluster would take the MIX task first, and nothing would wait): wait
            // until both kernels ran. Whether the scheduler saw their FINs yet does not
            // matter: until it does both cores are busy, after it one is held for room.
            let memory = o.platform().memory();
            let deadline = Instant::now() + Duration::from_secs(30);
            while memory.load32(started).unwrap() != 2 {
                assert!(Instant::now() < deadline, "the waiters never ran");
                std::thread::yield_now();
            }
            if mix {
                o.submit(&task(OK, WorkerClass::Mix)).unwrap();
            } else {
                o.submit(&TaskSpec::dummy()).unwrap();
            }
            o.submit(&task(SET_BOTH, WorkerClass::Aic).args(&[x, y]))
                .unwrap();
        })
        .unwrap();
        assert_eq!(out.report.error, None, "mix: {mix}");
        assert_eq!(out.report.finished, 4, "mix: {mix}");
    }
}

#[test]
fn buffers_are_aligned_in_every_ring() {
    // A heap whose ring shares do not start on a 64-byte boundary.
    let cfg = Config {
        rings: 3,
        ..Config::tiny()
    };
    let opts = SimOptions {
        heap_bytes: 3 * 1000,
        ..SimOptions::default()
    };
    let out = run(cfg, kernels(flags()), opts, |o| {
        let mut addrs = Vec::new();
        for round in 0..6 {
            for ring in 0..3u8 {
                let align = 1u64 << (3 + (round + ring as u64) % 5);
                let a = o.alloc(ring, 100, align).unwrap();
                o.submit(&task(OK, WorkerClass::Aiv).ring(ring)).unwrap();
                addrs.push((ring, a, align));
            }
        }
        addrs
    })
    .unwrap();
    assert_eq!(out.report.error, None);
    for (ring, a, align) in out.value {
        assert_eq!(
            a % align,
            0,
            "ring {ring}: {a:#x} is not aligned to {align}"
        );
    }
}

#[test]
fn duplicate_dependencies_count_once_against_max_deps() {
    let cfg = Config {
        max_deps: 2,
        ..Config::tiny()
    };
    let out = run(cfg, kernels(flags()), SimOptions::default(), |o| {
        let a = o.submit(&TaskSpec::dummy()).unwrap();
        let b = o.submit(&TaskSpec::dummy()).unwrap();
        let c = o.submit(&TaskSpec::dummy()).unwrap();
        (
            o.submit(&TaskSpec::dummy().deps(&[a, a, a, a])).map(|_| ()),
            o.submit(&TaskSpec::dummy().deps(&[a, b, a, b, b]))
                .map(|_| ()),
            o.submit(&TaskSpec::dummy().deps(&[a, b, a, c])).map(|_| ()),
        )
    })
    .unwrap();
    let (one, two, three) = out.value;
    assert_eq!(one, Ok(()));
    assert_eq!(two, Ok(()));
    assert_eq!(three, Err(SubmitError::TooManyDeps { given: 3, max: 2 }));
}

#[test]
fn a_config_too_large_for_memory_is_an_error_naming_the_knob() {
    // Valid, but its region (or memory) is far beyond any host: an error, not an abort.
    let huge = Config {
        profile_capacity: u32::MAX,
        ..Config::tiny()
    };
    match run(huge, kernels(flags()), SimOptions::default(), |_| ()) {
        Err(SimError::OutOfMemory { what, bytes, .. }) => {
            assert_eq!(what, "runtime region");
            assert!(bytes > 1 << 38, "{bytes}");
        }
        other => panic!("expected OutOfMemory, got {other:?}"),
    }
    let opts = SimOptions {
        memory_bytes: usize::MAX / 2,
        ..SimOptions::default()
    };
    match run(Config::tiny(), kernels(flags()), opts, |_| ()) {
        Err(e @ SimError::OutOfMemory { .. }) => {
            assert!(e.to_string().contains("memory_bytes"), "{e}")
        }
        other => panic!("expected OutOfMemory, got {other:?}"),
    }
}

#[test]
fn a_deferred_set_that_cannot_drain_fails_naming_the_knob() {
    // One AIV core, room for one unmet condition: A waits in the set for X, B waits for room
    // (for Y), C fills the pending slot, and D, which would set X and Y, finds no slot. The
    // error says the set is too small, not that a transfer was lost.
    let cfg = Config {
        deferred_timeout_us: 200_000,
        ..one_waiter(10_000_000)
    };
    let (e, (), _) = failed(run(cfg, kernels(flags()), SimOptions::default(), |o| {
        let x = o.alloc(0, 8, 8).unwrap();
        let y = o.alloc(0, 8, 8).unwrap();
        o.submit(&task(WAIT, WorkerClass::Aiv).args(&[x, 1]))
            .unwrap();
        o.submit(&task(WAIT, WorkerClass::Aiv).args(&[y, 1]))
            .unwrap();
        o.submit(&task(OK, WorkerClass::Aiv)).unwrap();
        let _ = o.submit(&task(SET_BOTH, WorkerClass::Aiv).args(&[x, y]));
    }));
    assert!(
        matches!(e.cause, FatalCause::DeferredFull { capacity: 1, .. }),
        "{e}"
    );
    assert!(e.to_string().contains("raise `deferred_capacity`"), "{e}");
}
