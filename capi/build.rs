//! Tells the tests which target they were built for, so they compile their C program with
//! the matching compiler.
fn main() {
    let target = std::env::var("TARGET").unwrap_or_default();
    println!("cargo:rustc-env=PTO_CAPI_TARGET={target}");
    println!("cargo:rerun-if-changed=build.rs");
}
