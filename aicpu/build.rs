//! Links libpto_aicpu.so with a build-id and immediate binding, and builds
//! the host version of the AICore executor (`device-sys/aicore/`) and the tests' C kernels
//! and orchestration for the test binaries only.

use std::path::PathBuf;

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    // libc by name (NEEDED), so its few symbols carry glibc versions.
    println!("cargo:rustc-link-lib=dylib=c");
    println!("cargo:rustc-cdylib-link-arg=-Wl,--build-id=sha1");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-z,now");

    // The harness builds the SO for the target it runs on.
    println!(
        "cargo:rustc-env=PTO_TEST_TARGET={}",
        std::env::var("TARGET").unwrap()
    );

    let aicore = root.join("../device-sys/aicore");
    let tests_c = root.join("tests/c");
    for f in [
        "executor.cpp",
        "host.c",
        "pto_aicore.h",
        "pto_aicore_host.h",
    ] {
        println!("cargo:rerun-if-changed={}", aicore.join(f).display());
    }
    for f in ["kernels.c", "orchestration.c"] {
        println!("cargo:rerun-if-changed={}", tests_c.join(f).display());
    }
    let objects = cc::Build::new()
        .cargo_metadata(false)
        .include(&aicore)
        .include(root.join("include"))
        .include(root.join("../capi/include"))
        .flag("-std=c11")
        .flag("-x")
        .flag("c")
        .warnings(true)
        .extra_warnings(true)
        .warnings_into_errors(true)
        .file(aicore.join("executor.cpp"))
        .file(aicore.join("host.c"))
        .file(tests_c.join("kernels.c"))
        .file(tests_c.join("orchestration.c"))
        .compile_intermediates();
    for o in objects {
        println!("cargo:rustc-link-arg-tests={}", o.display());
    }
}
