//! pto-device-sys: the real device under `pto-runtime-core`.
//!
//! This crate is a skeleton today: it compiles (also for `aarch64-unknown-none`) and fixes its
//! place in the workspace. The AICPU `Platform` (AICore doorbell and status registers through
//! `volatile`, the system counter, barriers and cache maintenance), the CANN declarations
//! from our own C header through `bindgen`, and run-time loading of ACL/HCCL with clear errors
//! when CANN is absent arrive with the device-path issue.
//!
//! Principles:
//! - `no_std` for everything that runs on the AICPU; `std` only for host-side CANN loading.
//! - Every register access goes through one `raw` module with `// SAFETY:` comments.
#![no_std]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

/// The system counter of a2a3 AICPUs ticks at 50 MHz: 50 ticks per microsecond.
pub const A2A3_TICKS_PER_US: u64 = 50;
