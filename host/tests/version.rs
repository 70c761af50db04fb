//! `pto-launch --version` names the binary and its version.

#[test]
fn version_names_pto_launch() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_pto-launch"))
        .arg("--version")
        .output()
        .expect("pto-launch runs");
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("pto-launch {}\n", env!("CARGO_PKG_VERSION"))
    );
}
