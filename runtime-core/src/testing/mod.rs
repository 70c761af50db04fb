//! Test support, never compiled into the product: the runtime's tables in heap memory, the
//! scripted machine for scheduler tests, and the machine the loom models run on.
#![forbid(unsafe_code)]

#[cfg(all(test, loom))]
pub(crate) mod loom_machine;
pub(crate) mod owned;
#[cfg(all(test, not(loom)))]
pub(crate) mod rig;

/// 64 bytes at 64-byte alignment: a `Vec` of blocks is a region a test can format.
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C, align(64))]
pub(crate) struct Block(pub(crate) [u8; 64]);
