//! Builds the fake CANN (`device-sys/cann/fake/*.c`, with the AICore executor's host build)
//! as `libascendcl.so`, with `libhccl.so`, `libruntime.so` and `libascend_hal.so` links to
//! it, and reaches its control functions. Shared by the tests of `pto-device-sys` and
//! `pto-host`.
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
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../device-sys");
    let fake = root.join("cann/fake");
    let mut sources: Vec<PathBuf> = std::fs::read_dir(&fake)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "c"))
        .collect();
    sources.sort();
    sources.push(root.join("aicore/executor.cpp"));
    sources.push(root.join("aicore/host.c"));
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
    cmd.args(["-shared", "-fPIC", "-Wall", "-Werror", "-std=gnu11", "-I"])
        .arg(root.join("aicore"))
        .arg("-o")
        .arg(&lib)
        .args(["-x", "c"])
        .args(&sources)
        .args(["-lpthread", "-ldl"]);
    for d in defines {
        cmd.arg(format!("-D{d}"));
    }
    let out = cmd.output().expect("the C compiler runs");
    assert!(
        out.status.success(),
        "building the fake CANN failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for name in ["libhccl.so", "libruntime.so", "libascend_hal.so"] {
        let link = dir.join(name);
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink("libascendcl.so", &link).unwrap();
    }
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

    /// Fails the `n`-th call from now that is not a release (0: none).
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

    /// Calls made so far, releases left out (what [`Control::fail_at`] counts).
    pub fn forward_calls(&self) -> i64 {
        // SAFETY: the fake's prototype: `long fake_cann_forward_calls(void)`.
        unsafe {
            let f = self
                .lib
                .get::<unsafe extern "C" fn() -> i64>(b"fake_cann_forward_calls\0")
                .unwrap();
            f()
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

    /// Fails the `nth` call of `function` from now (1: its next; 0: none).
    pub fn fail_call(&self, function: &str, nth: i64) {
        let name = std::ffi::CString::new(function).unwrap();
        // SAFETY: the fake's prototype: `int fake_cann_fail_call(const char *, long)`.
        unsafe {
            let f = self
                .lib
                .get::<unsafe extern "C" fn(*const i8, i64) -> i32>(b"fake_cann_fail_call\0")
                .unwrap();
            f(name.as_ptr(), nth);
        }
    }

    /// Calls of `function` so far.
    pub fn calls_of(&self, function: &str) -> i64 {
        // SAFETY: the fake's prototype: `long fake_cann_calls_of(const char *)`.
        unsafe { self.count_of(b"fake_cann_calls_of\0", Some(function)) }
    }

    /// Live resources of one kind (`"memory"`, `"stream"`, `"device"`, ...).
    pub fn live_of(&self, kind: &str) -> i64 {
        // SAFETY: the fake's prototype: `long fake_cann_live(const char *)`.
        unsafe { self.count_of(b"fake_cann_live\0", Some(kind)) }
    }

    /// Live resources of every kind.
    pub fn live(&self) -> i64 {
        // SAFETY: as in `live_of`; null means all.
        unsafe { self.count_of(b"fake_cann_live\0", None) }
    }

    /// Calls the fake's function `symbol` with `name` as a C string (null for `None`).
    ///
    /// # Safety
    /// `symbol` (NUL-terminated) names a function of the fake whose prototype is
    /// `long f(const char *)`.
    unsafe fn count_of(&self, symbol: &[u8], name: Option<&str>) -> i64 {
        let name = name.map(|n| std::ffi::CString::new(n).unwrap());
        let arg = name.as_ref().map_or(std::ptr::null(), |n| n.as_ptr());
        // SAFETY: the prototype is the caller's promise; `arg` is null or a C string that
        // lives until the call returns.
        unsafe {
            let f = self
                .lib
                .get::<unsafe extern "C" fn(*const std::ffi::c_char) -> i64>(symbol)
                .unwrap();
            f(arg)
        }
    }
}
