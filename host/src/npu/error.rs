//! Why a launch on the NPU failed, as a user can act on it: the host's CANN call that failed
//! (its code by name, CANN's own message, a hint) and, apart from it, what the device itself
//! reported about the run (its code, and for a failed run the kind, task and core).

use std::path::PathBuf;

use pto_device_sys::cann::CannError;

use super::abi_payload::DeviceStatus;

/// A launch-path failure.
#[derive(Debug, thiserror::Error)]
pub enum NpuError {
    /// A CANN call failed (a host code: ACL's, the runtime's or the driver's).
    #[error("{step}: {source}")]
    Cann {
        /// What the launch was doing.
        step: &'static str,
        /// The call, its code by name, CANN's message.
        #[source]
        source: CannError,
    },
    /// The run failed: the host's side and the device's, each given when known.
    #[error("{}", run_failed(host, device))]
    Run {
        /// The host's failing call, if one failed (a host code).
        host: Option<(&'static str, CannError)>,
        /// What the device reported (a device code), if it wrote a report.
        device: Option<Box<DeviceStatus>>,
    },
    /// A file the launch needs could not be read.
    #[error("{what} {}: {source}", path.display())]
    Artifact {
        /// What the file is for.
        what: &'static str,
        /// Where it was looked for.
        path: PathBuf,
        /// Why it could not be read.
        #[source]
        source: std::io::Error,
    },
    /// The launch's input is wrong (before anything reached the device).
    #[error("{0}")]
    Invalid(String),
    /// An earlier failure left the device reset: open a new session.
    #[error(
        "device {0} was reset after an earlier failure: open a new session (a new pto-launch run)"
    )]
    Unusable(i32),
}

fn run_failed(
    host: &Option<(&'static str, CannError)>,
    device: &Option<Box<DeviceStatus>>,
) -> String {
    let mut s = String::from("the run failed");
    if let Some((step, e)) = host {
        s.push_str(&format!("\n  host: {step}: {e}"));
    }
    match device {
        Some(d) => s.push_str(&format!("\n  device: {d}")),
        None => s.push_str("\n  device: no report (the AICPU did not finish its run)"),
    }
    s.push_str("\n  the device was reset; the next session starts clean");
    s
}

impl NpuError {
    /// The error of CANN call `step`.
    pub(super) fn cann(step: &'static str) -> impl FnOnce(CannError) -> NpuError {
        move |source| NpuError::Cann { step, source }
    }

    /// The host's CANN error, if the host's side failed.
    fn host_error(&self) -> Option<&CannError> {
        match self {
            NpuError::Cann { source, .. } => Some(source),
            NpuError::Run {
                host: Some((_, e)), ..
            } => Some(e),
            _ => None,
        }
    }

    /// The CANN code of the host's failing call, if there is one.
    pub fn host_code(&self) -> Option<i64> {
        match self.host_error()? {
            CannError::Call { code, .. } => Some(*code),
            _ => None,
        }
    }

    /// The name of the CANN function that failed, if one did.
    pub fn host_function(&self) -> Option<&'static str> {
        match self.host_error()? {
            CannError::Call { function, .. } => Some(function),
            _ => None,
        }
    }

    /// What the device reported, if it wrote a report.
    pub fn device_status(&self) -> Option<&DeviceStatus> {
        match self {
            NpuError::Run { device, .. } => device.as_deref(),
            _ => None,
        }
    }
}
