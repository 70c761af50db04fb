//! Tensor arguments: a tile of a buffer and how a task uses it, described once. The tensor map
//! finds dependencies from them, and the kernel receives them (through its payload), so what
//! a kernel touches and what the runtime orders cannot disagree.
//!
//! A [`Buffer`] is an allocation (what an allocator handed out): the tensor map's key. Every
//! tile must lie inside its buffer, checked at submit, so a tile filed under the wrong buffer
//! is a [`crate::SubmitError::BadTensor`], never a dependency silently dropped.
#![forbid(unsafe_code)]

use crate::sync::{AtomicU64, Ordering};
use crate::tensor::dtype::Dtype;
use crate::tensor::tile::{Access, MAX_RANK, Tile};

/// A buffer of device memory: `len` bytes from `base`, one allocation. Two buffers are
/// either the same allocation (same `base`) or share no byte; take them from an allocator
/// (the simulator's `alloc_buffer`, [`crate::Orchestrator::alloc_buffer`]) rather than
/// carving one allocation into several.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub struct Buffer {
    /// Its first byte's device address (the tensor map's key).
    pub base: u64,
    /// Its length in bytes.
    pub len: u64,
}

impl Buffer {
    /// The `len` bytes from `base`.
    pub const fn new(base: u64, len: u64) -> Self {
        Buffer { base, len }
    }

    /// One past its last byte (saturating at the end of the address space).
    pub const fn end(&self) -> u64 {
        self.base.saturating_add(self.len)
    }

    /// Whether bytes `[lo, hi)` lie inside it.
    pub const fn holds(&self, lo: u64, hi: u64) -> bool {
        self.base <= lo && hi <= self.end()
    }

    /// The address `offset` bytes into it.
    pub const fn at(&self, offset: u64) -> u64 {
        self.base + offset
    }
}

/// A tensor argument: a tile of a buffer, and how the task uses it. Tiles of different
/// buffers never conflict; within a buffer, conflicts follow [`crate::overlaps`]. The kernel
/// gets its task's tensor arguments in order (the simulator's `ctx.tensor(i)`), with their
/// buffer and element type.
///
/// ```
/// use pto_runtime_core::{Buffer, Dtype, TensorArg, Tile};
///
/// let x = Buffer::new(0x1000, 4096); // 1024 f32s
/// let first_half = TensorArg::input(x, Tile::contiguous(x.base, 4, 512)).typed(Dtype::F32);
/// assert!(first_half.access.reads() && !first_half.access.writes());
/// assert_eq!(first_half.dtype, Some(Dtype::F32));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct TensorArg {
    /// The buffer the tile lies in: the map's key.
    pub buffer: Buffer,
    /// The elements the task touches.
    pub tile: Tile,
    /// Read, written, or both.
    pub access: Access,
    /// The elements' type, if given (its size must be the tile's element size).
    pub dtype: Option<Dtype>,
}

impl TensorArg {
    /// The task reads `tile` of `buffer`.
    pub const fn input(buffer: Buffer, tile: Tile) -> Self {
        TensorArg {
            buffer,
            tile,
            access: Access::In,
            dtype: None,
        }
    }

    /// The task writes `tile` of `buffer`.
    pub const fn output(buffer: Buffer, tile: Tile) -> Self {
        TensorArg {
            buffer,
            tile,
            access: Access::Out,
            dtype: None,
        }
    }

    /// The task reads, then writes `tile` of `buffer`.
    pub const fn inout(buffer: Buffer, tile: Tile) -> Self {
        TensorArg {
            buffer,
            tile,
            access: Access::InOut,
            dtype: None,
        }
    }

    /// The same argument, its elements of type `dtype` (checked at submit against the
    /// tile's element size).
    pub const fn typed(self, dtype: Dtype) -> Self {
        TensorArg {
            dtype: Some(dtype),
            ..self
        }
    }

    /// The task reads all of `buffer`, as `elem`-byte elements.
    pub const fn whole_input(buffer: Buffer, elem: u32) -> Self {
        Self::input(buffer, whole(buffer, elem))
    }

    /// The task writes all of `buffer`, as `elem`-byte elements.
    pub const fn whole_output(buffer: Buffer, elem: u32) -> Self {
        Self::output(buffer, whole(buffer, elem))
    }

    /// The task reads, then writes all of `buffer`, as `elem`-byte elements.
    pub const fn whole_inout(buffer: Buffer, elem: u32) -> Self {
        Self::inout(buffer, whole(buffer, elem))
    }
}

/// `buffer` as one contiguous run of `elem`-byte elements (an empty tile, refused at submit,
/// if it holds none or more than `u32::MAX`).
const fn whole(buffer: Buffer, elem: u32) -> Tile {
    let n = if elem == 0 {
        0
    } else {
        buffer.len / elem as u64
    };
    let n = if n > u32::MAX as u64 { 0 } else { n as u32 };
    Tile::contiguous(buffer.base, elem, n)
}

/// A tensor argument as a kernel receives it: the tile, its buffer, its element type, and
/// how the task uses it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct KernelTensor {
    /// The elements the task touches.
    pub tile: Tile,
    /// The buffer the tile lies in.
    pub buffer: Buffer,
    /// Read, written, or both.
    pub access: Access,
    /// The elements' type, if the task gave it.
    pub dtype: Option<Dtype>,
}

impl KernelTensor {
    /// Where the tile starts in its buffer, in elements (rounded down when the tile does not
    /// start a whole number of elements in).
    pub const fn start_offset(&self) -> u64 {
        let bytes = self.tile.base.saturating_sub(self.buffer.base);
        match self.tile.elem {
            0 => 0,
            e => bytes / e as u64,
        }
    }
}

impl From<&TensorArg> for KernelTensor {
    fn from(a: &TensorArg) -> Self {
        KernelTensor {
            tile: a.tile,
            buffer: a.buffer,
            access: a.access,
            dtype: a.dtype,
        }
    }
}

/// Words of one [`TensorCell`]: base, meta, the buffer's base and length, three of shapes,
/// then the strides (two cache lines).
const WORDS: usize = 7 + MAX_RANK;

/// A cell's word of tile `t`'s element size and rank, with `access` and `dtype`.
#[inline(always)]
fn meta_word(t: &Tile, access: Access, dtype: Option<Dtype>) -> u64 {
    let access = match access {
        Access::In => 0u64,
        Access::Out => 1,
        Access::InOut => 2,
    };
    t.elem as u64 | (t.rank as u64) << 32 | access << 40 | (Dtype::code_of(dtype) as u64) << 48
}

/// The words of a [`TensorCell`] built from several fields of its argument, worked out once
/// for an argument stored many times (a graph's, at each replay).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct PackedWords([u64; 3]);

impl PackedWords {
    /// No argument's.
    pub(crate) const ZERO: Self = PackedWords([0; 3]);
}

/// One tensor argument in atomic words, on two cache lines: how a task's arguments travel
/// from the orchestrator to the scheduler that dispatches it, and on to a platform's core.
/// Relaxed loads and stores: the task's publication orders them, as it does the scalar
/// arguments.
#[repr(align(64))]
pub struct TensorCell {
    words: [AtomicU64; WORDS],
}

impl Default for TensorCell {
    fn default() -> Self {
        Self::new()
    }
}

impl TensorCell {
    /// A cell holding nothing in particular.
    pub fn new() -> Self {
        TensorCell {
            words: core::array::from_fn(|_| AtomicU64::new(0)),
        }
    }

    /// Stores `a`.
    #[inline]
    pub fn store(&self, a: &KernelTensor) {
        self.store_parts(a.tile.base, &a.tile, &a.buffer, a.access, a.dtype);
    }

    /// Stores `a` as its kernel will receive it.
    #[inline]
    pub fn store_arg(&self, a: &TensorArg) {
        self.store_parts(a.tile.base, &a.tile, &a.buffer, a.access, a.dtype);
    }

    /// Stores `a`, whose buffer's and tile's bases are offsets into a graph's buffer, placed
    /// in that buffer's instance: its tile from `tile_to`, its buffer from `buffer_to`;
    /// `packed` is [`TensorCell::packed`] of `a`, the words a store would compute.
    #[inline(always)]
    pub(crate) fn store_moved(
        &self,
        a: &TensorArg,
        packed: &PackedWords,
        (tile_to, buffer_to): (u64, u64),
    ) {
        let (t, w) = (&a.tile, &self.words);
        w[0].store(tile_to + t.base, Ordering::Relaxed);
        w[1].store(packed.0[0], Ordering::Relaxed);
        w[2].store(buffer_to + a.buffer.base, Ordering::Relaxed);
        w[3].store(a.buffer.len, Ordering::Relaxed);
        w[4].store(packed.0[1], Ordering::Relaxed);
        w[5].store(packed.0[2], Ordering::Relaxed);
        w[6].store(t.shape[4] as u64, Ordering::Relaxed);
        for (d, &s) in w[7..].iter().zip(&t.strides) {
            d.store(s, Ordering::Relaxed);
        }
    }

    /// The words of a cell holding `a` that are built from several of its fields (its
    /// element size, rank, access and type; its shape), for [`TensorCell::store_moved`].
    pub(crate) fn packed(a: &TensorArg) -> PackedWords {
        let t = &a.tile;
        PackedWords([
            meta_word(t, a.access, a.dtype),
            t.shape[0] as u64 | (t.shape[1] as u64) << 32,
            t.shape[2] as u64 | (t.shape[3] as u64) << 32,
        ])
    }

    /// Stores tile `t` starting at `base` (for `t.base`), of buffer `b`.
    #[inline(always)]
    fn store_parts(&self, base: u64, t: &Tile, b: &Buffer, access: Access, dtype: Option<Dtype>) {
        let w = &self.words;
        w[0].store(base, Ordering::Relaxed);
        w[1].store(meta_word(t, access, dtype), Ordering::Relaxed);
        w[2].store(b.base, Ordering::Relaxed);
        w[3].store(b.len, Ordering::Relaxed);
        w[4].store(
            t.shape[0] as u64 | (t.shape[1] as u64) << 32,
            Ordering::Relaxed,
        );
        w[5].store(
            t.shape[2] as u64 | (t.shape[3] as u64) << 32,
            Ordering::Relaxed,
        );
        w[6].store(t.shape[4] as u64, Ordering::Relaxed);
        for (d, &s) in w[7..].iter().zip(&t.strides) {
            d.store(s, Ordering::Relaxed);
        }
    }

    /// What the last [`TensorCell::store`] stored.
    #[inline]
    pub fn load(&self) -> KernelTensor {
        let w = &self.words;
        let meta = w[1].load(Ordering::Relaxed);
        let s01 = w[4].load(Ordering::Relaxed);
        let s23 = w[5].load(Ordering::Relaxed);
        KernelTensor {
            tile: Tile {
                base: w[0].load(Ordering::Relaxed),
                elem: meta as u32,
                rank: (meta >> 32) as u8,
                shape: [
                    s01 as u32,
                    (s01 >> 32) as u32,
                    s23 as u32,
                    (s23 >> 32) as u32,
                    w[6].load(Ordering::Relaxed) as u32,
                ],
                strides: core::array::from_fn(|d| w[7 + d].load(Ordering::Relaxed)),
            },
            buffer: Buffer::new(w[2].load(Ordering::Relaxed), w[3].load(Ordering::Relaxed)),
            access: match (meta >> 40) as u8 {
                1 => Access::Out,
                2 => Access::InOut,
                _ => Access::In,
            },
            dtype: Dtype::from_code((meta >> 48) as u8),
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_cell_gives_back_what_it_was_given() {
        assert_eq!(core::mem::size_of::<TensorCell>(), 128, "two cache lines");
        let b = Buffer::new(0x4000, 1 << 16);
        let mut tile = Tile::block(0x4010, 4, 3, 5, 17);
        tile.rank = 5;
        tile.shape = [3, 5, 7, u32::MAX, 11];
        tile.strides = [1, u64::MAX, 3, 0, 1 << 40];
        let cell = TensorCell::new();
        for a in [
            TensorArg::input(b, tile),
            TensorArg::output(b, Tile::contiguous(0x4000, 8, 9)).typed(Dtype::U64),
            TensorArg::inout(Buffer::new(u64::MAX - 1, u64::MAX), tile).typed(Dtype::F32),
        ] {
            let k = KernelTensor::from(&a);
            cell.store(&k);
            assert_eq!(cell.load(), k);
            assert_eq!(
                (k.tile, k.buffer, k.access, k.dtype),
                (a.tile, a.buffer, a.access, a.dtype)
            );
            cell.store_arg(&a);
            assert_eq!(cell.load(), k);
        }
        let k = KernelTensor::from(&TensorArg::input(b, tile));
        assert_eq!(k.start_offset(), 4, "16 bytes in, 4-byte elements");
    }
    #[test]
    fn buffers_hold_their_own_bytes_only() {
        let b = Buffer::new(0x100, 0x40);
        assert!(b.holds(0x100, 0x140) && b.holds(0x120, 0x121));
        assert!(!b.holds(0xff, 0x101) && !b.holds(0x13f, 0x141));
        assert_eq!(Buffer::new(u64::MAX - 1, 8).end(), u64::MAX);
        let w = TensorArg::whole_output(b, 4);
        assert_eq!(w.tile.bytes(), Ok((0x100, 0x140)));
        assert!(w.access.writes());
        assert_eq!(
            TensorArg::whole_input(b, 0).tile.bytes(),
            Err(crate::TileError::ZeroElement)
        );
    }
}
