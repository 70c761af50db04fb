//! Tensor arguments: the strided tile of memory a task touches, and whether two tiles overlap.
//!
//! A tile is `shape[0] x .. x shape[rank-1]` elements of `elem` bytes; element `(k_0, ..)` sits
//! at `base + elem * sum(k_i * strides[i])`. Two tiles with the same element size and strides
//! (two views of one buffer) are compared exactly, by a small bounded search over index
//! offsets, dimension by dimension: two disjoint tiles of one matrix are independent even when
//! their byte ranges interleave. Anything else (other layouts, misaligned views, a search over
//! budget) is compared by byte range, which may see an overlap that is not there but never
//! misses one.
#![forbid(unsafe_code)]

use core::fmt;

/// Most dimensions a tile has.
pub const MAX_RANK: usize = 5;

/// How a task uses a tensor argument.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Access {
    /// Read only.
    In,
    /// Written only (its previous content is not read).
    Out,
    /// Read, then written.
    InOut,
}

impl Access {
    /// The task reads the tile.
    pub fn reads(self) -> bool {
        matches!(self, Access::In | Access::InOut)
    }

    /// The task writes the tile.
    pub fn writes(self) -> bool {
        matches!(self, Access::Out | Access::InOut)
    }
}

/// A strided tile of device memory.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Tile {
    /// Device address of element `(0, .., 0)`.
    pub base: u64,
    /// Bytes per element (at least 1).
    pub elem: u32,
    /// Dimensions in use (1..=[`MAX_RANK`]).
    pub rank: u8,
    /// Elements along each dimension (each at least 1), outermost first.
    pub shape: [u32; MAX_RANK],
    /// Distance in elements between neighbours along each dimension.
    pub strides: [u64; MAX_RANK],
}

/// A valid tile's byte range, and whether it touches every byte of it.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub(crate) struct Footprint {
    pub(crate) lo: u64,
    pub(crate) hi: u64,
    pub(crate) dense: bool,
}

/// Why a [`Tile`] is not valid.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum TileError {
    /// `rank` is 0 or above [`MAX_RANK`].
    Rank {
        /// The rank given.
        rank: u8,
    },
    /// An element size of 0 bytes.
    ZeroElement,
    /// A dimension of 0 elements.
    EmptyDimension {
        /// The dimension.
        dim: u8,
    },
    /// The tile's last byte lies past the end of the address space.
    TooLarge,
    /// The tensor's dtype is not as wide as the tile's elements.
    DtypeSize {
        /// The dtype given.
        dtype: crate::Dtype,
        /// The tile's element size in bytes.
        elem: u32,
    },
    /// The tile's bytes `[first, end)` are not all inside its buffer `[base, base + len)`:
    /// the tile names the wrong buffer, or the buffer is too short.
    OutsideBuffer {
        /// The tile's first byte.
        first: u64,
        /// One past its last byte.
        end: u64,
        /// The buffer's first byte.
        base: u64,
        /// The buffer's length in bytes.
        len: u64,
    },
}

impl fmt::Display for TileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Rank { rank } => {
                write!(f, "a tile of rank {rank}: use 1 to {MAX_RANK} dimensions")
            }
            Self::ZeroElement => write!(f, "a tile with 0-byte elements: give the element size"),
            Self::EmptyDimension { dim } => write!(
                f,
                "dimension {dim} of a tile has 0 elements: a task touches at least one element"
            ),
            Self::TooLarge => write!(f, "a tile runs past the end of the address space"),
            Self::DtypeSize { dtype, elem } => write!(
                f,
                "a tensor of {dtype} ({} bytes each) with {elem}-byte elements: give the tile \
                 its dtype's element size",
                dtype.size()
            ),
            Self::OutsideBuffer {
                first,
                end,
                base,
                len,
            } => write!(
                f,
                "the tile's bytes {first:#x}..{end:#x} are not inside its buffer \
                 {base:#x}..{:#x} ({len} bytes): give the buffer the tile lies in",
                base.saturating_add(len)
            ),
        }
    }
}

impl core::error::Error for TileError {}

impl Tile {
    /// A contiguous run of `len` elements of `elem` bytes at `base`.
    pub const fn contiguous(base: u64, elem: u32, len: u32) -> Self {
        Tile {
            base,
            elem,
            rank: 1,
            shape: [len, 1, 1, 1, 1],
            strides: [1, 0, 0, 0, 0],
        }
    }

    /// A `rows x cols` block of a row-major matrix whose rows are `row_stride` elements apart.
    pub const fn block(base: u64, elem: u32, rows: u32, cols: u32, row_stride: u64) -> Self {
        Tile {
            base,
            elem,
            rank: 2,
            shape: [rows, cols, 1, 1, 1],
            strides: [row_stride, 1, 0, 0, 0],
        }
    }

    /// Checks the tile and returns its byte range `[first, end)`.
    pub fn bytes(&self) -> Result<(u64, u64), TileError> {
        self.footprint().map(|f| (f.lo, f.hi))
    }

    /// Checks the tile and returns its byte range and whether it is dense, in one pass.
    #[inline]
    pub(crate) fn footprint(&self) -> Result<Footprint, TileError> {
        self.valid_footprint()
            .map_or_else(|| self.footprint_error(), Ok)
    }

    /// The footprint of a valid tile, or `None` for an invalid one ([`Tile::footprint_error`]
    /// says why): the common ranks first.
    #[inline(always)]
    pub(crate) fn valid_footprint(&self) -> Option<Footprint> {
        match self.rank {
            2 => self.unrolled::<2>(),
            1 => self.unrolled::<1>(),
            3 => self.unrolled::<3>(),
            4 => self.unrolled::<4>(),
            5 => self.unrolled::<5>(),
            _ => None,
        }
    }

    /// The footprint of a valid tile of rank `R`, or `None` for an invalid one.
    #[inline(always)]
    fn unrolled<const R: usize>(&self) -> Option<Footprint> {
        let (last, dense, empty) = self.span::<R>();
        if empty || self.elem == 0 || last > u64::MAX as u128 {
            return None;
        }
        // Below 2^97: no wrap.
        let hi = (last + 1) * self.elem as u128 + self.base as u128;
        (hi <= u64::MAX as u128).then_some(Footprint {
            lo: self.base,
            hi: hi as u64,
            dense,
        })
    }

    /// The footprint of a tile, and whether the tile is valid and lies inside bytes
    /// `[lo, end)` (if not, the footprint means nothing): the tests of
    /// [`Tile::valid_footprint`] and of the bounds in one, as `end` is within the address
    /// space. The common ranks inline.
    #[inline(always)]
    pub(crate) fn footprint_inside(&self, lo: u64, end: u64) -> (Footprint, bool) {
        if self.rank == 2 {
            self.unrolled_inside::<2>(lo, end)
        } else if self.rank == 1 {
            self.unrolled_inside::<1>(lo, end)
        } else {
            self.footprint_inside_other(lo, end)
        }
    }

    /// [`Tile::footprint_inside`] for ranks other than 1 and 2 (out of line).
    #[inline(never)]
    fn footprint_inside_other(&self, lo: u64, end: u64) -> (Footprint, bool) {
        match self.rank {
            3 => self.unrolled_inside::<3>(lo, end),
            4 => self.unrolled_inside::<4>(lo, end),
            5 => self.unrolled_inside::<5>(lo, end),
            _ => (Footprint::default(), false),
        }
    }

    /// [`Tile::footprint_inside`] of a tile of rank `R`.
    #[inline(always)]
    fn unrolled_inside<const R: usize>(&self, lo: u64, end: u64) -> (Footprint, bool) {
        let (last, dense, empty) = self.span::<R>();
        // Below 2^97 (`last` taken below 2^64; a larger one is refused): no wrap.
        let hi = (last as u64 as u128 + 1) * self.elem as u128 + self.base as u128;
        let fits = (last >> 64 == 0) & (hi <= end as u128) & (lo <= self.base);
        let f = Footprint {
            lo: self.base,
            hi: hi as u64,
            dense,
        };
        (f, fits & !empty & (self.elem != 0))
    }

    /// The element offset of the last element of a tile of rank `R`, whether it is dense,
    /// and whether a dimension is empty: the dimensions unrolled, in 128 bits, nothing
    /// tested on the way.
    #[inline(always)]
    fn span<const R: usize>(&self) -> (u128, bool, bool) {
        let mut last = 0u128; // element offset of the last element
        let mut next = 1u64; // the stride a dense tile has at this dimension
        let mut dense = true;
        let mut empty = false;
        for d in (0..R).rev() {
            let (n, stride) = (self.shape[d] as u64, self.strides[d]);
            empty |= n == 0;
            // Each term is below 2^96 when `n > 0` (5 of them cannot wrap); an empty
            // dimension's is refused by the caller.
            last = last.wrapping_add(n.wrapping_sub(1) as u128 * stride as u128);
            if n != 1 {
                dense &= stride == next;
                next = next.saturating_mul(n);
            }
        }
        (last, dense, empty)
    }

    /// The footprint computed step by step, each problem a typed error (the first found):
    /// what says why a tile is not valid, out of line, as submit only comes here for that.
    #[cold]
    #[inline(never)]
    pub(crate) fn footprint_error(&self) -> Result<Footprint, TileError> {
        if self.rank == 0 || self.rank as usize > MAX_RANK {
            return Err(TileError::Rank { rank: self.rank });
        }
        if self.elem == 0 {
            return Err(TileError::ZeroElement);
        }
        let mut last = 0u64; // element offset of the last element
        let mut next = 1u64; // the stride a dense tile has at this dimension
        let mut dense = true;
        for d in (0..self.rank as usize).rev() {
            let (n, stride) = (self.shape[d], self.strides[d]);
            if n == 0 {
                return Err(TileError::EmptyDimension { dim: d as u8 });
            }
            let span = (n as u64 - 1)
                .checked_mul(stride)
                .ok_or(TileError::TooLarge)?;
            last = last.checked_add(span).ok_or(TileError::TooLarge)?;
            if n != 1 {
                dense &= stride == next;
                next = next.saturating_mul(n as u64);
            }
        }
        let hi = last
            .checked_add(1)
            .and_then(|n| n.checked_mul(self.elem as u64))
            .and_then(|b| b.checked_add(self.base))
            .ok_or(TileError::TooLarge)?;
        Ok(Footprint {
            lo: self.base,
            hi,
            dense,
        })
    }

    /// Whether the tile touches every byte of its range: its elements are row-major and
    /// contiguous (dimensions of one element aside). A valid tile is assumed.
    pub fn is_dense(&self) -> bool {
        self.footprint().is_ok_and(|f| f.dense)
    }

    fn dims(&self) -> usize {
        (self.rank as usize).min(MAX_RANK)
    }
}

/// Whether tiles `a` and `b` (both valid, see [`Tile::bytes`]) may share a byte. `false` is
/// exact: they share none. `true` is exact for two views of one layout (same element size and
/// strides, bases a whole number of elements apart), and otherwise means their byte ranges
/// intersect.
pub fn overlaps(a: &Tile, b: &Tile) -> bool {
    let (Ok((a0, a1)), Ok((b0, b1))) = (a.bytes(), b.bytes()) else {
        return true; // invalid tiles never reach here; if they do, be safe
    };
    if a1 <= b0 || b1 <= a0 {
        return false;
    }
    // Without an exact answer, intersecting byte ranges count as an overlap.
    same_view_overlap(a, b).unwrap_or(true)
}

/// Whether valid tiles `a` and `b` of one buffer share a byte, by the tensor map's rule: a
/// dense tile is its byte range, so against one the test is exact ([`touches`]); two tiles
/// with holes are compared by [`overlaps`].
pub(crate) fn share_a_byte(a: &Tile, b: &Tile) -> bool {
    let (Some(fa), Some(fb)) = (a.valid_footprint(), b.valid_footprint()) else {
        return true; // invalid tiles never reach here; if they do, be safe
    };
    match (fa.dense, fb.dense) {
        (true, true) => fa.lo < fb.hi && fb.lo < fa.hi,
        (true, false) => touches(b, fa.lo, fa.hi),
        (false, true) => touches(a, fb.lo, fb.hi),
        (false, false) => overlaps(a, b),
    }
}

/// Whether a write of valid tile `a` stands in for one of `b` (the tensor map's rule): the
/// same tile, or dense tiles of one byte range.
pub(crate) fn same_bytes(a: &Tile, b: &Tile) -> bool {
    a == b
        || matches!(
            (a.valid_footprint(), b.valid_footprint()),
            (Some(fa), Some(fb)) if fa.dense && fb.dense && (fa.lo, fa.hi) == (fb.lo, fb.hi)
        )
}

/// Whether tile `t` (valid, see [`Tile::bytes`]) touches a byte of `[lo, hi)`. `false` is
/// exact; `true` is exact unless the search runs over budget, when it means the ranges
/// intersect.
pub fn touches(t: &Tile, lo: u64, hi: u64) -> bool {
    let Ok((t0, t1)) = t.bytes() else {
        return true; // invalid tiles never reach here; if they do, be safe
    };
    if t1 <= lo || hi <= t0 || lo >= hi {
        return false;
    }
    // Element k sits at byte base + elem * off(k) and covers elem bytes: it touches
    // [lo, hi) iff lo - elem < base + elem * off(k) < hi.
    let (elem, base) = (t.elem as i128, t.base as i128);
    let first = ceil_div(lo as i128 - base - elem + 1, elem);
    let last = floor_div(hi as i128 - 1 - base, elem);
    let mut dims = [Dim::default(); MAX_RANK];
    let mut n = 0;
    for d in 0..t.dims() {
        if t.strides[d] != 0 {
            dims[n] = Dim {
                stride: t.strides[d] as i128,
                lo: 0,
                hi: t.shape[d] as i128 - 1,
            };
            n += 1;
        }
    }
    let dims = &mut dims[..n];
    dims.sort_unstable_by_key(|x| core::cmp::Reverse(x.stride));
    let mut budget = SEARCH_BUDGET;
    solve(dims, (first, last), &mut budget).unwrap_or(true)
}

/// Index combinations the exact test may try before it settles for the byte-range answer.
const SEARCH_BUDGET: u32 = 256;

/// The exact answer for two views with the same element size, rank and strides whose bases
/// are a whole number of elements apart; `None` when that does not apply or the search ran
/// out of budget.
fn same_view_overlap(a: &Tile, b: &Tile) -> Option<bool> {
    if a.elem != b.elem || a.dims() != b.dims() || a.strides != b.strides {
        return None;
    }
    let elem = a.elem as i128;
    let diff = b.base as i128 - a.base as i128;
    let (whole, part) = floor_div_rem(diff, elem);
    if part != 0 {
        return None;
    }
    // Element a(k) is element b(m) iff sum((k_i - m_i) * s_i) = diff / elem. Search the index
    // offsets e = k - m, -(shape_b_i - 1) <= e_i <= shape_a_i - 1, from the largest stride
    // down, pruning with what the smaller strides can still add. A stride of 0 constrains
    // nothing and is left out.
    let mut dims = [Dim::default(); MAX_RANK];
    let mut n = 0;
    for d in 0..a.dims() {
        if a.strides[d] != 0 {
            dims[n] = Dim {
                stride: a.strides[d] as i128,
                lo: -(b.shape[d] as i128 - 1),
                hi: a.shape[d] as i128 - 1,
            };
            n += 1;
        }
    }
    let dims = &mut dims[..n];
    dims.sort_unstable_by_key(|x| core::cmp::Reverse(x.stride));
    let mut budget = SEARCH_BUDGET;
    solve(dims, (whole, whole), &mut budget)
}

/// `a / d` rounded down, and the remainder (in `0..d`), for `d > 0`: in 64 bits when both
/// fit (the common case, exact and without a 128-bit division), else in 128.
#[inline]
pub(super) fn floor_div_rem(a: i128, d: i128) -> (i128, i128) {
    debug_assert!(d > 0);
    match (i64::try_from(a), i64::try_from(d)) {
        // `d > 0`: the 64-bit division cannot overflow.
        (Ok(a), Ok(d)) => (a.div_euclid(d) as i128, a.rem_euclid(d) as i128),
        _ => (a.div_euclid(d), a.rem_euclid(d)),
    }
}

/// `a / d` rounded down, for `d > 0`.
#[inline]
fn floor_div(a: i128, d: i128) -> i128 {
    floor_div_rem(a, d).0
}

/// `a / d` rounded up, for `d > 0`.
#[inline]
pub(super) fn ceil_div(a: i128, d: i128) -> i128 {
    let (q, r) = floor_div_rem(a, d);
    q + i128::from(r != 0)
}

#[derive(Clone, Copy, Default)]
struct Dim {
    stride: i128,
    lo: i128,
    hi: i128,
}

/// Whether `sum(e_i * stride_i)` can lie in `[t0, t1]` with every `e_i` in `[lo_i, hi_i]`
/// (strides positive, largest first); `None` if the budget ran out first.
fn solve(dims: &[Dim], (t0, t1): (i128, i128), budget: &mut u32) -> Option<bool> {
    let Some((d, below)) = dims.split_first() else {
        return Some(t0 <= 0 && 0 <= t1);
    };
    let below_lo: i128 = below.iter().map(|x| x.lo * x.stride).sum();
    let below_hi: i128 = below.iter().map(|x| x.hi * x.stride).sum();
    // e with [t0, t1] - e * stride meeting [below_lo, below_hi], within [lo, hi].
    let first = ceil_div(t0 - below_hi, d.stride);
    let last = floor_div(t1 - below_lo, d.stride);
    let (first, last) = (first.max(d.lo), last.min(d.hi));
    let mut e = first;
    while e <= last {
        if *budget == 0 {
            return None;
        }
        *budget -= 1;
        if solve(below, (t0 - e * d.stride, t1 - e * d.stride), budget)? {
            return Some(true);
        }
        e += 1;
    }
    Some(false)
}
