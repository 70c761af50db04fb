//! The user's orchestration SO loaded from its bytes, as `libpto_aicpu.so` loads it on the
//! chip, but from an anonymous in-memory file (`memfd_create`): nothing is written to disk,
//! so nothing is left behind whatever ends the process.
//!
//! The loader knows the SO by its path, `/proc/self/fd/N`, and hands back an SO already
//! loaded under the same path instead of opening the file again. So the file stays open
//! while its SO is loaded: no other SO of this process can then be loaded from fd N.
#![allow(unsafe_code)]

use std::io::Write;

use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW};
use pto_device_sys::abi::PtoOrchestrate;
use rustix::fs::{MemfdFlags, memfd_create};

/// The symbol an orchestration SO exports.
pub const ENTRY: &str = "pto_orchestrate";

/// A loaded orchestration SO and its entry.
pub struct OrchSo {
    /// Kept loaded while the entry may run (dropped first: unloaded before the file closes).
    _lib: Library,
    /// The in-memory file, open while the SO is loaded (its fd number names it).
    _file: std::fs::File,
    /// `pto_orchestrate`.
    pub entry: PtoOrchestrate,
}

impl OrchSo {
    /// Loads the SO whose bytes are `so` and finds its entry; what went wrong, in words.
    pub fn load(so: &[u8]) -> Result<Self, String> {
        let fd = memfd_create("pto-orchestration", MemfdFlags::CLOEXEC)
            .map_err(|e| format!("cannot make an in-memory file for the orchestration SO: {e}"))?;
        let mut file = std::fs::File::from(fd);
        file.write_all(so)
            .map_err(|e| format!("cannot write the orchestration SO: {e}"))?;
        use std::os::fd::AsRawFd;
        let path = format!("/proc/self/fd/{}", file.as_raw_fd());
        // SAFETY: loading runs the SO's initialisers; the SO is the user's orchestration,
        // which the run is asked to execute anyway.
        let lib = unsafe { Library::open(Some(&path), RTLD_NOW | RTLD_LOCAL) }
            .map_err(|e| format!("cannot load the orchestration SO: {e}"))?;
        // SAFETY: the device ABI fixes the entry's type (`PtoOrchestrate`).
        let entry = unsafe { lib.get::<PtoOrchestrate>(format!("{ENTRY}\0").as_bytes()) }
            .map(|s| *s)
            .map_err(|e| format!("the orchestration SO does not export {ENTRY}: {e}"))?;
        Ok(OrchSo {
            _lib: lib,
            _file: file,
            entry,
        })
    }
}
