//! The sizes of CANN's launch structs for the CANN version the bindings target (8.x / 9.x,
//! A2/A3), pinned: bindgen's layout tests keep the Rust types equal to our header, these keep
//! our header equal to CANN's. Older CANN releases differ (u16 offsets, no `timeout`, a
//! 4-byte `rtTaskCfgInfo_t`); every struct is zero-filled before use.

use core::mem::{offset_of, size_of};

use super::generated::types::*;

const _: () = {
    assert!(size_of::<rtAicpuArgsEx_t>() == 48);
    assert!(offset_of!(rtAicpuArgsEx_t, argsSize) == 24);
    assert!(offset_of!(rtAicpuArgsEx_t, soNameAddrOffset) == 32);
    assert!(offset_of!(rtAicpuArgsEx_t, kernelNameAddrOffset) == 36);
    assert!(offset_of!(rtAicpuArgsEx_t, timeout) == 42);
    assert!(size_of::<rtCpuKernelArgs_t>() == 72);
    assert!(size_of::<rtArgsEx_t>() == 40);
    assert!(size_of::<rtTaskCfgInfo_t>() == 16);
    assert!(size_of::<rtDevBinary_t>() == 24);
    assert!(size_of::<rtLaunchKernelAttr_t>() == 20);
    assert!(size_of::<rtKernelLaunchCfg_t>() == 16);
    assert!(size_of::<rtLoadBinaryOption_t>() == 20);
    assert!(size_of::<AddrMapInPara>() == 8);
    assert!(size_of::<AddrMapOutPara>() == 16);
};
