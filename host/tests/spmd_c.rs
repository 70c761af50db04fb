//! SPMD blocks from C through `pto-launch run`, on the simulator and on the fake NPU
//! (`libpto_aicpu.so` over the fake CANN, the chip's payload slots, the AICore executor):
//! `spmd_c/orchestration.c` submits an AIV task of several blocks, each adding to its own
//! contiguous share of a buffer, a one-block consumer summing that buffer, and a MIX task of
//! two blocks; `spmd_c/kernels.c` reads each execution's block and count. The kernels add
//! rather than store and fold in the block and count they were told, so the `--expect`
//! golden files hold only if every block ran exactly once with its own index; the consumer
//! fails unless it is told block 0 of 1 (its core's slots likely held a block before). A
//! task of more blocks than the vector cores fails the run with the runtime's sentence for
//! the status and the launcher's line naming the limit and `--clusters`.

mod npu_util;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Elements of x and y: not a multiple of the blocks, so the shares differ in length.
const N: usize = 62;
/// The MIX task's blocks (the orchestration's constant).
const MIX_BLOCKS: usize = 2;
/// Clusters of every run: 2 AIC and 4 AIV cores.
const CLUSTERS: u32 = 2;

/// A fresh directory for one test's files.
fn scratch(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("spmd-c-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `spmd_c/<name>`.
fn source(name: &str) -> PathBuf {
    npu_util::root().join("host/tests/spmd_c").join(name)
}

/// The kernels as the simulator takes them: a shared object of this host.
fn sim_kernels(dir: &Path) -> PathBuf {
    let out = dir.join("kernels.so");
    npu_util::sim_kernel(&source("kernels.c"), &out);
    out
}

/// The kernels as the fake NPU takes them: an object file, each entry's section uploaded.
fn npu_kernels(dir: &Path) -> PathBuf {
    let out = dir.join("kernels.o");
    npu_util::npu_kernel(&source("kernels.c"), &out);
    out
}

fn le(words: &[i64]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

fn x() -> Vec<i64> {
    (0..N as i64).map(|i| 7 * i - 100).collect()
}

fn y_initial() -> Vec<i64> {
    (0..N as i64).map(|i| i * i).collect()
}

/// y after the blocks: each element gains, once, 3 x + 1000 (b + 1) + blocks from the block
/// b whose share holds it (block b of nb holds [b N / nb, (b + 1) N / nb)).
fn y_after(blocks: usize) -> Vec<i64> {
    let nb = blocks.max(1);
    let (x, mut y) = (x(), y_initial());
    let mut owners = vec![0; N];
    for b in 0..nb {
        for i in b * N / nb..(b + 1) * N / nb {
            owners[i] += 1;
            y[i] += 3 * x[i] + 1000 * (b as i64 + 1) + nb as i64;
        }
    }
    assert!(owners.iter().all(|&k| k == 1), "the shares cover y once");
    y
}

/// m after the MIX task: lane l of block b adds 100 blocks + 10 b + l + 1 to m[3 b + l].
fn m_after() -> Vec<i64> {
    (0..MIX_BLOCKS as i64)
        .flat_map(|b| (0..3).map(move |l| 100 * MIX_BLOCKS as i64 + 10 * b + l + 1))
        .collect()
}

/// `pto-launch run` of the orchestration `orch` and kernel file `kernels` with the vector
/// task in `blocks` blocks, its buffers and golden files in `dir`, with `more` flags.
fn launch(dir: &Path, orch: &Path, kernels: &Path, blocks: usize, more: &[String]) -> Output {
    let k = kernels.display();
    let list = ["chunk", "sum", "mark"]
        .map(|s| format!("{k}:{s}"))
        .join(",");
    let file = |name: &str, words: &[i64]| {
        let f = dir.join(name);
        std::fs::write(&f, le(words)).unwrap();
        f.display().to_string()
    };
    let y = y_after(blocks);
    let buffers = [
        format!("{}={}", 8 * N, file("x.bin", &x())),
        format!("{}={}", 8 * N, file("y.bin", &y_initial())),
        "8".to_owned(),
        format!("{}", 8 * 3 * MIX_BLOCKS),
    ];
    let expect = [
        format!("1={}", file("y.golden", &y)),
        format!("2={}", file("s.golden", &[y.iter().sum()])),
        format!("3={}", file("m.golden", &m_after())),
    ];
    let args = ["kernel:0", "kernel:1", "kernel:2"]
        .map(str::to_owned)
        .into_iter()
        .chain((0..4).map(|i| format!("buffer:{i}")))
        .chain([N.to_string(), blocks.to_string()]);
    Command::new(env!("CARGO_BIN_EXE_pto-launch"))
        .arg("run")
        .arg("--orchestration")
        .arg(orch)
        .args(["--kernels", &list])
        .args(["--clusters", &CLUSTERS.to_string()])
        .args(buffers.iter().flat_map(|b| ["--buffer", b]))
        .args(args.flat_map(|a| ["--arg".to_owned(), a]))
        .args(["--dtype", "i64"])
        .args(expect.iter().flat_map(|e| ["--expect", e]))
        .arg("--output")
        .arg(dir)
        .args(more)
        .output()
        .expect("pto-launch runs")
}

/// [`launch`] on the simulator.
fn on_sim(name: &str, blocks: usize) -> (Output, PathBuf) {
    let dir = scratch(name);
    let orch = dir.join("liborch.so");
    npu_util::orchestration_so(&source("orchestration.c"), &orch);
    let kernels = sim_kernels(&dir);
    (launch(&dir, &orch, &kernels, blocks, &[]), dir)
}

/// [`launch`] on the fake NPU through `libpto_aicpu.so`.
fn on_npu(name: &str, blocks: usize) -> (Output, PathBuf) {
    let dir = scratch(name);
    let orch = dir.join("liborch.so");
    npu_util::orchestration_so(&source("orchestration.c"), &orch);
    let kernels = npu_kernels(&dir);
    let more = npu_util::fake_npu_flags();
    (launch(&dir, &orch, &kernels, blocks, &more), dir)
}

/// stdout and stderr of `o`, for failure messages.
fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The run succeeded, its three golden checks passed, and the sum is the one expected.
fn assert_checked(o: &Output, dir: &Path, blocks: usize) {
    let all = text(o);
    assert!(o.status.success(), "{all}");
    assert_eq!(
        all.matches("matches the golden output").count(),
        3,
        "y, s and m were checked: {all}"
    );
    let s = std::fs::read(dir.join("buffer_2.bin")).unwrap();
    let sum: i64 = y_after(blocks).iter().sum();
    assert_eq!(i64::from_le_bytes(s[..8].try_into().unwrap()), sum, "{all}");
}

/// The run failed, saying the status the orchestration passed on, the vector cores' limit
/// and the flag that raises it.
fn assert_refused(o: &Output) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{}", text(o));
    let aiv = 2 * CLUSTERS;
    for needle in [
        "returned -29".to_owned(),
        "more SPMD blocks than its class has cores".to_owned(),
        format!("this run has {CLUSTERS} clusters"),
        format!("1 to {aiv} blocks if AIV"),
        "raise --clusters".to_owned(),
    ] {
        assert!(err.contains(&needle), "says {needle:?}: {err}");
    }
}

#[test]
fn each_block_runs_once_on_its_share_on_the_simulator() {
    let (o, dir) = on_sim("sim", 4);
    assert_checked(&o, &dir, 4);
}

#[test]
fn zero_blocks_run_as_one_on_the_simulator() {
    let (o, dir) = on_sim("sim-zero", 0);
    assert_checked(&o, &dir, 0);
}

#[test]
fn each_block_runs_once_on_its_share_on_the_fake_npu() {
    let (o, dir) = on_npu("npu", 4);
    assert_checked(&o, &dir, 4);
}

#[test]
fn more_blocks_than_vector_cores_fail_the_simulated_run_naming_the_limit() {
    let (o, _) = on_sim("sim-wide", 5);
    assert_refused(&o);
}

#[test]
fn more_blocks_than_vector_cores_fail_the_npu_run_naming_the_limit() {
    let (o, _) = on_npu("npu-wide", 5);
    assert_refused(&o);
}
