//! `pto-aicpu`: the AICPU device image. Built for `aarch64-unknown-none` and linked by
//! `linker/aicpu.ld`. Its entry points (`entry.rs`: `pto_aicpu_init`, `_submit`, `_close`,
//! `_scheduler`, `_report`) run the scheduler core over the AICPU platform. `_start`
//! (`start.rs`) sets up the stack and zeroed data, then `pto_aicpu_main` (`image.rs`) runs
//! the image's self-check through those entry points: a runtime in the image's region, a
//! DAG, one scheduler until every task finished. Logging goes through the device crates' facade
//! (defmt with the `defmt` feature). With `qemu`, the image runs as a Linux process under
//! `qemu-aarch64`: log frames go to stdout and the self-check's result is the exit status.
//!
//! On a hosted target this binary only says what it is for (the workspace builds every
//! member on the host).
#![cfg_attr(target_os = "none", no_std, no_main)]
#![deny(missing_docs)]

#[cfg(target_os = "none")]
mod entry;
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
