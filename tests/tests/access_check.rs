//! The simulator's check for a forgotten dependency (`SimOptions::check_accesses`): a kernel
//! that reads, through the memory API, bytes another task writes, with no dependency
//! declared, fails the run in every run (not one in twenty), naming both tasks and the
//! bytes; the same program with the dependency declared (named, or through tensor
//! arguments) passes; accesses outside every declared tensor are reported; atomic counters
//! are synchronisation, not a race; and with the check off nothing is recorded.

use pto_runtime_core::{Config, KernelId, TaskId, TaskSpec, TensorArg, Tile, WorkerClass};
use pto_sim::{KernelCtx, KernelError, KernelTable, SimError, SimOptions, Transfer};

const PRODUCE: KernelId = KernelId(0);
const CONSUME: KernelId = KernelId(1);
const BUMP: KernelId = KernelId(2);
const PUT: KernelId = KernelId(3);
const N: usize = 256;

/// `args = [x]`: x[i] = i.
fn produce(ctx: &KernelCtx<'_>) -> Result<(), KernelError> {
    let [x] = ctx.args_array()?;
    let v: Vec<f32> = (0..N).map(|i| i as f32).collect();
    ctx.memory().write_f32s(x, &v)?;
    Ok(())
}

/// `args = [x, y]`: y[i] = 2 x[i].
fn consume(ctx: &KernelCtx<'_>) -> Result<(), KernelError> {
    let [x, y] = ctx.args_array()?;
    let mut v = vec![0f32; N];
    ctx.memory().read_f32s(x, &mut v)?;
    v.iter_mut().for_each(|e| *e *= 2.0);
    ctx.memory().write_f32s(y, &v)?;
    Ok(())
}

/// `args = [counter]`: adds 1 to a shared counter (an atomic word).
fn bump(ctx: &KernelCtx<'_>) -> Result<(), KernelError> {
    let [c] = ctx.args_array()?;
    ctx.memory().add32(c, 1)?;
    Ok(())
}

/// `args = [src, dst]`: an engine copies N f32 (N / 2 words) from src to dst, and the task
/// completes once it landed.
fn put(ctx: &KernelCtx<'_>) -> Result<(), KernelError> {
    let [src, dst] = ctx.args_array()?;
    let post = ctx.post_queued(0, Transfer::copy(src, dst, N / 2))?;
    ctx.defer_entry(0, post)?;
    Ok(())
}

fn kernels() -> KernelTable {
    KernelTable::new()
        .with(PRODUCE, "produce", produce)
        .with(CONSUME, "consume", consume)
        .with(BUMP, "bump", bump)
        .with(PUT, "put", put)
}

fn checked() -> SimOptions {
    SimOptions {
        check_accesses: true,
        ..SimOptions::default()
    }
}

/// How the consumer is told to wait for the producer.
#[derive(Clone, Copy, PartialEq)]
enum Declared {
    Nothing,
    Named,
    Tensors,
}

/// A producer of x and a consumer of x into y; the producer's and consumer's ids.
fn pipeline(declared: Declared, opts: SimOptions) -> Result<(TaskId, TaskId), SimError> {
    let out = pto_sim::run(Config::tiny(), kernels(), opts, move |o| {
        let mem = o.platform().memory();
        let x = mem.alloc_buffer(N * 4, 64).unwrap();
        let y = mem.alloc_buffer(N * 4, 64).unwrap();
        let tile = Tile::contiguous(x.base, 4, N as u32);
        let xs = [TensorArg::output(x, tile)];
        let pargs = [x.base];
        let mut p = TaskSpec::new(PRODUCE, WorkerClass::Aiv).args(&pargs);
        if declared == Declared::Tensors {
            p = p.tensors(&xs);
        }
        let p = o.submit(&p).unwrap();
        let deps = [p];
        let reads = [
            TensorArg::input(x, tile),
            TensorArg::output(y, Tile::contiguous(y.base, 4, N as u32)),
        ];
        let args = [x.base, y.base];
        let mut c = TaskSpec::new(CONSUME, WorkerClass::Aiv).args(&args[..]);
        match declared {
            Declared::Nothing => {}
            Declared::Named => c = c.deps(&deps),
            Declared::Tensors => c = c.tensors(&reads),
        }
        (p, o.submit(&c).unwrap())
    });
    out.map(|run| run.value)
}

#[test]
fn a_forgotten_dependency_fails_every_run_naming_both_tasks_and_the_bytes() {
    for i in 0..20 {
        let e = pipeline(Declared::Nothing, checked()).expect_err("the check finds the race");
        let SimError::Races { report, run } = &e else {
            panic!("run {i}: not a race: {e}");
        };
        assert_eq!(run.report.finished, 2, "run {i}: the run itself finished");
        assert_eq!(report.race_count, 1, "run {i}: {report}");
        let r = &report.races[0];
        assert_eq!(r.first.name.as_deref(), Some("produce"), "{r}");
        assert_eq!(r.second.name.as_deref(), Some("consume"), "{r}");
        assert!(r.first_writes && !r.second_writes, "{r}");
        assert_eq!(r.bytes.1 - r.bytes.0, (N * 4) as u64, "{r}");
        let text = e.to_string();
        assert!(
            text.contains("kernel `produce`") && text.contains("kernel `consume`"),
            "{text}"
        );
        assert!(text.contains("no dependency orders the two"), "{text}");
    }
}

#[test]
fn the_same_program_with_the_dependency_declared_reports_nothing() {
    for declared in [Declared::Named, Declared::Tensors] {
        let out = pto_sim::run(Config::tiny(), kernels(), checked(), |_| ()).unwrap();
        assert!(out.accesses.unwrap().race_free());
        pipeline(declared, checked()).unwrap_or_else(|e| panic!("{e}"));
    }
}

#[test]
fn accesses_outside_the_declared_tensors_are_reported_and_the_check_off_records_nothing() {
    let out = pto_sim::run(Config::tiny(), kernels(), checked(), |o| {
        let mem = o.platform().memory();
        let (x, y) = (
            mem.alloc_buffer(N * 4, 64).unwrap(),
            mem.alloc_buffer(N * 4, 64).unwrap(),
        );
        // Declares only y, and reads x through the memory API.
        let ys = [TensorArg::output(y, Tile::contiguous(y.base, 4, N as u32))];
        let args = [x.base, y.base];
        o.submit(
            &TaskSpec::new(CONSUME, WorkerClass::Aiv)
                .args(&args[..])
                .tensors(&ys),
        )
        .unwrap()
    })
    .unwrap();
    let report = out.accesses.unwrap();
    assert!(report.race_free(), "{report}");
    assert_eq!(report.undeclared_count, 1, "{report}");
    let u = &report.undeclared[0];
    assert!(!u.write && u.task.id == out.value, "{u}");
    assert!(
        report
            .to_string()
            .contains("outside every tensor it declared"),
        "{report}"
    );
    let off = pipeline(Declared::Nothing, SimOptions::default());
    assert!(
        off.is_ok(),
        "unchecked, the run succeeds (the lottery the check removes)"
    );
}

#[test]
fn atomic_counters_are_synchronisation_and_transfers_are_their_tasks_accesses() {
    // Many tasks bump one counter with no order between them: not a race.
    let out = pto_sim::run(Config::tiny(), kernels(), checked(), |o| {
        let c = o.platform().memory().alloc(8, 8).unwrap();
        for _ in 0..8 {
            o.submit(&TaskSpec::new(BUMP, WorkerClass::Aiv).args(&[c][..]))
                .unwrap();
        }
    });
    assert!(out.is_ok(), "{}", out.unwrap_err());
    // A transfer lands in dst, which another task then reads with no dependency: a race of
    // the posting task's.
    let e = pto_sim::run(Config::tiny(), kernels(), checked(), |o| {
        let mem = o.platform().memory();
        let (src, dst, y) = (
            mem.alloc(N * 4, 64).unwrap(),
            mem.alloc(N * 4, 64).unwrap(),
            mem.alloc(N * 4, 64).unwrap(),
        );
        o.submit(&TaskSpec::new(PUT, WorkerClass::Aiv).args(&[src, dst][..]))
            .unwrap();
        o.submit(&TaskSpec::new(CONSUME, WorkerClass::Aiv).args(&[dst, y][..]))
            .unwrap();
    })
    .expect_err("the transfer's write races the read");
    let SimError::Races { report, .. } = &e else {
        panic!("{e}")
    };
    assert_eq!(
        report.races[0].first.name.as_deref(),
        Some("put"),
        "{report}"
    );
}

const CHILD: &str = "PTO_ACCESS_CHECK_CHILD";

/// In the child, started with the check's environment variable: the forgotten dependency,
/// with the simulator's default options.
#[test]
fn child_runs_the_forgotten_dependency_with_default_options() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let e = pipeline(Declared::Nothing, SimOptions::default());
    assert!(matches!(e, Err(SimError::Races { .. })), "{e:?}");
}

#[test]
fn the_environment_turns_the_check_on_for_default_options() {
    assert!(
        !SimOptions::default().check_accesses
            || std::env::var_os(pto_sim::CHECK_ACCESSES_VAR).is_some()
    );
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_runs_the_forgotten_dependency_with_default_options",
        ])
        .env(CHILD, "1")
        .env(pto_sim::CHECK_ACCESSES_VAR, "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}
