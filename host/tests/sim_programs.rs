//! A user's program on the simulator (`pto_host::sim_backend`, `pto-launch run`'s default
//! backend): the same C orchestration SO and kernel sources the NPU tests run against the
//! fake CANN (`npu_util::programs`; the kernels built as shared objects of this host),
//! through the same orchestration and kernel ABIs. A DAG with
//! tensor arguments checked, 20 runs in one process, a failing kernel's code and task, a
//! hung kernel's timeout with what every live task waited for, an orchestration's own
//! failure; and the command line.

mod npu_util;

use std::process::Command;
use std::sync::atomic::{AtomicI64, Ordering};

use npu_util::{BLOCKS, N, check_sums, kernels_arg, programs, sim_dag as dag, text, trace_slices};
use pto_host::sim_backend::{SimBackendError, SimBackendOptions, run};
use pto_runtime_core::FatalCause;
use pto_sim::SimError;

fn options() -> SimBackendOptions {
    SimBackendOptions {
        clusters: 2,
        ..SimBackendOptions::default()
    }
}

#[test]
fn a_c_orchestration_so_runs_its_dag_on_the_simulator_twenty_times_in_one_process() {
    for i in 0..20 {
        let out = run(&dag(0, 0), &options()).unwrap_or_else(|e| panic!("run {i}: {e}"));
        assert_eq!(out.report.finished, 4 * BLOCKS, "run {i}");
        assert_eq!(out.report.submitted, 4 * BLOCKS, "run {i}");
        check_sums(&out.buffers[0]).unwrap_or_else(|e| panic!("run {i}: {e}"));
    }
}

#[test]
fn the_runs_task_records_name_the_kernels_and_nest_as_perfetto_draws_them() {
    let mut spec = dag(0, 0);
    spec.records = 64;
    let out = run(&spec, &options()).unwrap();
    assert_eq!(out.records.len() as u64, 4 * BLOCKS);
    let trace = pto_sim::chrome_trace_named(&out.records, out.ticks_per_us, &out.kernels);
    pto_sim::check_chrome_trace(&trace).unwrap_or_else(|e| panic!("{e:?}"));
    let names: std::collections::BTreeSet<String> = trace["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "X")
        .filter_map(|e| e["name"].as_str().map(str::to_owned))
        .collect();
    for k in ["fill", "add", "sum"] {
        assert!(names.iter().any(|n| n.contains(k)), "{k} in {names:?}");
    }
}

#[test]
fn a_kernel_that_calls_pto_kernel_fail_fails_the_run_with_its_code_and_task() {
    let err = run(&dag(1, 0), &options()).map(|_| ()).unwrap_err();
    let SimBackendError::Sim(SimError::Run { error, run }) = &err else {
        panic!("not a failed run: {err}");
    };
    assert_eq!(error.cause, FatalCause::KernelFailed { code: 42 }, "{err}");
    assert!(error.task.is_some(), "{err}");
    let text = err.to_string();
    assert!(text.contains("pto_kernel_fail(42)"), "{text}");
    assert!(text.contains("fail"), "the kernel is named: {text}");
    assert!(
        run.report.finished < run.report.submitted,
        "{:?}",
        run.report
    );
}

#[test]
fn a_hung_kernel_times_out_and_the_error_says_what_each_live_task_waited_for() {
    // The hang kernel spins while the flag is 0; set once the run failed, so its core
    // thread leaves.
    let flag = Box::leak(Box::new(AtomicI64::new(0)));
    let mut opts = options();
    opts.task_timeout_us = 300_000;
    let err = run(&dag(2, flag as *const AtomicI64 as u64), &opts)
        .map(|_| ())
        .unwrap_err();
    flag.store(1, Ordering::Release);
    let SimBackendError::Sim(SimError::Run { error, run }) = &err else {
        panic!("not a failed run: {err}");
    };
    assert!(
        matches!(error.cause, FatalCause::TaskTimeout { .. }),
        "{err}"
    );
    assert!(!run.stalls.tasks.is_empty(), "{err}");
    let text = err.to_string();
    assert!(
        text.contains("running"),
        "the stall report is in the error: {text}"
    );
}

#[test]
fn an_orchestration_that_returns_non_zero_fails_the_run_with_its_code() {
    let err = run(&dag(3, 0), &options()).map(|_| ()).unwrap_err();
    match &err {
        SimBackendError::Orchestration {
            code: 7, submitted, ..
        } => assert_eq!(*submitted, 4 * BLOCKS, "{err}"),
        _ => panic!("not the orchestration's failure: {err}"),
    }
    assert!(
        err.to_string().contains("the orchestration returned 7"),
        "{err}"
    );
}

#[test]
fn a_spec_that_names_a_missing_buffer_or_an_empty_so_is_refused_before_anything_runs() {
    let mut spec = dag(0, 0);
    spec.buffers.clear();
    let err = run(&spec, &options()).map(|_| ()).unwrap_err();
    assert!(matches!(err, SimBackendError::Spec(_)), "{err}");
    let mut spec = dag(0, 0);
    spec.orchestration = vec![0x7f, b'E', b'L', b'F'];
    let err = run(&spec, &options()).map(|_| ()).unwrap_err();
    assert!(
        err.to_string().contains("cannot load the orchestration SO"),
        "{err}"
    );
}

fn scratch(name: &str) -> std::path::PathBuf {
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("sim-programs-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `pto-launch run` (no --backend: the simulator) of the DAG, with `more` flags.
fn pto_launch(extra: u64, more: &[&str]) -> std::process::Output {
    let p = programs();
    let bytes = (2 * N * BLOCKS + BLOCKS) * 8;
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pto-launch"));
    cmd.args(["run", "--clusters", "2", "--orchestration"])
        .arg(&p.orchestration_file)
        .args(["--kernels", &kernels_arg(&p.sim_kernel_files)])
        .args(["--buffer", &bytes.to_string()])
        .args([
            "--arg", "kernel:0", "--arg", "kernel:1", "--arg", "kernel:2",
        ])
        .args(["--arg", "buffer:0", "--arg", &N.to_string()])
        .args(["--arg", &BLOCKS.to_string(), "--arg", &extra.to_string()])
        .args(["--arg", "kernel:3"])
        .args(more);
    cmd.output().expect("pto-launch runs")
}

#[test]
fn pto_launch_run_defaults_to_the_simulator_and_writes_the_buffers_and_the_trace() {
    let out = scratch("ok");
    let trace = out.join("run.json");
    let o = pto_launch(
        0,
        &[
            "--output",
            out.to_str().unwrap(),
            "--trace",
            trace.to_str().unwrap(),
        ],
    );
    let text = text(&o);
    assert!(o.status.success(), "{text}");
    let tasks = 4 * BLOCKS;
    assert!(
        text.contains(&format!("simulator: finished {tasks} tasks")),
        "{text}"
    );
    assert!(
        text.contains(&format!("({tasks} of {tasks} task records)")),
        "{text}"
    );
    check_sums(&std::fs::read(out.join("buffer_0.bin")).unwrap()).unwrap();
    let fills = trace_slices(&trace)
        .iter()
        .filter(|e| e["name"].as_str().is_some_and(|n| n.contains("fill")))
        .count() as u64;
    assert_eq!(fills, 2 * BLOCKS, "the kernels' files name their slices");
}

#[test]
fn pto_launch_run_on_the_simulator_reports_a_failing_kernel_and_refuses_npu_flags() {
    let o = pto_launch(1, &["--json"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("simulator:") && err.contains("pto_kernel_fail(42)"),
        "{err}"
    );
    // With --json the failure is an envelope too: an `error`, no `results`.
    let v: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("one JSON envelope on stdout: {e}: {}", text(&o)));
    assert_eq!(v["command"], "run", "{v}");
    assert!(v.get("results").is_none(), "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("pto_kernel_fail(42)")),
        "{v}"
    );
    let o = pto_launch(0, &["--device", "1"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(err.contains("--device applies to --backend npu"), "{err}");
}

#[test]
fn pto_launch_run_json_of_a_hung_run_carries_its_stall_class() {
    // extra 2: a task of kernel 4 (hang) spinning on the word at buffer 1, which stays 0.
    let p = programs();
    let bytes = (2 * N * BLOCKS + BLOCKS) * 8;
    let o = Command::new(env!("CARGO_BIN_EXE_pto-launch"))
        .args(["run", "--clusters", "2", "--orchestration"])
        .arg(&p.orchestration_file)
        .args(["--kernels", &kernels_arg(&p.sim_kernel_files)])
        .args(["--buffer", &bytes.to_string(), "--buffer", "8"])
        .args([
            "--arg", "kernel:0", "--arg", "kernel:1", "--arg", "kernel:2",
        ])
        .args(["--arg", "buffer:0", "--arg", &N.to_string()])
        .args(["--arg", &BLOCKS.to_string(), "--arg", "2"])
        .args(["--arg", "kernel:4", "--arg", "buffer:1"])
        .args(["--task-timeout-ms", "300", "--json"])
        .output()
        .expect("pto-launch runs");
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("one JSON envelope on stdout: {e}: {}", text(&o)));
    let class = &v["error"]["stall_class"];
    assert_eq!(class["class"], "running-stalled", "{v}");
    assert!(class["core"].is_u64() && class["task"].is_string(), "{v}");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("stall class: running-stalled"),
        "{}",
        text(&o)
    );
}
