//! What the NPU tests share: the fake CANN, `libpto_aicpu.so` and the dispatcher built
//! with their own cargo calls, the C orchestration SO (`aicpu/tests/c/orchestration.c`), the
//! kernels (`tests/npu_c/*.c`: object files for the fake NPU, which uploads the entry's
//! section as on the chip; shared objects for the simulator), the AICore executor's host
//! build as the registered ELF, and the DAG run.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use pto_host::npu::{Artifacts, BufferSpec, KernelSpec, NpuOptions, OrchArg, RunSpec, Timeouts};

#[path = "../../../device-sys/tests/fake_cann/mod.rs"]
pub mod fake_cann;

/// The target the tests run on.
pub const TARGET: &str = if cfg!(target_arch = "aarch64") {
    "aarch64-unknown-linux-gnu"
} else {
    "x86_64-unknown-linux-gnu"
};

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

pub fn scratch() -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("npu-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn cargo_build(args: &[&str], dir: &Path) {
    let status = Command::new(env!("CARGO"))
        .current_dir(dir)
        .args(args)
        .env_remove("CARGO_TARGET_DIR")
        .status()
        .expect("running cargo");
    assert!(status.success(), "cargo {args:?} failed");
}

/// Everything a session and a run need, built once per test process.
pub struct Kit {
    /// The fake CANN's lib64.
    pub cann: PathBuf,
    /// The artifacts.
    pub artifacts: Artifacts,
    /// The orchestration SO's bytes.
    pub orchestration: Vec<u8>,
    /// Kernels as object files for the fake NPU: fill, add, sum, fail, hang.
    pub kernels: Vec<KernelSpec>,
    /// Their files, in the same order.
    pub kernel_files: Vec<PathBuf>,
    /// The orchestration SO's file.
    pub orchestration_file: PathBuf,
}

pub fn cc() -> cc::Tool {
    cc::Build::new()
        .target(TARGET)
        .host(TARGET)
        .opt_level(1)
        .cargo_metadata(false)
        .get_compiler()
}

pub fn run(cmd: &mut Command) {
    let out = cmd.output().expect("a build tool runs");
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A kernel for the fake NPU: an object file whose entry's section needs no relocation
/// (the NPU path uploads that section alone).
pub fn npu_kernel(src: &Path, out: &Path) -> KernelSpec {
    run(cc()
        .to_command()
        .args([
            "-c",
            "-O1",
            "-fno-pic",
            "-fno-tree-vectorize",
            "-fno-jump-tables",
            "-fno-function-sections",
            "-fno-stack-protector",
            "-fno-asynchronous-unwind-tables",
            "-ffreestanding",
            "-I",
        ])
        .arg(root().join("device-sys/aicore"))
        .arg("-o")
        .arg(out)
        .arg(src));
    KernelSpec::read(out, None).unwrap()
}

/// A kernel for the fake NPU as a linked image: the object file linked at address 0 with
/// its entry named, no library (the NPU path uploads every loadable segment).
pub fn npu_linked_kernel(src: &Path, out: &Path) -> KernelSpec {
    run(cc()
        .to_command()
        .args([
            "-O1",
            "-fno-pic",
            "-no-pie",
            "-static",
            "-nostdlib",
            "-ffreestanding",
            "-fno-stack-protector",
            "-fno-asynchronous-unwind-tables",
            "-Wl,-Ttext=0",
            "-Wl,-e,pto_kernel_entry",
            "-Wl,--build-id=none",
            "-I",
        ])
        .arg(root().join("device-sys/aicore"))
        .arg("-o")
        .arg(out)
        .arg(src));
    KernelSpec::read(out, None).unwrap()
}

/// A kernel for the simulator: a shared object of this host.
pub fn sim_kernel(src: &Path, out: &Path) -> KernelSpec {
    run(cc()
        .to_command()
        .args(["-shared", "-fPIC", "-O1", "-I"])
        .arg(root().join("device-sys/aicore"))
        .arg("-o")
        .arg(out)
        .arg(src));
    KernelSpec::read(out, None).unwrap()
}

/// The programs a run executes, without anything CANN needs: the orchestration SO and the
/// kernels fill, add, sum, fail, hang, built for the fake NPU (object files of this host:
/// the fake runs the executor on threads) and for the simulator (shared objects).
pub struct Programs {
    /// The orchestration SO's bytes.
    pub orchestration: Vec<u8>,
    /// Its file.
    pub orchestration_file: PathBuf,
    /// Kernels as object files for the fake NPU: fill, add, sum, fail, hang.
    pub kernels: Vec<KernelSpec>,
    /// Their files, in the same order.
    pub kernel_files: Vec<PathBuf>,
    /// The same kernels as shared objects for the simulator.
    pub sim_kernels: Vec<KernelSpec>,
    /// Their files, in the same order.
    pub sim_kernel_files: Vec<PathBuf>,
}

pub fn programs() -> &'static Programs {
    static P: OnceLock<Programs> = OnceLock::new();
    P.get_or_init(|| {
        build_programs(
            &root().join("aicpu/tests/c/orchestration.c"),
            &["fill", "add", "sum", "fail", "hang"],
            "",
        )
    })
}

/// The 2-rank programs: `npu_c/ranks_orchestration.c` and the kernels put, wait, sum.
pub fn ranks_programs() -> &'static Programs {
    static P: OnceLock<Programs> = OnceLock::new();
    P.get_or_init(|| {
        build_programs(
            &root().join("host/tests/npu_c/ranks_orchestration.c"),
            &["put", "wait", "sum"],
            "ranks_",
        )
    })
}

/// The orchestration SO built from `orchestration` and the kernels `npu_c/<name>.c` for the
/// fake NPU and for the simulator, their files named with `prefix` in this process's scratch
/// directory.
fn build_programs(orchestration: &Path, kernels: &[&str], prefix: &str) -> Programs {
    let dir = scratch();
    let orch = dir.join(format!("lib{prefix}orchestration.so"));
    orchestration_so(orchestration, &orch);
    let src = |k: &str| root().join("host/tests/npu_c").join(format!("{k}.c"));
    let kernel_files: Vec<PathBuf> = kernels
        .iter()
        .map(|k| dir.join(format!("{prefix}{k}.o")))
        .collect();
    let sim_kernel_files: Vec<PathBuf> = kernels
        .iter()
        .map(|k| dir.join(format!("{prefix}{k}.so")))
        .collect();
    Programs {
        orchestration: std::fs::read(&orch).unwrap(),
        orchestration_file: orch,
        kernels: kernels
            .iter()
            .zip(&kernel_files)
            .map(|(k, out)| npu_kernel(&src(k), out))
            .collect(),
        kernel_files,
        sim_kernels: kernels
            .iter()
            .zip(&sim_kernel_files)
            .map(|(k, out)| sim_kernel(&src(k), out))
            .collect(),
        sim_kernel_files,
    }
}

pub fn kit() -> &'static Kit {
    static KIT: OnceLock<Kit> = OnceLock::new();
    KIT.get_or_init(|| {
        let root = root();
        let dir = scratch();
        let cann = fake_cann::build("npu", &[]);
        let aicpu = root.join("aicpu");
        cargo_build(
            &[
                "build",
                "--release",
                "--lib",
                "--target",
                TARGET,
                "--target-dir",
                "target/so",
            ],
            &aicpu,
        );
        let aicpu_so = aicpu
            .join("target/so")
            .join(TARGET)
            .join("release/libpto_aicpu.so");
        let disp_dir = root.join("target/npu-dispatcher");
        cargo_build(
            &[
                "build",
                "-p",
                "pto-dispatcher",
                "--lib",
                "--target-dir",
                disp_dir.to_str().unwrap(),
            ],
            &root,
        );
        let dispatcher_so = disp_dir.join("debug/libpto_dispatcher.so");
        let executor = dir.join("aicore_executor.o");
        run(cc()
            .to_command()
            .args(["-c", "-x", "c", "-std=gnu11", "-I"])
            .arg(root.join("device-sys/aicore"))
            .arg("-o")
            .arg(&executor)
            .arg(root.join("device-sys/aicore/executor.cpp")));
        let p = programs();
        Kit {
            cann,
            artifacts: Artifacts {
                aicpu_so,
                dispatcher_so,
                aicore_executor: executor,
            },
            orchestration: p.orchestration.clone(),
            kernels: p.kernels.clone(),
            kernel_files: p.kernel_files.clone(),
            orchestration_file: p.orchestration_file.clone(),
        }
    })
}

/// `pto-launch run`'s flags for device 0 of the fake NPU through `libpto_aicpu.so`: the
/// kit's artifacts, its fake CANN and this machine's counter rate.
pub fn fake_npu_flags() -> Vec<String> {
    let k = kit();
    let path = |p: &Path| p.to_str().unwrap().to_owned();
    vec![
        "--backend".to_owned(),
        "npu".to_owned(),
        "--device".to_owned(),
        "0".to_owned(),
        "--aicpu-so".to_owned(),
        path(&k.artifacts.aicpu_so),
        "--dispatcher-so".to_owned(),
        path(&k.artifacts.dispatcher_so),
        "--aicore-executor".to_owned(),
        path(&k.artifacts.aicore_executor),
        "--cann-dir".to_owned(),
        path(&k.cann),
        "--device-ticks-per-us".to_owned(),
        ticks_per_us().to_string(),
    ]
}

pub fn ticks_per_us() -> u64 {
    static T: OnceLock<u64> = OnceLock::new();
    *T.get_or_init(|| {
        if cfg!(target_arch = "aarch64") {
            return 0;
        }
        let c = pto_device_sys::raw::arch::counter;
        let (t0, c0) = (std::time::Instant::now(), c());
        std::thread::sleep(std::time::Duration::from_millis(20));
        let (dt, dc) = (t0.elapsed().as_micros() as u64, c() - c0);
        (dc / dt.max(1)).max(1)
    })
}

/// Session options for the fake: 2 clusters, 2 schedulers, generous timeouts in order.
pub fn options() -> NpuOptions {
    let k = kit();
    let mut o = NpuOptions::new(0, k.artifacts.clone());
    o.cann_dirs = vec![k.cann.clone()];
    o.clusters = 2;
    o.schedulers = 2;
    o.ticks_per_us = ticks_per_us();
    o.timeouts = Timeouts {
        device_watchdog_us: 20_000_000,
        task_us: 15_000_000,
        core_handshake_us: 10_000_000,
        op_execute_us: 25_000_000,
        stream_sync_ms: 30_000,
        recovery_ms: 2_000,
        ..Timeouts::default()
    };
    o
}

/// Words per block and blocks of the DAG.
pub const N: u64 = 64;
/// See [`N`].
pub const BLOCKS: u64 = 6;

/// [`dag`] with the kernels built for the simulator.
pub fn sim_dag(extra: u64, flag: u64) -> RunSpec {
    let mut spec = dag(extra, flag);
    spec.kernels = programs().sim_kernels.clone();
    spec
}

/// The DAG of `aicpu/tests/c/orchestration.c` (tensor arguments: block b's tiles at
/// 2 n b words, the sums after them) with the kernels built for the fake NPU: `extra` 0
/// nothing more, 1 a failing task, 2 a task that hangs on `flag`.
pub fn dag(extra: u64, flag: u64) -> RunSpec {
    let k = programs();
    let mut spec = RunSpec::new(k.orchestration.clone(), k.kernels.clone());
    spec.buffers = vec![BufferSpec {
        bytes: ((2 * N * BLOCKS + BLOCKS) * 8) as usize,
        init: vec![0xff; 8],
    }];
    spec.args = vec![
        OrchArg::Kernel(0),
        OrchArg::Kernel(1),
        OrchArg::Kernel(2),
        OrchArg::Buffer(0),
        OrchArg::Value(N),
        OrchArg::Value(BLOCKS),
        OrchArg::Value(extra),
        OrchArg::Kernel(if extra == 2 { 4 } else { 3 }),
        OrchArg::Value(flag),
    ];
    spec
}

/// Checks the DAG's sums in the buffer read back.
pub fn check_sums(buffer: &[u8]) -> Result<(), String> {
    let word = |i: u64| {
        let at = (i * 8) as usize;
        i64::from_le_bytes(buffer[at..at + 8].try_into().unwrap())
    };
    let (n, blocks) = (N as i64, BLOCKS as i64);
    for b in 0..blocks {
        let got = word((2 * n * blocks + b) as u64);
        let want = n * (3 * b + 1) + n * (n - 1);
        if got != want {
            return Err(format!("block {b}: sum {got}, want {want}"));
        }
    }
    Ok(())
}

/// Live fake-CANN resources by kind, ACL's process-wide initialisation left out.
pub fn live(ctl: &fake_cann::Control) -> Vec<(&'static str, i64)> {
    [
        "device",
        "memory",
        "stream",
        "cpu_binary",
        "aicore_binary",
        "threads",
        "physical",
        "reserved",
        "mapped",
        "comm",
    ]
    .into_iter()
    .map(|k| (k, ctl.live_of(k)))
    .collect()
}

/// Builds the C orchestration `src` into the shared object `out` (against the SO's and the
/// C API's headers).
pub fn orchestration_so(src: &Path, out: &Path) {
    let root = root();
    run(cc()
        .to_command()
        .args(["-shared", "-fPIC", "-std=c11", "-I"])
        .arg(root.join("aicpu/include"))
        .arg("-I")
        .arg(root.join("capi/include"))
        .arg("-o")
        .arg(out)
        .arg(src));
}

/// The slices (`"ph": "X"`) of the Chrome trace at `path`, once it is checked to be JSON, well
/// nested and with the fields the format requires.
pub fn trace_slices(path: &Path) -> Vec<serde_json::Value> {
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(path).unwrap()).expect("the trace is JSON");
    pto_host::profile::check_chrome_trace(&json).unwrap_or_else(|e| panic!("{e:?}"));
    let events = json["traceEvents"].as_array().unwrap();
    events.iter().filter(|e| e["ph"] == "X").cloned().collect()
}

/// Kernel `files` as `--kernels` takes them: their paths, comma-separated.
pub fn kernels_arg(files: &[PathBuf]) -> String {
    let paths: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    paths.join(",")
}

/// What a run printed: its stdout, then its stderr.
pub fn text(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr)
}
