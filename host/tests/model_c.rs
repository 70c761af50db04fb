//! The programming model's parts beyond one task on one core, from C through `pto-launch run`
//! on the simulator and on the fake NPU (`libpto_aicpu.so` over the fake CANN): a task of
//! SPMD blocks whose kernel reads its block, a consumer that waits for every block, an
//! orchestration that waits for a value a kernel wrote and submits as many tasks as it says,
//! and a MIX task running a kernel of its own on each lane (`model_c/blocks.c`,
//! `model_c/kernels.c`), every result checked with `--expect`.

mod npu_util;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const N: usize = 64;
const BLOCKS: usize = 4;
const THRESHOLD: i64 = 2000;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn scratch(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("model-c-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The target the tests run on.
const TARGET: &str = if cfg!(target_arch = "aarch64") {
    "aarch64-unknown-linux-gnu"
} else {
    "x86_64-unknown-linux-gnu"
};

/// `host/tests/model_c/<src>` built as a shared object `out`.
fn build(src: &str, out: &Path) -> PathBuf {
    let tool = cc::Build::new()
        .opt_level(2)
        .target(TARGET)
        .host(TARGET)
        .cargo_metadata(false)
        .get_compiler();
    let o = tool
        .to_command()
        .args(["-shared", "-fPIC", "-I"])
        .arg(root().join("device-sys/aicore"))
        .arg("-I")
        .arg(root().join("aicpu/include"))
        .arg("-I")
        .arg(root().join("capi/include"))
        .arg("-o")
        .arg(out)
        .arg(root().join("host/tests/model_c").join(src))
        .output()
        .expect("the C compiler runs");
    assert!(
        o.status.success(),
        "{src}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    out.to_path_buf()
}

fn le(words: &[i64]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

fn x() -> Vec<i64> {
    (0..N as i64).map(|i| 5 * i - 20).collect()
}

/// What `split` writes: element i of block b (the blocks share the elements in order).
fn y() -> Vec<i64> {
    let b = |i: usize| (i * BLOCKS / N) as i64;
    x().iter()
        .enumerate()
        .map(|(i, v)| 3 * v + 1000 * b(i))
        .collect()
}

/// The kernels' entries, in kernel id order.
const ENTRIES: [&str; 6] = ["split", "count", "bump", "cube", "vec_a", "vec_b"];

/// `pto-launch run` of `blocks.c` over `clusters` clusters with `blocks` blocks on the
/// simulator, its buffers and golden files in `dir`.
fn launch(dir: &Path, clusters: u32, blocks: usize) -> Output {
    let kernels = build("kernels.c", &dir.join("kernels.so"));
    let orch = build("blocks.c", &dir.join("liborch.so"));
    launch_with(dir, &orch, &kernels, clusters, blocks, &[])
}

/// [`launch`] of the orchestration `orch` and the kernel file `kernels`, with `more` flags.
fn launch_with(
    dir: &Path,
    orch: &Path,
    kernels: &Path,
    clusters: u32,
    blocks: usize,
    more: &[String],
) -> Output {
    let k = kernels.display().to_string();
    let list = ENTRIES.map(|s| format!("{k}:{s}")).join(",");
    std::fs::write(dir.join("x.bin"), le(&x())).unwrap();
    let count = y().iter().filter(|&&v| v >= THRESHOLD).count() as i64;
    std::fs::write(dir.join("y.golden"), le(&y())).unwrap();
    std::fs::write(dir.join("c.golden"), le(&[count])).unwrap();
    std::fs::write(dir.join("z.golden"), le(&[count])).unwrap();
    std::fs::write(dir.join("w.golden"), le(&[100, 201, 302, 103, 204, 305])).unwrap();
    let expect = |n: u32, f: &str| format!("{n}={}", dir.join(f).display());
    Command::new(env!("CARGO_BIN_EXE_pto-launch"))
        .arg("run")
        .arg("--orchestration")
        .arg(orch)
        .args(["--kernels", &list])
        .args(["--clusters", &clusters.to_string()])
        .arg("--buffer")
        .arg(format!("{}={}", 8 * N, dir.join("x.bin").display()))
        .args(["--buffer", &(8 * N).to_string()])
        .args(["--buffer", "8", "--buffer", "8", "--buffer", "48"])
        .args((0..4).flat_map(|i| ["--arg".to_owned(), format!("kernel:{i}")]))
        .args((0..5).flat_map(|i| ["--arg".to_owned(), format!("buffer:{i}")]))
        .args(["--arg", &N.to_string(), "--arg", &blocks.to_string()])
        .args(["--arg", &THRESHOLD.to_string()])
        .args(["--dtype", "i64"])
        .args(["--expect", &expect(1, "y.golden")])
        .args(["--expect", &expect(2, "c.golden")])
        .args(["--expect", &expect(3, "z.golden")])
        .args(["--expect", &expect(4, "w.golden")])
        .arg("--output")
        .arg(dir)
        .args(more)
        .output()
        .expect("pto-launch runs")
}

#[test]
fn blocks_a_read_of_produced_data_and_lane_kernels_run_from_c() {
    let dir = scratch("ok");
    let o = launch(&dir, 2, BLOCKS);
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "{all}");
    // 32 of the elements reach the threshold: the orchestration read the count before the
    // bumps were submitted, and z holds one bump per counted element.
    assert_eq!(y().iter().filter(|&&v| v >= THRESHOLD).count(), 32);
    let z = std::fs::read(dir.join("buffer_3.bin")).unwrap();
    assert_eq!(i64::from_le_bytes(z[..8].try_into().unwrap()), 32, "{all}");
}

#[test]
fn more_blocks_than_vector_cores_are_refused_naming_the_limit() {
    let dir = scratch("wide");
    let o = launch(&dir, 2, 5);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(!o.status.success());
    assert!(
        err.contains("-29") || err.contains("SPMD blocks"),
        "says what was wrong: {err}"
    );
}

#[test]
fn the_same_program_runs_on_the_fake_npu_through_libpto_aicpu() {
    let dir = scratch("npu");
    let k = npu_util::kit();
    // The kernels as the NPU path takes them: an object file, each entry found by its symbol
    // in the section uploaded.
    let kernels = dir.join("kernels.o");
    npu_util::npu_kernel(&root().join("host/tests/model_c/kernels.c"), &kernels);
    let orch = dir.join("liborch.so");
    npu_util::orchestration_so(&root().join("host/tests/model_c/blocks.c"), &orch);
    let more: Vec<String> = [
        "--backend",
        "npu",
        "--device",
        "0",
        "--aicpu-so",
        k.artifacts.aicpu_so.to_str().unwrap(),
        "--dispatcher-so",
        k.artifacts.dispatcher_so.to_str().unwrap(),
        "--aicore-executor",
        k.artifacts.aicore_executor.to_str().unwrap(),
        "--cann-dir",
        k.cann.to_str().unwrap(),
        "--device-ticks-per-us",
        &npu_util::ticks_per_us().to_string(),
    ]
    .map(str::to_owned)
    .to_vec();
    let o = launch_with(&dir, &orch, &kernels, 2, BLOCKS, &more);
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "{all}");
    let z = std::fs::read(dir.join("buffer_3.bin")).unwrap();
    assert_eq!(i64::from_le_bytes(z[..8].try_into().unwrap()), 32, "{all}");
}
