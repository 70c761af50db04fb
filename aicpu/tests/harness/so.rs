//! Loading libpto_aicpu.so as CANN's AICPU process does: `dlopen(RTLD_LAZY | RTLD_GLOBAL)`,
//! entry points resolved by name, `exec` called on N threads, each with its own copy of the
//! payload.

use std::ffi::c_void;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use libloading::os::unix::{Library, RTLD_GLOBAL, RTLD_LAZY, Symbol};

/// An entry point's shape: `uint32_t (*)(void *)`.
pub type Entry = unsafe extern "C" fn(*mut c_void) -> u32;

/// The loaded SO and its entry points.
pub struct So {
    _lib: Library,
    pub init: Entry,
    pub exec: Entry,
    /// `pto_aicpu_inject_fault`, which only the fault-injecting build exports.
    pub inject_fault: Option<unsafe extern "C" fn(u32) -> u32>,
}

/// Builds the SO (release, `panic = "abort"`, for the target the tests run on) with a cargo
/// call of its own: cargo builds a test's dependency graph with unwinding, which a no_std
/// cdylib cannot link. The test binary's `SO_FEATURES` says which: none, the shipped SO (in
/// `aicpu/target/so`), or the fault-injecting one of `tests/faults.rs` (in
/// `aicpu/target/so-faults`). The SO's path.
pub fn path() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let target = env!("PTO_TEST_TARGET");
    let features = crate::SO_FEATURES;
    let out = dir.join("target").join(if features.is_empty() {
        "so"
    } else {
        "so-faults"
    });
    let status = Command::new(env!("CARGO"))
        .current_dir(dir)
        .args([
            "build",
            "--release",
            "--lib",
            "--target",
            target,
            "--features",
            &features.join(","),
            "--target-dir",
        ])
        .arg(&out)
        .env_remove("CARGO_TARGET_DIR")
        .status()
        .expect("running cargo to build libpto_aicpu.so");
    assert!(status.success(), "building libpto_aicpu.so failed");
    out.join(target).join("release").join("libpto_aicpu.so")
}

/// The SO, loaded once per process (CANN keeps it loaded between launches).
pub fn so() -> &'static So {
    static SO: OnceLock<So> = OnceLock::new();
    SO.get_or_init(|| {
        let p = path();
        // SAFETY: loading our own SO runs no constructors of its own (no_std, no init
        // arrays beyond the toolchain's); the flags are CANN's.
        let lib = unsafe { Library::open(Some(&p), RTLD_LAZY | RTLD_GLOBAL) }
            .unwrap_or_else(|e| panic!("dlopen {}: {e}", p.display()));
        // SAFETY: the symbols are the SO's entry points, of type `Entry` (its ABI).
        let init: Symbol<Entry> = unsafe { lib.get(b"pto_aicpu_init\0") }.expect("init");
        // SAFETY: as above.
        let exec: Symbol<Entry> = unsafe { lib.get(b"pto_aicpu_exec\0") }.expect("exec");
        let (init, exec) = (*init, *exec);
        // SAFETY: as above; the symbol, where defined, is `uint32_t (*)(uint32_t)`.
        let inject_fault =
            unsafe { lib.get::<unsafe extern "C" fn(u32) -> u32>(b"pto_aicpu_inject_fault\0") }
                .ok()
                .map(|f| *f);
        So {
            _lib: lib,
            init,
            exec,
            inject_fault,
        }
    })
}

/// Calls `exec` on `threads` threads, each with its own copy of `payload` (as CANN copies
/// the launch arguments); their return values.
pub fn exec_on_threads<T: Copy + Send + 'static>(payload: T, threads: usize) -> Vec<u32> {
    let exec = so().exec;
    let hs: Vec<_> = (0..threads)
        .map(|_| {
            std::thread::spawn(move || {
                let mut copy = payload;
                // SAFETY: `copy` is a payload of the exec ABI, alive for the call.
                unsafe { exec((&raw mut copy).cast()) }
            })
        })
        .collect();
    hs.into_iter()
        .map(|h| h.join().expect("exec thread"))
        .collect()
}
