//! `pto-launch run --ranks 2`: two rank processes run `npu_c/ranks_orchestration.c`, each
//! putting n words into the other's window and waiting for the other's words in its own
//! through deferred completion, then summing them; on the simulator (shared-memory windows)
//! and against the fake CANN (HCCL windows, rank r on device r). Each rank's buffer is
//! written to `DIR/rank_<r>/` and checked; nothing of the job is left in /dev/shm.

mod npu_util;

use std::path::Path;
use std::process::{Command, Output};

use npu_util::{kernels_arg, kit, ranks_programs, text, ticks_per_us};

/// Words each rank sends.
const N: u64 = 4096;

fn scratch(name: &str) -> std::path::PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("run-ranks-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `pto-launch run --ranks 2` of the ranks program, writing to `out`, with `more` flags.
fn launch(out: &Path, more: &[&str]) -> (Output, u32) {
    let p = ranks_programs();
    // Object files for the fake NPU, shared objects for the simulator.
    let files = if more.contains(&"npu") {
        &p.kernel_files
    } else {
        &p.sim_kernel_files
    };
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pto-launch"));
    cmd.args([
        "run",
        "--ranks",
        "2",
        "--window-bytes",
        "65536",
        "--timeout-s",
        "120",
    ])
    .arg("--orchestration")
    .arg(&p.orchestration_file)
    .args(["--kernels", &kernels_arg(files), "--buffer", "8"])
    .args([
        "--arg", "kernel:0", "--arg", "kernel:1", "--arg", "kernel:2",
    ])
    .args([
        "--arg",
        "window",
        "--arg",
        "window:+1",
        "--arg",
        &N.to_string(),
    ])
    .args(["--arg", "rank", "--arg", "buffer:0", "--output"])
    .arg(out)
    .args(more)
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped());
    let child = cmd.spawn().expect("pto-launch runs");
    let pid = child.id();
    (child.wait_with_output().unwrap(), pid)
}

/// Each rank's sum is of what its peer sent: `first + i` for i < n, where the peer's first
/// value is its rank.
fn check_ranks(out: &Path) {
    let n = N as i64;
    for r in 0..2u32 {
        let bytes = std::fs::read(out.join(format!("rank_{r}/buffer_0.bin")))
            .unwrap_or_else(|e| panic!("rank {r}'s buffer: {e}"));
        let sum = i64::from_le_bytes(bytes[..8].try_into().unwrap());
        let first = i64::from(1 - r);
        assert_eq!(sum, n * first + n * (n - 1) / 2, "rank {r}");
    }
}

#[test]
fn two_ranks_on_the_simulator_put_into_each_others_windows_and_wait_on_deferred_counters() {
    let out = scratch("sim");
    let (o, pid) = launch(&out, &[]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    for r in 0..2 {
        assert!(
            t.contains(&format!("rank {r}: simulator: finished 3 tasks")),
            "{t}"
        );
        assert!(t.contains(&format!("rank {r}: passed")), "{t}");
    }
    assert!(
        t.contains(
            "ran the program libranks_orchestration.so on 2 ranks of the simulator: every rank \
             passed"
        ),
        "the verdict says what ran: {t}"
    );
    assert!(!t.contains("allreduce"), "{t}");
    check_ranks(&out);
    let left: Vec<_> = std::fs::read_dir("/dev/shm")
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(&format!("job{pid}-")))
        .collect();
    assert!(left.is_empty(), "left in /dev/shm: {left:?}");
}

#[test]
fn a_job_of_ranks_gathers_every_ranks_json_results() {
    let out = scratch("json");
    let (o, _) = launch(&out, &["--json"]);
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&o.stdout).trim()).expect("one envelope");
    assert_eq!(v["command"], "run");
    let exits = v["results"]["exits"].as_array().unwrap();
    assert_eq!(exits.len(), 2);
    for (r, e) in exits.iter().enumerate() {
        assert_eq!(e["end"], "passed", "{v}");
        assert_eq!(e["checked"]["rank"], r as u64, "{v}");
        assert_eq!(e["checked"]["tasks_finished"], 3, "{v}");
    }
    check_ranks(&out);
}

#[test]
fn two_ranks_on_the_fake_npu_use_hccl_windows_one_device_each() {
    let k = kit();
    let out = scratch("npu");
    let ticks = ticks_per_us().to_string();
    let (o, _) = launch(
        &out,
        &[
            "--backend",
            "npu",
            "--clusters",
            "1",
            "--aicpu-so",
            k.artifacts.aicpu_so.to_str().unwrap(),
            "--dispatcher-so",
            k.artifacts.dispatcher_so.to_str().unwrap(),
            "--aicore-executor",
            k.artifacts.aicore_executor.to_str().unwrap(),
            "--cann-dir",
            k.cann.to_str().unwrap(),
            "--device-ticks-per-us",
            &ticks,
        ],
    );
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    for r in 0..2 {
        assert!(
            t.contains(&format!("rank {r}: device {r}: run 1 finished 3 tasks")),
            "{t}"
        );
    }
    check_ranks(&out);
}

#[test]
fn a_window_argument_without_ranks_is_refused() {
    let p = ranks_programs();
    let o = Command::new(env!("CARGO_BIN_EXE_pto-launch"))
        .args(["run", "--orchestration"])
        .arg(&p.orchestration_file)
        .args(["--kernels"])
        .arg(&p.sim_kernel_files[0])
        .args(["--arg", "window:1"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(err.contains("give --ranks"), "{err}");
}

#[test]
fn a_window_of_a_rank_past_the_job_is_refused_before_any_rank_starts() {
    let out = scratch("window-past");
    let (o, _) = launch(&out, &["--arg", "window:2"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(t.contains("--arg window:2: the job has 2 ranks"), "{t}");
    assert!(!t.contains("rank 0:"), "no rank started: {t}");
    assert!(!out.join("rank_0").exists(), "no rank wrote anything");
}
