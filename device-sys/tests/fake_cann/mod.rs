//! Builds the fake CANN (`device-sys/cann/fake/fake_cann.c`) as `libascendcl.so`, with
//! `libhccl.so` a link to it, and reaches its control functions. Shared by the tests of
//! `pto-device-sys` and `pto-host`.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The target the tests run on, for the C compiler.
const TARGET: &str = if cfg!(target_arch = "aarch64") {
    "aarch64-unknown-linux-gnu"
} else {
    "x86_64-unknown-linux-gnu"
};

/// Builds the fake into a fresh `lib64/` under cargo's test scratch directory, with the C
/// macros `defines` (`FAKE_OMIT_MAPMEM`, `FAKE_OMIT_SETPID`). Returns the `lib64` directory.
pub fn build(tag: &str, defines: &[&str]) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("device-sys/cann/fake/fake_cann.c");
    // Under cargo's scratch directory for tests (inside target/), one per process: a running
    // test may have the library of another loaded.
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("fake-cann-{tag}-{}", std::process::id()))
        .join("lib64");
    std::fs::create_dir_all(&dir).unwrap();
    let lib = dir.join("libascendcl.so");
    let cc = cc::Build::new()
        .target(TARGET)
        .host(TARGET)
        .opt_level(1)
        .cargo_metadata(false)
        .get_compiler();
    let mut cmd = cc.to_command();
    cmd.args(["-shared", "-fPIC", "-Wall", "-Werror", "-o"])
        .arg(&lib)
        .arg(&src)
        .arg("-lpthread");
    for d in defines {
        cmd.arg(format!("-D{d}"));
    }
    let out = cmd.output().expect("the C compiler runs");
    assert!(
        out.status.success(),
        "building the fake CANN failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let hccl = dir.join("libhccl.so");
    let _ = std::fs::remove_file(&hccl);
    std::os::unix::fs::symlink("libascendcl.so", &hccl).unwrap();
    dir
}

/// The fake's control functions, through the library the runtime loaded (the same handle).
pub struct Control {
    lib: libloading::Library,
}

impl Control {
    /// Opens the fake in `dir` (already loaded: the loader hands back the same library).
    pub fn open(dir: &Path) -> Self {
        // SAFETY: the fake has no initialisers beyond static data.
        let lib = unsafe { libloading::Library::new(dir.join("libascendcl.so")) }.unwrap();
        Control { lib }
    }

    /// Fails the `n`-th call from now (0: none).
    pub fn fail_at(&self, n: i64) {
        // SAFETY: the fake's prototype: `int fake_cann_fail_at(long)`.
        unsafe {
            let f = self
                .lib
                .get::<unsafe extern "C" fn(i64) -> i32>(b"fake_cann_fail_at\0")
                .unwrap();
            f(n);
        }
    }

    /// Calls made so far.
    pub fn calls(&self) -> i64 {
        // SAFETY: the fake's prototype: `long fake_cann_calls(void)`.
        unsafe {
            let f = self
                .lib
                .get::<unsafe extern "C" fn() -> i64>(b"fake_cann_calls\0")
                .unwrap();
            f()
        }
    }

    /// Live resources of every kind.
    pub fn live(&self) -> i64 {
        // SAFETY: the fake's prototype: `long fake_cann_live(const char *)`; null means all.
        unsafe {
            let f = self
                .lib
                .get::<unsafe extern "C" fn(*const i8) -> i64>(b"fake_cann_live\0")
                .unwrap();
            f(std::ptr::null())
        }
    }
}
