//! `pto-launch run --backend npu` against the fake CANN: the DAG of a C orchestration SO,
//! its buffer written back and checked; a failing kernel reported with the device's run
//! status; missing artifacts named with the flag to give.

mod npu_util;

use std::process::Command;

use npu_util::{BLOCKS, N, check_sums, kernels_arg, kit, text, ticks_per_us, trace_slices};

fn pto_launch(extra: u64, out: &std::path::Path) -> std::process::Output {
    launch_with(extra, out, &kernels_arg(&kit().kernel_files), &[])
}

/// `pto-launch run` of the DAG with `kernels` as given to --kernels, and `more` flags.
fn launch_with(
    extra: u64,
    out: &std::path::Path,
    kernels: &str,
    more: &[&str],
) -> std::process::Output {
    let bytes = (2 * N * BLOCKS + BLOCKS) * 8;
    let mut cmd = launch_command(extra, out, kernels, bytes, "kernel:3");
    cmd.args(more);
    cmd.output().expect("pto-launch runs")
}

/// The command of [`launch_with`], with a buffer of `bytes` and the orchestration's
/// `args[7]` (the kernel of an `extra` task) given as `task_kernel`.
fn launch_command(
    extra: u64,
    out: &std::path::Path,
    kernels: &str,
    bytes: u64,
    task_kernel: &str,
) -> Command {
    let k = kit();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pto-launch"));
    cmd.args([
        "run",
        "--backend",
        "npu",
        "--device",
        "0",
        "--clusters",
        "2",
    ])
    .arg("--orchestration")
    .arg(&k.orchestration_file)
    .args(["--kernels", kernels])
    .args(["--buffer", &bytes.to_string()])
    .args([
        "--arg", "kernel:0", "--arg", "kernel:1", "--arg", "kernel:2",
    ])
    .args([
        "--arg",
        "buffer:0",
        "--arg",
        &N.to_string(),
        "--arg",
        &BLOCKS.to_string(),
    ])
    .args([
        "--arg",
        &extra.to_string(),
        "--arg",
        task_kernel,
        "--arg",
        "0",
    ])
    .arg("--output")
    .arg(out)
    .arg("--aicpu-so")
    .arg(&k.artifacts.aicpu_so)
    .arg("--dispatcher-so")
    .arg(&k.artifacts.dispatcher_so)
    .arg("--aicore-executor")
    .arg(&k.artifacts.aicore_executor)
    .arg("--cann-dir")
    .arg(&k.cann)
    .args(["--device-ticks-per-us", &ticks_per_us().to_string()]);
    cmd
}

fn scratch(name: &str) -> std::path::PathBuf {
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("npu-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn pto_launch_runs_a_dag_on_the_npu_and_writes_the_buffers_back() {
    let out = scratch("ok");
    let o = pto_launch(0, &out);
    let text = text(&o);
    assert!(o.status.success(), "{text}");
    assert!(
        text.contains(&format!("finished {} tasks", 4 * BLOCKS)),
        "{text}"
    );
    let buffer = std::fs::read(out.join("buffer_0.bin")).unwrap();
    check_sums(&buffer).unwrap();
}

#[test]
fn pto_launch_run_writes_the_device_task_records_as_a_chrome_trace() {
    let out = scratch("trace");
    std::fs::create_dir_all(&out).unwrap();
    let trace = out.join("run.json");
    let o = launch_with(
        0,
        &out,
        &kernels_arg(&kit().kernel_files),
        &["--trace", trace.to_str().unwrap()],
    );
    let text = text(&o);
    assert!(o.status.success(), "{text}");
    let tasks = 4 * BLOCKS;
    assert!(
        text.contains(&format!("({tasks} of {tasks} task records)")),
        "{text}"
    );
    let kernel_slices = trace_slices(&trace).len();
    assert_eq!(kernel_slices as u64, tasks, "one kernel slice per task");
    check_sums(&std::fs::read(out.join("buffer_0.bin")).unwrap()).unwrap();
    // `pto-launch trace` reads a device run's trace as it reads a simulated one's.
    let s = Command::new(env!("CARGO_BIN_EXE_pto-launch"))
        .args(["trace", "--json"])
        .arg(&trace)
        .output()
        .unwrap();
    assert!(s.status.success(), "{}", String::from_utf8_lossy(&s.stderr));
    let v: serde_json::Value = serde_json::from_slice(&s.stdout).unwrap();
    let counted: u64 = v["results"]["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["count"].as_u64().unwrap())
        .sum();
    assert_eq!(counted, tasks, "every slice under its kernel: {v}");
    assert!(v["results"]["makespan_ns"].as_u64().unwrap() > 0, "{v}");
    // The device streamed each task's producers too: the trace carries the DAG, so the
    // critical path and the overhead shares are there, as for a simulated run.
    let path = &v["results"]["critical_path"];
    let chain = path["chain"].as_array().unwrap_or_else(|| panic!("{v}"));
    // Each block's chain is fill -> add -> sum; the sums meet nowhere: 3 tasks.
    assert_eq!(chain.len(), 3, "{path}");
    let (observed, limited) = (
        path["observed_ns"].as_u64().unwrap(),
        path["dependency_limited_ns"].as_u64().unwrap(),
    );
    assert!(limited > 0 && limited <= observed, "{path}");
    assert!(v["results"]["overhead"].is_object(), "{v}");
}

#[test]
fn pto_launch_reports_a_starved_orchestration_with_its_stall_class() {
    // extra 7: after its DAG the orchestration submits nothing and keeps its submissions
    // open, asking the runtime until it says the run is over (the device's watchdog).
    let out = scratch("starved");
    let ms = ["--task-timeout-ms", "300", "--submit-timeout-ms", "300"];
    let more = [&ms[..], &["--deferred-timeout-ms", "300"]].concat();
    let o = launch_with(
        7,
        &out,
        &kernels_arg(&kit().kernel_files),
        &[&more[..], &["--device-watchdog-ms", "600", "--json"]].concat(),
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("one JSON envelope on stdout: {e}: {}", text(&o)));
    let class = &v["error"]["stall_class"];
    assert_eq!(class["class"], "orchestrator-starved", "{v}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("stall class: orchestrator-starved"), "{err}");
    assert!(
        err.contains("watchdog"),
        "the device's watchdog ended it: {err}"
    );
    // A watchdog shorter than a timeout is refused before anything runs.
    let o = launch_with(
        0,
        &out,
        &kernels_arg(&kit().kernel_files),
        &["--device-watchdog-ms", "100"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("timeouts out of order"), "{}", text(&o));
}

#[test]
fn pto_launch_reports_a_condition_that_never_lands_with_its_stall_class() {
    // extra 8: after its DAG the orchestration submits a task whose kernel (`npu_c/wait.c`)
    // defers it on a 32-bit word after the sums that nobody writes, and a consumer of its
    // output; the device's deferred set times it out.
    let out = scratch("never-lands");
    std::fs::create_dir_all(&out).unwrap();
    let wait = out.join("wait.o");
    npu_util::npu_kernel(&npu_util::root().join("host/tests/npu_c/wait.c"), &wait);
    let mut files = kit().kernel_files.clone();
    files.push(wait);
    // The sums, the word, the kernel's flag, its output (N words) and its consumer's.
    let bytes = (2 * N * BLOCKS + BLOCKS + 2 + N + 1) * 8;
    let task_kernel = format!("kernel:{}", files.len() - 1);
    let o = launch_command(8, &out, &kernels_arg(&files), bytes, &task_kernel)
        .args(["--deferred-timeout-ms", "300", "--json"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("one JSON envelope on stdout: {e}: {}", text(&o)));
    let class = &v["error"]["stall_class"];
    assert_eq!(class["class"], "deferred", "{v}");
    let task = class["task"].as_str().unwrap_or_else(|| panic!("{v}"));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!("stall class: deferred: {task} waiting for the ")),
        "the deferred task and its word: {err}"
    );
    assert!(
        err.contains(&format!("waiting for 1 producer: {task}")),
        "its consumer names it: {err}"
    );
}

#[test]
fn pto_launch_reports_a_failing_kernel_with_the_device_run_status() {
    let out = scratch("fail");
    let o = pto_launch(1, &out);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("device: run 1:") && err.contains("kernel failed on task"),
        "{err}"
    );
    assert!(
        !out.join("buffer_0.bin").exists(),
        "nothing written after a failure"
    );
}

#[test]
fn pto_launch_names_the_flag_for_a_missing_artifact_and_a_missing_file() {
    let k = kit();
    let kernel = k.kernel_files[0].display().to_string();
    let run = |orchestration: &std::path::Path| {
        Command::new(env!("CARGO_BIN_EXE_pto-launch"))
            .args(["run", "--backend", "npu", "--kernels", &kernel])
            .arg("--orchestration")
            .arg(orchestration)
            .env_remove("PTO_AICPU_SO")
            .output()
            .unwrap()
    };
    let o = run(&k.orchestration_file);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("give --aicpu-so or set PTO_AICPU_SO"), "{err}");
    let o = run(std::path::Path::new("/nonexistent/orch.so"));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("cannot read the orchestration SO /nonexistent/orch.so"),
        "{err}"
    );
}

#[test]
fn pto_launch_takes_a_kernel_directory_in_name_order_and_prints_json() {
    let k = kit();
    let dir = scratch("kernels");
    std::fs::create_dir_all(&dir).unwrap();
    for (i, f) in k.kernel_files.iter().enumerate() {
        std::fs::copy(
            f,
            dir.join(format!(
                "{i:02}_{}",
                f.file_name().unwrap().to_string_lossy()
            )),
        )
        .unwrap();
    }
    std::fs::write(dir.join("README.txt"), "not a kernel").unwrap();
    let out = scratch("json");
    let o = launch_with(0, &out, dir.to_str().unwrap(), &["--json"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
    assert_eq!(v["command"], "run");
    assert_eq!(v["results"]["tasks_finished"], 4 * BLOCKS);
    check_sums(&std::fs::read(out.join("buffer_0.bin")).unwrap()).unwrap();
}
