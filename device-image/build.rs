//! Links the image with `linker/aicpu.ld` (and defmt's `defmt.x` when logging through defmt)
//! when building for a bare-metal target; host builds of the workspace link nothing special.
fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    println!("cargo:rerun-if-changed=../linker/aicpu.ld");
    if os == "none" {
        println!("cargo:rustc-link-arg-bins=-T{dir}/../linker/aicpu.ld");
        if std::env::var_os("CARGO_FEATURE_DEFMT").is_some() {
            println!("cargo:rustc-link-arg-bins=-Tdefmt.x");
        }
    }
}
