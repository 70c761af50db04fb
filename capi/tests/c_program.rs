//! A C program links the static library and runs DAGs through the C ABI on a machine it
//! provides (cores played by threads): built here with `cc`, run, and checked.

use std::path::PathBuf;
use std::process::Command;

/// The static library cargo built with this test: the newest `libpto_runtime_capi-*.a`
/// beside the test binary (a test build does not copy it up to `target/<profile>/`, where an
/// older `cargo build` may have left a stale one).
fn static_library() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap();
    std::fs::read_dir(deps)
        .unwrap()
        .flatten()
        .filter(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.starts_with("libpto_runtime_capi-") && n.ends_with(".a")
        })
        .max_by_key(|e| e.metadata().and_then(|m| m.modified()).ok())
        .map(|e| e.path())
        .expect("cargo builds libpto_runtime_capi.a with the crate")
}

#[test]
fn a_c_image_runs_a_dag_through_the_abi() {
    let lib = static_library();
    let dir = env!("CARGO_MANIFEST_DIR");
    let out = std::env::temp_dir().join(format!("pto-capi-dag-{}", std::process::id()));
    let target = env!("PTO_CAPI_TARGET");
    let cc = cc::Build::new()
        .target(target)
        .host(target)
        .opt_level(1)
        .cargo_metadata(false)
        .get_compiler();
    let built = cc
        .to_command()
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror"])
        .arg(format!("-I{dir}/include"))
        .arg(format!("{dir}/tests/c/dag.c"))
        .arg(&lib)
        .args([
            "-lpthread",
            "-ldl",
            "-lm",
            "-lrt",
            "-lutil",
            "-lgcc_s",
            "-lc",
        ])
        .arg("-o")
        .arg(&out)
        .output()
        .expect("the C compiler runs");
    assert!(
        built.status.success(),
        "compiling dag.c failed:\n{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let run = Command::new(&out).output().unwrap();
    let _ = std::fs::remove_file(&out);
    assert!(
        run.status.success(),
        "the C program failed:\n{}{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(String::from_utf8_lossy(&run.stdout).contains("399 tasks ran"));
}
