//! Launching on an Ascend NPU through CANN (feature `cann`; CANN is loaded at run time).
//!
//! The sequence, as CANN's interface wants it (see `docs/running-on-an-npu.md`):
//! [`NpuSession::open`] loads ACL, the runtime and the driver HAL, sets the device on every
//! host thread that calls in, sets the op-execute timeout, creates an AICPU and an AICore
//! stream, uploads `libpto_aicpu.so` once per process through the dispatcher SO
//! (`pto-dispatcher`) and CANN's extend-kernels library, registers its entries from a
//! `.json` file, launches `init`, registers the AICore executor and builds the register
//! table from the HAL. [`NpuSession::run`] then runs a [`RunSpec`] (the user's orchestration
//! SO, kernels, buffers, arguments): the executor launched before the AICPU's `exec`, both
//! streams synchronised within bounds, the device's report and the buffers read back. The
//! timeouts are ordered device watchdog < op-execute < stream sync ([`Timeouts`]). A failure
//! resets the device and is reported as [`NpuError`]: the host's CANN call by name, code and
//! message, and apart from it the device's run status.
//!
//! Files: `options.rs` (what a session is opened with), `device.rs` (ACL init, the device
//! on each thread), `bootstrap.rs`, `register.rs`, `session.rs`, `run.rs`, `uploads.rs` (code on the device once per
//! session), `program.rs`
//! (what a run executes), `records.rs` (the task records read back), `record_stream.rs`
//! (collecting them while the run goes), `abi_payload.rs` (all that depends on the AICPU SO's ABI),
//! `error.rs`.

mod abi_payload;
mod bootstrap;
mod device;
mod error;
mod kernel_image;
mod options;
mod record_stream;
mod records;
mod register;
mod run;
mod session;
mod uploads;

pub use crate::program::{BufferSpec, KernelSpec, MAX_WATCHED, OrchArg, RunSpec};
pub use abi_payload::{DeviceStatus, fatal_kind_name};
pub use error::NpuError;
pub use kernel_image::{KernelImage, kernel_image};
pub use options::{Artifacts, NpuOptions, Timeouts};
pub use records::parse as parse_records;
pub use run::RunOutcome;
pub use session::{NpuSession, register_table};

/// Reads an artifact the launch needs.
fn read_artifact(what: &'static str, path: &std::path::Path) -> Result<Vec<u8>, NpuError> {
    std::fs::read(path).map_err(|source| NpuError::Artifact {
        what,
        path: path.to_path_buf(),
        source,
    })
}
