//! Failures on the simulator end to end: each is a typed error naming what went wrong, every
//! thread stops, and nothing hangs.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use pto_runtime_core::{
    Config, ConfigError, CoreId, FatalCause, FatalKind, KernelId, RegionLayout, Runtime,
    SubmitError, TaskSpec, WorkerClass,
};
use pto_sim::{KernelError, KernelTable, Region, SimError, SimOptions, error_code, run};
use pto_tests::{Gate, failed};

const OK: KernelId = KernelId(0);
const FAILS: KernelId = KernelId(1);
const PANICS: KernelId = KernelId(2);
const HANGS: KernelId = KernelId(3);

/// The kernels; `HANGS` blocks at `gate` (opened by the test once the run failed).
fn kernels(consumer_ran: Arc<AtomicBool>, gate: &Arc<Gate>) -> KernelTable {
    let gate = gate.clone();
    KernelTable::new()
        .with(OK, "ok", move |ctx| {
            if ctx.args.first() == Some(&1) {
                consumer_ran.store(true, Ordering::SeqCst);
            }
            Ok(())
        })
        .with(FAILS, "fails", |_| {
            Err(KernelError::new(77, "tile 3 is empty"))
        })
        .with(PANICS, "panics", |_| panic!("kernel bug"))
        .with(HANGS, "hangs", move |_| {
            gate.wait();
            Ok(())
        })
}

/// Runs `bad` followed by a consumer of it; returns the run's error and whether the consumer
/// ran.
fn fail_with(bad: KernelId, cfg: Config) -> (pto_runtime_core::FatalError, bool) {
    let ran = Arc::new(AtomicBool::new(false));
    let gate = Gate::new();
    let (err, a, report) = failed(run(
        cfg,
        kernels(ran.clone(), &gate),
        SimOptions::default(),
        |o| {
            let a = o.submit(&TaskSpec::new(bad, WorkerClass::Aic)).unwrap();
            let _ = o.submit(&TaskSpec::new(OK, WorkerClass::Aiv).args(&[1]).deps(&[a]));
            gate.open_once_failed(o);
            a
        },
    ));
    gate.open();
    assert_eq!(err.task, Some(a), "the error names the failed task");
    assert_eq!(report.error, Some(err), "the report holds the same error");
    (err, ran.load(Ordering::SeqCst))
}

#[test]
fn a_failing_kernel_fails_the_run_and_its_consumer_never_runs() {
    let (err, consumer_ran) = fail_with(FAILS, Config::tiny());
    assert_eq!(
        (err.cause, err.core),
        (FatalCause::KernelFailed { code: 77 }, Some(CoreId(0)))
    );
    assert!(!consumer_ran);
}

#[test]
fn a_panicking_kernel_is_a_kernel_error_not_a_crash() {
    let (err, consumer_ran) = fail_with(PANICS, Config::tiny());
    assert_eq!(
        err.cause,
        FatalCause::KernelFailed {
            code: error_code::KERNEL_PANICKED
        }
    );
    assert!(!consumer_ran);
}

#[test]
fn a_kernel_that_outlives_its_timeout_fails_the_run() {
    let cfg = Config {
        task_timeout_us: 20_000,
        schedulers: 1,
        ..Config::tiny()
    };
    let (err, consumer_ran) = fail_with(HANGS, cfg);
    assert_eq!(
        (err.kind(), err.core),
        (FatalKind::TaskTimeout, Some(CoreId(0)))
    );
    assert!(
        matches!(err.cause, FatalCause::TaskTimeout { waited_us } if waited_us >= 20_000),
        "{err:?}"
    );
    assert!(format!("{err}").contains("raise `task_timeout_us`"));
    assert!(!consumer_ran);
}

#[test]
fn an_unknown_kernel_is_refused_at_submit() {
    let out = run(
        Config::tiny(),
        KernelTable::new(),
        SimOptions::default(),
        |o| o.submit(&TaskSpec::new(KernelId(5), WorkerClass::Aiv)),
    )
    .expect("a refused submit does not fail the run");
    assert_eq!(
        out.value,
        Err(SubmitError::UnknownKernel {
            kernel: KernelId(5)
        })
    );
    assert_eq!(out.report.submitted, 0);
}

#[test]
fn a_failed_run_is_an_error_carrying_its_report_and_message() {
    let e = run(
        Config::tiny(),
        kernels(Arc::new(AtomicBool::new(false)), &Gate::new()),
        SimOptions::default(),
        |o| {
            o.submit(&TaskSpec::new(OK, WorkerClass::Aiv)).unwrap();
            o.submit(&TaskSpec::new(FAILS, WorkerClass::Aiv)).unwrap()
        },
    )
    .expect_err("a kernel failed, so the run is an error");
    let report = e.report().expect("a run error keeps the run's report");
    assert_eq!(report.submitted, 2);
    assert!(report.finished <= 1, "{report:?}");
    assert_eq!(
        report.error.map(|e| e.cause),
        Some(FatalCause::KernelFailed { code: 77 })
    );
    let msg = e.to_string();
    assert!(
        msg.starts_with("the run failed: a kernel reported error code 77"),
        "{msg}"
    );
    // The first line is the error; a stall report may follow, naming tasks still live.
    assert!(
        msg.lines()
            .next()
            .is_some_and(|l| l.ends_with("kernel `fails` (1): tile 3 is empty")),
        "{msg}"
    );
    let start = run(
        Config {
            aic_cores: 0,
            aiv_cores: 0,
            ..Config::tiny()
        },
        KernelTable::new(),
        SimOptions::default(),
        |_| (),
    )
    .unwrap_err();
    assert!(
        start.report().is_none(),
        "a run that never started has no report"
    );
}

/// Runs one task of a kernel that fails as `f` does; returns the run's error.
fn kernel_failure(
    f: impl Fn(&pto_sim::KernelCtx<'_>) -> Result<(), KernelError> + Send + Sync + 'static,
) -> SimError {
    let kernels = KernelTable::new().with(OK, "ok", f);
    run(Config::tiny(), kernels, SimOptions::default(), |o| {
        o.submit(&TaskSpec::new(OK, WorkerClass::Aiv)).unwrap()
    })
    .expect_err("the kernel fails")
}

#[test]
fn a_kernels_message_reaches_the_runs_error_with_its_code() {
    let cases: [(SimError, u32, &str); 5] = [
        (
            kernel_failure(|ctx| Ok(ctx.memory().store64(8, 1)?)),
            error_code::MEMORY,
            "device range 0x8+8 bytes lies outside the simulated memory",
        ),
        (
            kernel_failure(|_| panic!("tile {} out of range", 9)),
            error_code::KERNEL_PANICKED,
            ": tile 9 out of range",
        ),
        (
            kernel_failure(|_| Err(KernelError::new(1, "mine"))),
            error_code::RESERVED_CODE,
            "code 1 is reserved for the simulator",
        ),
        (
            kernel_failure(|ctx| ctx.arg(3).map(drop)),
            error_code::MISSING_ARGS,
            "reads 4 scalar arguments but the task has 0",
        ),
        (
            kernel_failure(|ctx| Ok(ctx.post(9, pto_sim::Transfer::copy(0, 0, 0)).map(drop)?)),
            error_code::ENGINE,
            "engine 9",
        ),
    ];
    for (e, code, text) in cases {
        let SimError::Run { error, run } = &e else {
            panic!("not a run error: {e}")
        };
        assert_eq!(error.cause, FatalCause::KernelFailed { code });
        let k = run
            .kernel
            .as_ref()
            .expect("the simulator kept the kernel's failure");
        assert_eq!(
            k.name.as_deref(),
            Some("ok"),
            "the kernel's registered name"
        );
        assert_eq!(
            (k.task, k.kernel, k.error.code()),
            (error.task.unwrap(), OK, code)
        );
        assert!(k.error.message().contains(text), "{}", k.error);
        assert!(e.to_string().contains(text), "{e}");
    }
}

#[test]
fn machines_the_config_cannot_hold_are_refused() {
    let no_cores = Config {
        aic_cores: 0,
        aiv_cores: 0,
        ..Config::tiny()
    };
    let e = run(no_cores, KernelTable::new(), SimOptions::default(), |_| ()).unwrap_err();
    assert!(matches!(e, SimError::Config(ConfigError::NoCores)), "{e}");
    let too_many = Config {
        aic_cores: 64,
        aiv_cores: 128,
        ..Config::tiny()
    };
    let e = run(too_many, KernelTable::new(), SimOptions::default(), |_| ()).unwrap_err();
    assert!(
        e.to_string().contains("exceed the limit of 128 cores"),
        "{e}"
    );
}

#[test]
fn a_region_too_small_or_misaligned_is_refused_with_what_to_change() {
    let cfg = Config::tiny();
    let size = RegionLayout::new(&cfg).unwrap().size();
    let mut region = Region::new(size).unwrap();
    let e = Runtime::init(&mut region.bytes()[..size - 64], cfg)
        .err()
        .unwrap();
    assert_eq!(
        e,
        ConfigError::RegionTooSmall {
            needed: size,
            given: size - 64
        }
    );
    assert!(e.to_string().contains("RegionLayout::size()"));
    let e = Runtime::init(&mut region.bytes()[8..], cfg).err().unwrap();
    assert_eq!(e, ConfigError::RegionMisaligned { offset: 8 });
    assert!(Runtime::init(region.bytes(), cfg).is_ok());
}

#[test]
fn every_handle_is_taken_once() {
    let cfg = Config {
        schedulers: 2,
        ..Config::tiny()
    };
    let mut region = Region::new(RegionLayout::new(&cfg).unwrap().size()).unwrap();
    let rt = Runtime::init(region.bytes(), cfg).unwrap();
    let machine =
        pto_sim::SimMachine::start(&cfg, KernelTable::new(), SimOptions::default()).unwrap();
    let p = machine.platform();
    assert!(rt.orchestrator(p).is_ok());
    assert!(rt.orchestrator(p).is_err());
    assert!(rt.scheduler(1, p).is_ok());
    let e = rt.scheduler(1, p).err().unwrap();
    assert_eq!(
        e.to_string(),
        "scheduler 1 is taken: each index runs on one thread"
    );
    assert!(
        rt.scheduler(2, p)
            .err()
            .unwrap()
            .to_string()
            .contains("does not exist")
    );
}

#[test]
fn a_failed_run_stops_submit_and_every_thread() {
    let mut cfg = Config::tiny();
    cfg.schedulers = 2;
    cfg.aic_cores = 2;
    let gate = Gate::new();
    let (err, refused, _) = failed(run(
        cfg,
        kernels(Arc::new(AtomicBool::new(false)), &gate),
        SimOptions::default(),
        |o| {
            let a = o.submit(&TaskSpec::new(HANGS, WorkerClass::Aic)).unwrap();
            let _ = a;
            // Fail the run through a kernel on an idle vector core (an AIC task could wait in
            // the hung core's pending slot), then keep submitting.
            o.submit(&TaskSpec::new(FAILS, WorkerClass::Aiv)).unwrap();
            // Until the failure is seen (bounded: the gate's limit holds the hung kernel).
            let deadline = Instant::now() + Gate::LIMIT;
            let refused = loop {
                if let Err(e) = o.submit(&TaskSpec::new(OK, WorkerClass::Aiv)) {
                    break Some(e);
                }
                if Instant::now() > deadline {
                    break None;
                }
                std::thread::sleep(Duration::from_micros(100));
            };
            gate.open_once_failed(o);
            refused
        },
    ));
    gate.open();
    assert!(
        matches!(refused, Some(SubmitError::RunFailed(e)) if e.kind() == FatalKind::KernelFailed),
        "{refused:?}"
    );
    assert_eq!(err.cause, FatalCause::KernelFailed { code: 77 });
}

#[test]
fn the_orchestration_can_abort_a_run() {
    let gate = Gate::new();
    let (e, value, _) = failed(run(
        Config::tiny(),
        kernels(Arc::new(AtomicBool::new(false)), &gate),
        SimOptions::default(),
        |o| {
            o.submit(&TaskSpec::new(HANGS, WorkerClass::Aic)).unwrap();
            assert!(o.abort(5));
            gate.open_once_failed(o);
            o.submit(&TaskSpec::new(OK, WorkerClass::Aiv))
        },
    ));
    gate.open();
    assert_eq!(e.cause, FatalCause::Aborted { code: 5 });
    assert_eq!(value, Err(SubmitError::RunFailed(e)));
    assert_eq!(e.to_string(), "the run was aborted with code 5");
}

#[test]
fn a_kernel_that_never_returns_fails_the_run_and_nothing_hangs() {
    let gate = Gate::new();
    let cfg = Config {
        task_timeout_us: 20_000,
        ..Config::tiny()
    };
    // The run on a thread of its own: a run that hung would fail the bounded wait below
    // rather than hang the test.
    let (tx, rx) = std::sync::mpsc::channel();
    let kernels = kernels(Arc::new(AtomicBool::new(false)), &gate);
    std::thread::spawn(move || {
        let result = run(cfg, kernels, SimOptions::default(), |o| {
            o.submit(&TaskSpec::new(HANGS, WorkerClass::Aiv)).unwrap()
        });
        let _ = tx.send(failed(result));
    });
    let outcome = rx.recv_timeout(Gate::LIMIT);
    gate.open(); // let the detached core thread go
    let (e, task, _) = outcome.expect("the run ended while its kernel still hung");
    assert_eq!((e.kind(), e.task), (FatalKind::TaskTimeout, Some(task)));
}
