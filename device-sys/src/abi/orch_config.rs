//! The capacities an orchestration SO declares for its run: a constant the SO exports as
//! data ([`PTO_ORCH_CONFIG_SYMBOL`]), which the host reads from the SO's file before any
//! device code runs (it sizes the runtime's region by them, and on an NPU the SO is code the
//! host may not be able to execute). In C, `PTO_ORCHESTRATION_CONFIG(.max_deps = 32)` in
//! `aicpu/include/pto_aicpu.h` defines it; a field left 0 takes the launcher's default.
#![forbid(unsafe_code)]

use core::mem::{offset_of, size_of};

/// The layout version of [`PtoOrchConfig`] (its `abi` field).
pub const PTO_ORCH_CONFIG_ABI: u32 = 1;

/// The symbol an orchestration SO exports its [`PtoOrchConfig`] as.
pub const PTO_ORCH_CONFIG_SYMBOL: &str = "pto_orchestration_config";

/// What an orchestration SO asks its run to hold; 0 in a field means "the default".
///
/// ```
/// use pto_device_sys::abi::{PTO_ORCH_CONFIG_ABI, PtoOrchConfig};
/// let c = PtoOrchConfig { max_deps: 32, ..PtoOrchConfig::default() };
/// assert_eq!((c.abi, c.max_tensors), (PTO_ORCH_CONFIG_ABI, 0));
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PtoOrchConfig {
    /// [`PTO_ORCH_CONFIG_ABI`].
    pub abi: u32,
    /// Most dependencies per task (named, and found through tensor arguments).
    pub max_deps: u32,
    /// Most tensor arguments per task.
    pub max_tensors: u32,
    /// Most scalar arguments per task.
    pub max_args: u32,
    /// Task slots per ring (a power of two).
    pub task_window: u32,
    /// Zero.
    pub reserved: u32,
    /// Bytes of each ring's output heap.
    pub heap_bytes: u64,
}

impl Default for PtoOrchConfig {
    /// Every capacity the default, [`PTO_ORCH_CONFIG_ABI`].
    fn default() -> Self {
        PtoOrchConfig {
            abi: PTO_ORCH_CONFIG_ABI,
            max_deps: 0,
            max_tensors: 0,
            max_args: 0,
            task_window: 0,
            reserved: 0,
            heap_bytes: 0,
        }
    }
}

impl PtoOrchConfig {
    /// Reads one from the SO's bytes of the symbol: `None` unless there are exactly
    /// `size_of::<PtoOrchConfig>()` of them. `little_endian` is the SO's byte order.
    pub fn from_bytes(bytes: &[u8], little_endian: bool) -> Option<Self> {
        let bytes: &[u8; size_of::<PtoOrchConfig>()] = bytes.try_into().ok()?;
        let word = |at: usize| {
            let b = [bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]];
            if little_endian {
                u32::from_le_bytes(b)
            } else {
                u32::from_be_bytes(b)
            }
        };
        let heap = {
            let at = offset_of!(PtoOrchConfig, heap_bytes);
            let mut b = [0; 8];
            b.copy_from_slice(&bytes[at..at + 8]);
            if little_endian {
                u64::from_le_bytes(b)
            } else {
                u64::from_be_bytes(b)
            }
        };
        Some(PtoOrchConfig {
            abi: word(offset_of!(PtoOrchConfig, abi)),
            max_deps: word(offset_of!(PtoOrchConfig, max_deps)),
            max_tensors: word(offset_of!(PtoOrchConfig, max_tensors)),
            max_args: word(offset_of!(PtoOrchConfig, max_args)),
            task_window: word(offset_of!(PtoOrchConfig, task_window)),
            reserved: word(offset_of!(PtoOrchConfig, reserved)),
            heap_bytes: heap,
        })
    }
}

const _: () = {
    assert!(size_of::<PtoOrchConfig>() == 32);
    assert!(offset_of!(PtoOrchConfig, max_deps) == 4);
    assert!(offset_of!(PtoOrchConfig, max_tensors) == 8);
    assert!(offset_of!(PtoOrchConfig, max_args) == 12);
    assert!(offset_of!(PtoOrchConfig, task_window) == 16);
    assert!(offset_of!(PtoOrchConfig, reserved) == 20);
    assert!(offset_of!(PtoOrchConfig, heap_bytes) == 24);
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bytes_of_a_declaration_read_back_in_either_byte_order() {
        let mut le = [0u8; 32];
        le[0] = 1;
        le[4] = 32;
        le[16..20].copy_from_slice(&4096u32.to_le_bytes());
        le[24..32].copy_from_slice(&(1u64 << 24).to_le_bytes());
        let c = PtoOrchConfig::from_bytes(&le, true).unwrap();
        assert_eq!(
            c,
            PtoOrchConfig {
                max_deps: 32,
                task_window: 4096,
                heap_bytes: 1 << 24,
                ..PtoOrchConfig::default()
            }
        );
        let mut be = [0u8; 32];
        be[3] = 1;
        be[7] = 32;
        let c = PtoOrchConfig::from_bytes(&be, false).unwrap();
        assert_eq!((c.abi, c.max_deps), (1, 32));
        assert_eq!(PtoOrchConfig::from_bytes(&le[..31], true), None);
        assert_eq!(PtoOrchConfig::from_bytes(&[0; 40], true), None);
    }
}
