//! Links libpto_aicpu.so (a build-id, immediate binding, libc by name, the dynamic-loader
//! shim `src/dl.c`), and builds for the test binaries only: the host version of the AICore
//! executor (`device-sys/aicore/`), the tests' C kernels, and the orchestration SOs the
//! harness hands the SO (`tests/c/`).

use std::path::{Path, PathBuf};

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());

    // The SO itself.
    println!("cargo:rerun-if-changed=src/dl.c");
    cc::Build::new()
        .file(root.join("src/dl.c"))
        .warnings_into_errors(true)
        .compile("pto_aicpu_dl");
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
        "pto_aicore_layout.h",
    ] {
        println!("cargo:rerun-if-changed={}", aicore.join(f).display());
    }
    for f in [
        "kernels.c",
        "layout.c",
        "orchestration.c",
        "orchestration_misnamed.c",
    ] {
        println!("cargo:rerun-if-changed={}", tests_c.join(f).display());
    }
    // examples/c's vector add, the README's C program, runs in the harness too.
    let example = root.join("../examples/c/vector_add");
    for f in ["orchestration.c", "add.c"] {
        println!("cargo:rerun-if-changed={}", example.join(f).display());
    }
    println!("cargo:rerun-if-changed=include/pto_aicpu.h");
    let c = || {
        let mut b = cc::Build::new();
        b.cargo_metadata(false)
            .include(&aicore)
            .include(root.join("include"))
            .include(root.join("../capi/include"))
            .flag("-std=c11")
            .flag("-x")
            .flag("c")
            .warnings(true)
            .extra_warnings(true)
            .warnings_into_errors(true);
        b
    };
    let objects = c()
        .file(aicore.join("executor.cpp"))
        .file(aicore.join("host.c"))
        .file(tests_c.join("kernels.c"))
        .file(tests_c.join("layout.c"))
        .file(tests_c.join("orchestration.c"))
        .compile_intermediates();
    // The example's kernel under a name of its own (every kernel file's entry is
    // `pto_kernel_entry`, and the harness links them together).
    let example_kernel = c()
        .define("pto_kernel_entry", "pto_example_vector_add")
        .file(example.join("add.c"))
        .compile_intermediates();
    for o in objects.into_iter().chain(example_kernel) {
        println!("cargo:rustc-link-arg-tests={}", o.display());
    }
    for (name, env) in [
        ("orchestration", "PTO_TEST_ORCH_SO"),
        ("orchestration_misnamed", "PTO_TEST_ORCH_MISNAMED_SO"),
    ] {
        let so = shared(&c(), &tests_c.join(format!("{name}.c")), &out, name);
        println!("cargo:rustc-env={env}={}", so.display());
    }
    let so = shared(
        &c(),
        &example.join("orchestration.c"),
        &out,
        "example_vector_add",
    );
    println!("cargo:rustc-env=PTO_TEST_EXAMPLE_SO={}", so.display());
    let so = shared(
        &c(),
        &example.join("../layers/orchestration.c"),
        &out,
        "example_layers",
    );
    println!("cargo:rustc-env=PTO_TEST_LAYERS_SO={}", so.display());
}

/// Builds `src` into the shared object `lib<name>.so` in `out`, with the target's compiler.
fn shared(b: &cc::Build, src: &Path, out: &Path, name: &str) -> PathBuf {
    let objects = b.clone().file(src).compile_intermediates();
    let so = out.join(format!("lib{name}.so"));
    // The compiler alone: the build's flags (`-x c`) would read the objects as C.
    let status = std::process::Command::new(b.get_compiler().path())
        .arg("-shared")
        .arg("-o")
        .arg(&so)
        .args(&objects)
        .status()
        .expect("running the C compiler");
    assert!(status.success(), "linking {}", so.display());
    so
}
