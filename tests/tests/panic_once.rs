//! A Rust kernel's panic is reported once: in the run's error (with where it panicked), not
//! also by the process's panic hook or a log line. The run happens in a child process (this
//! test binary started again), whose whole stderr is counted.

use std::process::Command;

use pto_runtime_core::{Config, KernelId, TaskSpec, WorkerClass};
use pto_sim::{KernelTable, SimOptions};

const CHILD: &str = "PTO_PANIC_ONCE_CHILD";

/// In the child: a run whose kernel panics, its error printed as the examples print one.
#[test]
fn child_runs_a_kernel_that_panics() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let kernels = KernelTable::new().with(KernelId(0), "boom", |_| panic!("the tile is gone"));
    let e = pto_sim::run(Config::tiny(), kernels, SimOptions::default(), |o| {
        o.submit(&TaskSpec::new(KernelId(0), WorkerClass::Aiv))
            .unwrap();
    })
    .expect_err("the kernel panics");
    eprintln!("error: {e}");
}

#[test]
fn a_kernels_panic_is_reported_once_with_where_it_panicked() {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_runs_a_kernel_that_panics", "--nocapture"])
        .env(CHILD, "1")
        .env("RUST_LOG", "warn")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(err.matches("the tile is gone").count(), 1, "once: {err}");
    assert!(
        err.contains("kernel `boom` (0): the kernel panicked at tests/tests/panic_once.rs:"),
        "{err}"
    );
}
