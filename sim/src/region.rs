//! A heap buffer aligned for the runtime region.

use bytemuck::{Pod, Zeroable};

#[derive(Clone, Copy, Pod, Zeroable)]
#[repr(C, align(64))]
struct Block([u8; 64]);

/// A zeroed, 64-byte-aligned buffer of at least the requested size.
pub struct Region {
    blocks: Vec<Block>,
}

impl Region {
    /// A region of at least `bytes` bytes.
    pub fn new(bytes: usize) -> Self {
        Region {
            blocks: vec![Block([0; 64]); bytes.div_ceil(64)],
        }
    }

    /// The bytes, for `Runtime::init`.
    pub fn bytes(&mut self) -> &mut [u8] {
        bytemuck::cast_slice_mut(&mut self.blocks)
    }
}
