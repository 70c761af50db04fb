//! `pto-aicpu`: the AICPU device image. Built for `aarch64-unknown-none` and linked by
//! `linker/aicpu.ld`: `_start` (`start.rs`) sets up the stack and zeroed data, then
//! `pto_aicpu_main` (`image.rs`) runs the image's self-check: it lays a runtime out in the
//! image's region, submits a DAG, and runs the scheduler over the AICPU platform (counter,
//! barriers) until every task finished. Logging goes through the device crates' facade
//! (defmt with the `defmt` feature). With `qemu`, the image runs as a Linux process under
//! `qemu-aarch64`: log frames go to stdout and the self-check's result is the exit status.
//!
//! On a hosted target this binary only says what it is for (the workspace builds every
//! member on the host).
#![cfg_attr(target_os = "none", no_std, no_main)]
#![deny(missing_docs)]

#[cfg(target_os = "none")]
mod exit;
#[cfg(target_os = "none")]
mod image;
#[cfg(all(target_os = "none", feature = "defmt"))]
mod logger;
#[cfg(target_os = "none")]
mod start;

#[cfg(not(target_os = "none"))]
fn main() {
    eprintln!(
        "pto-aicpu is the AICPU device image: build it with \
         `cargo build -p pto-device-image --target aarch64-unknown-none --release`"
    );
    std::process::exit(2);
}
