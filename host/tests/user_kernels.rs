//! A user's own C kernels through `pto-launch run` on the simulator, built as a user would:
//! at `-O0`, `-O2` and `-Os`, with a helper before the entry, a `static const` table and a
//! call into libc, each giving the right result; files the simulator cannot take (raw code,
//! another machine's ELF, an object file, an SO without the entry) refused with a line naming
//! the file; and kernels that crash (a bad pointer, a division by zero, a stack overflow),
//! and an orchestration that does, each ending the run with 128 + the signal and one line
//! naming the kernel, the task and the core; and golden checks (`--expect`) of f16 and bf16
//! results, passing a correct one and failing a perturbed one with the index and the error.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const N: u64 = 64;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn scratch(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("user-kernels-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The target the tests run on.
const TARGET: &str = if cfg!(target_arch = "aarch64") {
    "aarch64-unknown-linux-gnu"
} else {
    "x86_64-unknown-linux-gnu"
};

fn cc() -> Command {
    let tool = cc::Build::new()
        .opt_level(0)
        .target(TARGET)
        .host(TARGET)
        .cargo_metadata(false)
        .get_compiler();
    tool.to_command()
}

fn run_ok(cmd: &mut Command) {
    let out = cmd.output().expect("the tool runs");
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `host/tests/user_c/<src>` built with `flags` into `out`.
fn build(src: &str, flags: &[&str], out: &Path) -> PathBuf {
    run_ok(
        cc().args(flags)
            .arg("-I")
            .arg(root().join("device-sys/aicore"))
            .arg("-I")
            .arg(root().join("aicpu/include"))
            .arg("-I")
            .arg(root().join("capi/include"))
            .arg("-o")
            .arg(out)
            .arg(root().join("host/tests/user_c").join(src)),
    );
    out.to_path_buf()
}

fn orchestration() -> PathBuf {
    static SO: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    SO.get_or_init(|| {
        build(
            "one_task.c",
            &["-shared", "-fPIC", "-O1"],
            &scratch("orch").join("libone_task.so"),
        )
    })
    .clone()
}

/// The input words.
fn input() -> Vec<i64> {
    (0..N as i64).map(|i| 37 * i - 500).collect()
}

/// `pto-launch run` of one task of `kernels` over the input, writing the buffers to `out`;
/// `extra` more orchestration arguments.
fn launch(kernels: &str, out: &Path, extra: &[&str]) -> Output {
    let bytes: Vec<u8> = input().iter().flat_map(|v| v.to_le_bytes()).collect();
    launch_on(kernels, &bytes, out, extra, &[])
}

/// `pto-launch run` of one task of `kernels` over `x` (N words), writing the buffers to
/// `out`; `extra` more orchestration arguments, `flags` more flags.
fn launch_on(kernels: &str, x_bytes: &[u8], out: &Path, extra: &[&str], flags: &[&str]) -> Output {
    let x = out.join("x.bin");
    std::fs::write(&x, x_bytes).unwrap();
    let n = (N * 8).to_string();
    Command::new(env!("CARGO_BIN_EXE_pto-launch"))
        .arg("run")
        .arg("--orchestration")
        .arg(orchestration())
        .args(["--kernels", kernels])
        .arg("--buffer")
        .arg(format!("{n}={}", x.display()))
        .args(["--buffer", &n])
        .args([
            "--arg", "kernel:0", "--arg", "buffer:0", "--arg", "buffer:1",
        ])
        .args(["--arg", &N.to_string()])
        .args(extra.iter().flat_map(|e| ["--arg", e]))
        .arg("--output")
        .arg(out)
        .args(flags)
        .output()
        .expect("pto-launch runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn a_kernel_built_any_normal_way_runs_as_written() {
    const TABLE: [i64; 16] = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3];
    let want: Vec<i64> = input()
        .iter()
        .map(|&v| (2 * v + 1) * TABLE[(v as u64 % 16) as usize])
        .collect();
    for opt in ["-O0", "-O2", "-Os"] {
        let dir = scratch(&format!("opt{opt}"));
        let so = build("table.c", &["-shared", "-fPIC", opt], &dir.join("table.so"));
        let o = launch(so.to_str().unwrap(), &dir, &[]);
        assert!(o.status.success(), "{opt}: {}", stderr(&o));
        let y = std::fs::read(dir.join("buffer_1.bin")).unwrap();
        let got: Vec<i64> = y
            .chunks(8)
            .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(got, want, "{opt}: the kernel ran as written");
    }
}

#[test]
fn files_the_simulator_cannot_take_are_refused_naming_the_file() {
    let dir = scratch("refused");
    let so = build(
        "table.c",
        &["-shared", "-fPIC", "-O1"],
        &dir.join("table.so"),
    );
    let obj = build("table.c", &["-c", "-O1"], &dir.join("table.o"));
    // Raw code, as earlier releases took: the object's .text alone.
    let raw = dir.join("table.bin");
    run_ok(
        Command::new("objcopy")
            .args(["-O", "binary", "-j", ".text*"])
            .arg(&obj)
            .arg(&raw),
    );
    // The same shared object, its header saying another machine.
    let other = dir.join("other.so");
    let mut bytes = std::fs::read(&so).unwrap();
    let (machine, name) = if cfg!(target_arch = "aarch64") {
        (62u16, "x86_64")
    } else {
        (183u16, "aarch64")
    };
    bytes[18..20].copy_from_slice(&machine.to_le_bytes());
    std::fs::write(&other, bytes).unwrap();
    let mut cases: Vec<(String, &str)> = vec![
        (raw.display().to_string(), "is not an ELF file"),
        (other.display().to_string(), name),
        (obj.display().to_string(), "is an object file"),
        (
            format!("{}:no_such_entry", so.display()),
            "does not export a function `no_such_entry` (it exports: pto_kernel_entry, weight)",
        ),
        (
            format!("{}:TABLE", so.display()),
            "does not export a function `TABLE`",
        ),
    ];
    // A real aarch64 shared object too, where the cross compiler is installed (CI has it).
    let cross = dir.join("table_aarch64.so");
    let built = cfg!(target_arch = "x86_64")
        && Command::new("aarch64-linux-gnu-gcc")
            .args(["-shared", "-fPIC", "-O1", "-I"])
            .arg(root().join("device-sys/aicore"))
            .arg("-o")
            .arg(&cross)
            .arg(root().join("host/tests/user_c/table.c"))
            .output()
            .is_ok_and(|o| o.status.success());
    if built {
        cases.push((cross.display().to_string(), "holds aarch64 code"));
    }
    for (kernels, why) in cases {
        let o = launch(&kernels, &dir, &[]);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{kernels}: {e}");
        let file = kernels.split(':').next().unwrap();
        assert!(
            e.contains(&format!("kernel {file} ")),
            "names the file: {e}"
        );
        assert!(e.contains(why), "{kernels}: {e}");
        assert_eq!(e.lines().count(), 1, "one line: {e}");
    }
    let hint = "cc -shared -fPIC";
    let o = launch(raw.to_str().unwrap(), &dir, &[]);
    assert!(
        stderr(&o).contains(hint),
        "says how to build: {}",
        stderr(&o)
    );
}

/// Runs the crashing kernel `entry` of `crash.c`; its exit status and its stderr.
fn crash(entry: &str) -> (Option<i32>, String) {
    let dir = scratch(&format!("crash-{entry}"));
    let so = build(
        "crash.c",
        &["-shared", "-fPIC", "-O1"],
        &dir.join("crash.so"),
    );
    let o = launch(&format!("{}:{entry}", so.display()), &dir, &[]);
    (o.status.code(), stderr(&o))
}

fn assert_named(entry: &str, status: i32, what: &str) {
    let (code, e) = crash(entry);
    assert_eq!(code, Some(status), "{entry}: {e}");
    let line = e.trim_end();
    assert_eq!(line.lines().count(), 1, "one line: {e}");
    assert!(
        line.starts_with(&format!("error: kernel `{entry}` (id 0) {what}")),
        "{e}"
    );
    assert!(line.contains(", running task 0:0@"), "names the task: {e}");
    assert!(line.contains(" on core "), "names the core: {e}");
    assert!(
        line.contains(" at address 0x") || line.contains(" at instruction 0x"),
        "names the address: {e}"
    );
    assert!(
        line.ends_with(&format!("exits with status {status}")),
        "{e}"
    );
}

#[test]
fn a_kernel_that_writes_through_a_bad_pointer_is_named() {
    assert_named("segfault", 139, "crashed with SIGSEGV");
}

#[test]
fn a_kernel_that_overflows_its_stack_is_named() {
    assert_named("overflow", 139, "overflowed its stack");
}

// An integer division by zero traps on x86_64; aarch64 gives 0 and no signal.
#[cfg(target_arch = "x86_64")]
#[test]
fn a_kernel_that_divides_by_zero_is_named() {
    assert_named("divide_by_zero", 136, "crashed with SIGFPE");
}

#[test]
fn an_orchestration_that_crashes_is_named() {
    let dir = scratch("orch-crash");
    let so = build(
        "table.c",
        &["-shared", "-fPIC", "-O1"],
        &dir.join("table.so"),
    );
    let o = launch(so.to_str().unwrap(), &dir, &["16"]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(139), "{e}");
    assert_eq!(e.trim_end().lines().count(), 1, "one line: {e}");
    assert!(
        e.starts_with(&format!(
            "error: the orchestration ({}) crashed with SIGSEGV",
            orchestration().display()
        )),
        "{e}"
    );
    assert!(e.contains("at address 0x10"), "{e}");
}

/// Checks the kernel `entry` of `halves.c` (y = 1.5 x over 2-byte values of `dtype`) with
/// `--expect` against `golden` of the input `x`: the correct golden output passes, one
/// with element 17 moved by 8 (outside even bf16's tolerance) fails naming it.
fn golden_check(entry: &str, dtype: &str, x: Vec<u16>, golden: Vec<u16>) {
    let dir = scratch(&format!("golden-{dtype}"));
    let so = build(
        "halves.c",
        &["-shared", "-fPIC", "-O2"],
        &dir.join("halves.so"),
    );
    let kernels = format!("{}:{entry}", so.display());
    let bytes = |v: &[u16]| -> Vec<u8> { v.iter().flat_map(|h| h.to_le_bytes()).collect() };
    let want = dir.join("golden.bin");
    std::fs::write(&want, bytes(&golden)).unwrap();
    let expect = format!("1={}", want.display());
    let flags = ["--expect", &expect, "--dtype", dtype];
    let o = launch_on(&kernels, &bytes(&x), &dir, &[], &flags);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{dtype}: {}{out}", stderr(&o));
    assert!(
        out.contains(&format!(
            "buffer 1 matches the golden output {}",
            want.display()
        )) && out.contains(&format!("all {} {dtype} elements within", x.len())),
        "{out}"
    );
    // The same with element 17 of the golden output moved by 8.
    let mut off = golden.clone();
    off[17] = match dtype {
        "f16" => {
            pto_sim::half::f16::from_f32(pto_sim::half::f16::from_bits(golden[17]).to_f32() + 8.0)
                .to_bits()
        }
        _ => {
            pto_sim::half::bf16::from_f32(pto_sim::half::bf16::from_bits(golden[17]).to_f32() + 8.0)
                .to_bits()
        }
    };
    std::fs::write(&want, bytes(&off)).unwrap();
    let mut json = flags.to_vec();
    json.push("--json");
    let o = launch_on(&kernels, &bytes(&x), &dir, &[], &json);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains("buffer 1 does not match the golden output"),
        "{e}"
    );
    assert!(
        e.contains(&format!("1 of {} {dtype} elements outside", x.len())),
        "{e}"
    );
    assert!(e.contains("first at index 17: "), "{e}");
    assert!(e.contains("(abs 8, rel "), "names the error: {e}");
    let v: serde_json::Value = serde_json::from_str(String::from_utf8_lossy(&o.stdout).trim())
        .expect("the envelope is printed before the verdict");
    let c = &v["results"]["golden"][0]["comparison"];
    assert_eq!(c["outside"], 1, "{v}");
    assert_eq!(c["first_outside"]["index"], 17, "{v}");
    assert_eq!(c["dtype"], dtype, "{v}");
}

#[test]
fn an_f16_result_passes_its_golden_check_and_a_perturbed_one_fails() {
    use pto_sim::half::f16;
    let x: Vec<f16> = (0..4 * N)
        .map(|i| f16::from_f32(i as f32 * 0.25 - 30.0))
        .collect();
    let golden = x
        .iter()
        .map(|v| f16::from_f32(v.to_f32() * 1.5).to_bits())
        .collect();
    golden_check(
        "scale_f16",
        "f16",
        x.iter().map(|v| v.to_bits()).collect(),
        golden,
    );
}

#[test]
fn a_bf16_result_passes_its_golden_check_and_a_perturbed_one_fails() {
    use pto_sim::half::bf16;
    let x: Vec<bf16> = (0..4 * N)
        .map(|i| bf16::from_f32(i as f32 * 0.75 - 90.0))
        .collect();
    let golden = x
        .iter()
        .map(|v| bf16::from_f32(v.to_f32() * 1.5).to_bits())
        .collect();
    golden_check(
        "scale_bf16",
        "bf16",
        x.iter().map(|v| v.to_bits()).collect(),
        golden,
    );
}

/// `pto-launch run --check-accesses` of `alias.c` (two tasks of the table kernel, the second
/// reading what the first writes), the second naming y `through` as its own buffer (0) or
/// as y (1).
fn aliasing(through: &str) -> Output {
    let dir = scratch(&format!("alias-{through}"));
    let orch = build(
        "alias.c",
        &["-shared", "-fPIC", "-O1"],
        &dir.join("libalias.so"),
    );
    let so = build(
        "table.c",
        &["-shared", "-fPIC", "-O1"],
        &dir.join("table.so"),
    );
    let n = (N * 8).to_string();
    Command::new(env!("CARGO_BIN_EXE_pto-launch"))
        .args(["run", "--check-accesses", "--orchestration"])
        .arg(&orch)
        .arg("--kernels")
        .arg(&so)
        .args(["--buffer", &n, "--buffer", &n, "--buffer", &n])
        .args([
            "--arg", "kernel:0", "--arg", "buffer:0", "--arg", "buffer:1",
        ])
        .args([
            "--arg",
            "buffer:2",
            "--arg",
            &N.to_string(),
            "--arg",
            through,
        ])
        .output()
        .expect("pto-launch runs")
}

#[test]
fn the_access_check_finds_two_c_tasks_that_name_the_same_bytes_through_other_buffers() {
    let o = aliasing("0");
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(e.contains("the run's tasks race"), "{e}");
    assert!(
        e.contains("(kernel `table`, id 0) writes bytes")
            && e.contains("that task 0:1@")
            && e.contains("reads, and no dependency orders the two"),
        "{e}"
    );
    let o = aliasing("1");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}{out}", stderr(&o));
    assert!(
        out.contains("access check: no two of 2 tasks race (2 of them C kernels"),
        "{out}"
    );
}
