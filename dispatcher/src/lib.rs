//! pto-dispatcher: the dispatcher SO of the AICPU bootstrap. The host copies it and
//! `libpto_aicpu.so` into device memory and launches CANN's extend-kernels library
//! (`rtAicpuKernelLaunchExWithArgs`, kernel type 5), which loads this SO on the AICPU and
//! calls its `DynTileFwkBackendKernelServerInit` with the device arguments. That entry
//! writes the inner SO into CANN's kernel directory under a name carrying its ELF build-id
//! and the device ([`inner_so_name`]), through a temporary file and a rename, mode 0755; the
//! host's JSON registration then names that file.
//!
//! Principles: no panic reaches an entry point (every failure is a return code); the naming
//! rules live here once and the host uses this crate's rlib for them.
#![deny(missing_docs)]

mod entry;
mod naming;

pub use naming::{DeviceArgs, FingerprintError, INNER_STEM, fingerprint, inner_so_name};
