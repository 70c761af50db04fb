//! The device arguments' layout and the inner SO's file name, shared by the dispatcher and
//! the host.
#![forbid(unsafe_code)]

use object::{Object, ObjectSection};

/// The device arguments block (160 bytes of device memory) CANN's extend-kernels library
/// hands the dispatcher's init entry: where the host put the two SOs, and the device.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct DeviceArgs {
    /// Unused by the dispatcher (zero).
    pub reserved: [u64; 12],
    /// The dispatcher SO's device address.
    pub dispatcher: u64,
    /// Its length in bytes.
    pub dispatcher_len: u64,
    /// The device id.
    pub device: u64,
    /// The inner SO's (`libpto_aicpu.so`) device address.
    pub inner: u64,
    /// Its length in bytes.
    pub inner_len: u64,
    /// Zero.
    pub tail: [u64; 3],
}

const _: () = {
    assert!(core::mem::size_of::<DeviceArgs>() == 160);
    assert!(core::mem::offset_of!(DeviceArgs, dispatcher) == 96);
    assert!(core::mem::offset_of!(DeviceArgs, inner) == 120);
    assert!(core::mem::offset_of!(DeviceArgs, inner_len) == 128);
};

/// The inner SO's file name stem.
pub const INNER_STEM: &str = "libpto_aicpu";

/// Why an SO has no fingerprint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FingerprintError {
    /// The bytes are not an ELF file.
    NotElf,
    /// The ELF file has no build-id note (link with `--build-id`).
    NoBuildId,
}

impl core::fmt::Display for FingerprintError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            FingerprintError::NotElf => f.write_str("the AICPU SO is not an ELF file"),
            FingerprintError::NoBuildId => {
                f.write_str("the AICPU SO has no build-id (link it with -Wl,--build-id)")
            }
        }
    }
}

impl std::error::Error for FingerprintError {}

/// The SO's fingerprint: the first 8 bytes of its ELF build-id, big-endian.
pub fn fingerprint(so: &[u8]) -> Result<u64, FingerprintError> {
    let file = object::File::parse(so).map_err(|_| FingerprintError::NotElf)?;
    let id = match file.build_id() {
        Ok(Some(id)) if !id.is_empty() => id,
        _ => {
            // Some toolchains leave the note in a section the parser above does not scan.
            let note = file
                .section_by_name(".note.gnu.build-id")
                .and_then(|s| s.data().ok())
                .filter(|d| d.len() > 16)
                .ok_or(FingerprintError::NoBuildId)?;
            &note[16..]
        }
    };
    let mut b = [0u8; 8];
    let n = id.len().min(8);
    b[..n].copy_from_slice(&id[..n]);
    Ok(u64::from_be_bytes(b))
}

/// The inner SO's file name in CANN's kernel directory: the stem, the fingerprint and the
/// device, so that two dies sharing the directory never race on one file.
///
/// ```
/// assert_eq!(pto_dispatcher::inner_so_name(0xab, 1), "libpto_aicpu_00000000000000ab_1.so");
/// ```
pub fn inner_so_name(fingerprint: u64, device: u32) -> String {
    format!("{INNER_STEM}_{fingerprint:016x}_{device}.so")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_without_elf_or_build_id_has_no_fingerprint() {
        assert_eq!(fingerprint(b"not an elf"), Err(FingerprintError::NotElf));
        assert!(
            FingerprintError::NoBuildId
                .to_string()
                .contains("--build-id")
        );
    }

    #[test]
    fn an_elf_with_a_build_id_is_fingerprinted_by_its_first_eight_bytes() {
        // This test binary: linked with a build-id by the toolchain's default.
        let me = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        let file = object::File::parse(&*me).unwrap();
        match file.build_id() {
            Ok(Some(id)) if id.len() >= 8 => {
                let want = u64::from_be_bytes(id[..8].try_into().unwrap());
                assert_eq!(fingerprint(&me), Ok(want));
            }
            _ => assert_eq!(fingerprint(&me), Err(FingerprintError::NoBuildId)),
        }
    }
}
