//! A heap buffer aligned for the runtime region.

use bytemuck::{Pod, Zeroable};

use pto_runtime_core::Knob;

use crate::error::SimError;

#[derive(Clone, Copy, Pod, Zeroable)]
#[repr(C, align(64))]
struct Block([u8; 64]);

/// A zeroed, 64-byte-aligned buffer of at least the requested size.
pub struct Region {
    blocks: Box<[Block]>,
}

impl Region {
    /// A region of at least `bytes` bytes, or [`SimError::OutOfMemory`] if the host cannot
    /// give them (the OS zeroes the pages as they are first touched).
    pub fn new(bytes: usize) -> Result<Self, SimError> {
        let blocks =
            bytemuck::allocation::try_zeroed_slice_box(bytes.div_ceil(64)).map_err(|()| {
                SimError::OutOfMemory {
                    what: "runtime region",
                    bytes: bytes as u64,
                    knobs: &[
                        Knob::TaskWindow,
                        Knob::Rings,
                        Knob::ProfileCapacity,
                        Knob::DeferredCapacity,
                        Knob::MaxTensors,
                    ],
                }
            })?;
        Ok(Region { blocks })
    }

    /// The bytes, for `Runtime::init`.
    pub fn bytes(&mut self) -> &mut [u8] {
        bytemuck::cast_slice_mut(&mut self.blocks)
    }
}
