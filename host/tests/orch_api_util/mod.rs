//! What the tests of the C++ runtime's orchestration API share: building a program of
//! `examples/orch_api/<name>/` (its `orchestration.cpp` against `include/orch_api/`, each
//! `kernels/<k>.cpp` with `include/kernel_api/pto_kernel_shim.c` into a shared object), or
//! an orchestration of the tests' own (`host/tests/orch_api/`), the
//! orchestration's argument words (`pto_api_entry.h`), and `pto-launch run` on the
//! simulator or the fake NPU (kernels then linked as images: no library, entry
//! `pto_kernel_entry`), with golden checks.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

pub mod programs;

/// The target the tests run on.
const TARGET: &str = if cfg!(target_arch = "aarch64") {
    "aarch64-unknown-linux-gnu"
} else {
    "x86_64-unknown-linux-gnu"
};

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A fresh directory for one test's files.
pub fn scratch(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("orch-api-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The host's C compiler (`cpp == false`) or C++ compiler.
fn compiler(cpp: bool) -> Command {
    cc::Build::new()
        .cpp(cpp)
        .target(TARGET)
        .host(TARGET)
        .opt_level(1)
        .cargo_metadata(false)
        .get_compiler()
        .to_command()
}

fn run(cmd: &mut Command) {
    let out = cmd.output().expect("a compiler runs");
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Flags of every C++ source: no exceptions or RTTI, so nothing needs libstdc++ at run time.
const CXX: [&str; 5] = [
    "-std=c++17",
    "-Wall",
    "-Wextra",
    "-fno-exceptions",
    "-fno-rtti",
];

/// The kernel shim as an object file, built once per test process.
fn shim() -> &'static Path {
    static SHIM: OnceLock<PathBuf> = OnceLock::new();
    SHIM.get_or_init(|| {
        let out = scratch("shim").join("pto_kernel_shim.o");
        run(compiler(false)
            .args(["-std=c11", "-Wall", "-Wextra", "-c", "-fPIC", "-I"])
            .arg(root().join("device-sys/aicore"))
            .arg("-o")
            .arg(&out)
            .arg(root().join("include/kernel_api/pto_kernel_shim.c")));
        out
    })
}

/// `examples/orch_api/<program>/`.
pub fn source(program: &str) -> PathBuf {
    root().join("examples/orch_api").join(program)
}

/// The program's orchestration as a shared object in `dir`.
pub fn orchestration(program: &str, dir: &Path) -> PathBuf {
    orchestration_of(&source(program).join("orchestration.cpp"), &[], dir)
}

/// The compiler's command for the orchestration source `src`, with `flags`.
pub fn orchestration_compiler(flags: &[&str]) -> Command {
    let mut cmd = compiler(true);
    cmd.args(CXX)
        .args(flags)
        .arg("-I")
        .arg(root().join("include/orch_api"))
        .arg("-I")
        .arg(root().join("aicpu/include"))
        .arg("-I")
        .arg(root().join("capi/include"));
    cmd
}

/// The orchestration source `src` as a shared object in `dir`, built with `flags` too.
pub fn orchestration_of(src: &Path, flags: &[&str], dir: &Path) -> PathBuf {
    let out = dir.join("liborch.so");
    run(orchestration_compiler(&["-shared", "-fPIC"])
        .args(flags)
        .arg("-o")
        .arg(&out)
        .arg(src));
    out
}

/// The program's kernel `name` as a shared object in `dir` (its kernel_entry and the shim's
/// pto_kernel_entry).
pub fn kernel(program: &str, name: &str, dir: &Path) -> PathBuf {
    let obj = dir.join(format!("{name}.o"));
    run(compiler(true)
        .args(CXX)
        .args(["-c", "-fPIC", "-I"])
        .arg(root().join("include/kernel_api"))
        .arg("-o")
        .arg(&obj)
        .arg(source(program).join(format!("kernels/{name}.cpp"))));
    let out = dir.join(format!("{name}.so"));
    run(compiler(false)
        .args(["-shared", "-o"])
        .arg(&out)
        .arg(&obj)
        .arg(shim())
        .arg("-lm"));
    out
}

/// Flags of every source of a kernel image for the fake NPU, which uploads its loadable
/// segments alone, wherever it puts them: code that reaches its data relative to itself
/// (`-fpie`, so the shim's dtype table is found; the static link leaves no GOT), no jump
/// tables or stack protector, nothing from libc.
const NPU: [&str; 7] = [
    "-O1",
    "-fpie",
    "-fno-tree-vectorize",
    "-fno-jump-tables",
    "-fno-stack-protector",
    "-fno-asynchronous-unwind-tables",
    "-ffreestanding",
];

/// The program's kernel `name` as an image for the fake NPU in `dir`: its object and the
/// shim's linked at address 0, entry `pto_kernel_entry`.
pub fn npu_kernel(program: &str, name: &str, dir: &Path) -> PathBuf {
    let shim = dir.join("pto_kernel_shim.npu.o");
    run(compiler(false)
        .args(["-std=c11", "-c"])
        .args(NPU)
        .arg("-I")
        .arg(root().join("device-sys/aicore"))
        .arg("-o")
        .arg(&shim)
        .arg(root().join("include/kernel_api/pto_kernel_shim.c")));
    let obj = dir.join(format!("{name}.npu.o"));
    run(compiler(true)
        .args(CXX)
        .arg("-c")
        .args(NPU)
        .arg("-I")
        .arg(root().join("include/kernel_api"))
        .arg("-o")
        .arg(&obj)
        .arg(source(program).join(format!("kernels/{name}.cpp"))));
    let out = dir.join(format!("{name}.elf"));
    run(compiler(false)
        .args(["-nostdlib", "-static", "-no-pie", "-Wl,-Ttext=0"])
        .args(["-Wl,-e,pto_kernel_entry", "-Wl,--build-id=none", "-o"])
        .arg(&out)
        .arg(&obj)
        .arg(&shim));
    out
}

/// Element types, numbered as `DataType` (pto_api_dtype.h).
#[derive(Clone, Copy)]
pub enum Dtype {
    F32 = 0,
    I32 = 2,
    I64 = 7,
}

/// One argument of an orchestration's entry.
pub enum Arg {
    /// Buffer `buffer` (the n-th `--buffer`), as a tensor of `shape`.
    Tensor(usize, Dtype, Vec<u32>),
    /// A scalar word.
    Scalar(i64),
}

/// `args` as pto-launch's `--arg` values: the tensors' count, each tensor's address, dtype,
/// rank and shapes, then the scalars (pto_api_entry.h).
pub fn words(args: &[Arg]) -> Vec<String> {
    let tensors = args
        .iter()
        .take_while(|a| matches!(a, Arg::Tensor(..)))
        .count();
    let mut w = vec![tensors.to_string()];
    for a in args {
        match a {
            Arg::Tensor(b, dtype, shape) => {
                assert!(w.len() == 1 || tensors > 0, "tensors come first");
                w.push(format!("buffer:{b}"));
                w.push((*dtype as u8).to_string());
                w.push(shape.len().to_string());
                w.extend(shape.iter().map(u32::to_string));
            }
            Arg::Scalar(v) => w.push(v.to_string()),
        }
    }
    w
}

/// Little-endian bytes of `v`.
pub fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
pub fn i32s(v: &[i32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
pub fn i64s(v: &[i64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// A run of a program on the simulator.
pub struct Run<'a> {
    /// examples/orch_api/<program>.
    pub program: &'a str,
    /// Its kernels, in id order.
    pub kernels: &'a [&'a str],
    /// The buffers' initial bytes (a buffer's size is its bytes').
    pub buffers: Vec<Vec<u8>>,
    /// The entry's arguments.
    pub args: Vec<Arg>,
    /// Golden contents of buffers, with `dtype`.
    pub expect: Vec<(usize, Vec<u8>)>,
    /// `--dtype` of the golden checks: f32, i32, i64.
    pub dtype: &'a str,
    /// AICore clusters.
    pub clusters: u32,
    /// An orchestration source instead of the program's, and its compiler flags.
    pub orchestration: Option<(PathBuf, &'a [&'a str])>,
}

impl Run<'_> {
    /// Builds the program in `dir` and runs it on the simulator with `--check-accesses` (a
    /// task touching a tile another writes with no dependency between them fails the run).
    pub fn launch(&self, dir: &Path) -> Output {
        let kernels: Vec<String> = self
            .kernels
            .iter()
            .map(|k| kernel(self.program, k, dir).display().to_string())
            .collect();
        self.command(dir, &kernels)
            .arg("--check-accesses")
            .output()
            .expect("pto-launch runs")
    }

    /// [`Run::launch`] on the fake NPU, with `flags` saying where its parts are (`--backend
    /// npu ...`).
    pub fn launch_npu(&self, dir: &Path, flags: &[String]) -> Output {
        let kernels: Vec<String> = self
            .kernels
            .iter()
            .map(|k| npu_kernel(self.program, k, dir).display().to_string())
            .collect();
        self.command(dir, &kernels)
            .args(flags)
            .output()
            .expect("pto-launch runs")
    }

    /// `pto-launch run` of the orchestration (built in `dir`) with `kernels`, the buffers,
    /// arguments and golden files.
    fn command(&self, dir: &Path, kernels: &[String]) -> Command {
        let orch = match &self.orchestration {
            Some((src, flags)) => orchestration_of(src, flags, dir),
            None => orchestration(self.program, dir),
        };
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_pto-launch"));
        cmd.arg("run")
            .arg("--orchestration")
            .arg(orch)
            .args(["--kernels", &kernels.join(",")])
            .args(["--clusters", &self.clusters.to_string()])
            .args(["--dtype", self.dtype])
            .arg("--output")
            .arg(dir);
        for (i, bytes) in self.buffers.iter().enumerate() {
            let f = dir.join(format!("in_{i}.bin"));
            std::fs::write(&f, bytes).unwrap();
            cmd.args(["--buffer", &format!("{}={}", bytes.len(), f.display())]);
        }
        for w in words(&self.args) {
            cmd.args(["--arg", &w]);
        }
        for (b, golden) in &self.expect {
            let f = dir.join(format!("golden_{b}.bin"));
            std::fs::write(&f, golden).unwrap();
            cmd.args(["--expect", &format!("{b}={}", f.display())]);
        }
        cmd
    }
}

/// What a run printed: its stdout, then its stderr.
pub fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr)
}

/// The run succeeded and each of its `n` golden checks passed.
pub fn assert_golden(o: &Output, n: usize) {
    let all = text(o);
    assert!(o.status.success(), "{}: {all}", o.status);
    assert_eq!(
        all.matches("matches the golden output").count(),
        n,
        "every golden check ran and passed: {all}"
    );
}
