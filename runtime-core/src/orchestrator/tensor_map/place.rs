//! Where the tensor map files a tile: the smallest aligned power-of-two block of addresses
//! that holds the tile's byte range (its *class* is the block's size, log 2, and its *cell*
//! the block's number).
//!
//! Two such blocks either nest or are disjoint, so an entry overlapping a range `[lo, hi)`
//! sits, for its class `c`, in one of the cells `lo >> c ..= (hi - 1) >> c`: one cell for
//! every class at least as large as the range's own, a few for the classes just below.
#![forbid(unsafe_code)]

/// The smallest class: 2-byte blocks (a one-byte tile sits in class 1 all the same).
pub(crate) const MIN_CLASS: u8 = 1;
/// The largest class: the whole address space, one cell.
pub(crate) const MAX_CLASS: u8 = 64;

// A buffer's classes in use fit one 64-bit mask.
const _: () = assert!(MAX_CLASS - MIN_CLASS < 64);

/// A class and a cell.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Place {
    /// Log 2 of the block's size, `MIN_CLASS..=MAX_CLASS`.
    pub(crate) class: u8,
    /// The block's number: its first address `>> class`.
    pub(crate) cell: u64,
}

/// The block that holds bytes `[lo, hi)` (`lo < hi`).
#[inline]
pub(crate) fn place(lo: u64, hi: u64) -> Place {
    // The highest bit in which the first and last byte differ, below the class: `| 1` puts a
    // tile of one or two bytes in class 1 (`MIN_CLASS`) and keeps the log defined.
    let below = 63 - ((lo ^ (hi - 1)) | 1).leading_zeros();
    // `class >= 1`: two shifts below 64, no test for a shift by 64.
    Place {
        class: below as u8 + MIN_CLASS,
        cell: (lo >> 1) >> below,
    }
}

/// The cells of `class` that bytes `[lo, hi)` (`lo < hi`) touch, first and last.
#[inline]
pub(crate) fn cells(lo: u64, hi: u64, class: u8) -> (u64, u64) {
    (shr(lo, class), shr(hi - 1, class))
}

/// The bit of `class` in a buffer's mask of classes in use.
#[inline]
pub(crate) fn class_bit(class: u8) -> u64 {
    1 << (class - MIN_CLASS)
}

/// The lowest class in `mask` (not empty).
#[inline]
pub(crate) fn lowest_class(mask: u64) -> u8 {
    mask.trailing_zeros() as u8 + MIN_CLASS
}

#[inline]
fn shr(x: u64, class: u8) -> u64 {
    x.checked_shr(class as u32).unwrap_or(0)
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_tile_goes_to_the_smallest_aligned_block_that_holds_it() {
        // Aligned to its size: its own size.
        assert_eq!(
            place(0x1000, 0x1100),
            Place {
                class: 8,
                cell: 0x10
            }
        );
        // Straddling a 256-byte boundary: the 512-byte block around it.
        assert_eq!(
            place(0x1080, 0x1180),
            Place {
                class: 9,
                cell: 0x8
            }
        );
        // Straddling a 4 KiB boundary: far larger than the tile.
        assert_eq!(place(0xf80, 0x1080), Place { class: 13, cell: 0 });
        // One byte: the smallest class.
        assert_eq!(place(7, 8), Place { class: 1, cell: 3 });
        // Straddling the top bit of the address space: the single largest cell.
        let top = 1u64 << 63;
        assert_eq!(place(top - 1, top + 1), Place { class: 64, cell: 0 });
        assert_eq!(place(0, u64::MAX), Place { class: 64, cell: 0 });
    }

    #[test]
    fn every_block_overlapping_a_range_is_among_its_cells() {
        // Exhaustive over small addresses: a block of class c overlaps [lo, hi) exactly
        // when its cell is within `cells(lo, hi, c)`.
        let n = if cfg!(miri) { 16 } else { 64u64 };
        for lo in 0..n {
            for hi in lo + 1..=n {
                for class in MIN_CLASS..=7 {
                    let (first, last) = cells(lo, hi, class);
                    for cell in 0..n {
                        let (b0, b1) = (cell << class, (cell + 1) << class);
                        let overlap = b0 < hi && lo < b1;
                        assert_eq!(
                            overlap,
                            (first..=last).contains(&cell),
                            "{lo}..{hi} c{class}"
                        );
                    }
                }
            }
        }
        assert_eq!(cells(5, 6, MAX_CLASS), (0, 0));
    }

    #[test]
    fn masks_name_their_classes() {
        let mask = class_bit(MAX_CLASS) | class_bit(9) | class_bit(MIN_CLASS);
        assert_eq!(mask.count_ones(), 3);
        assert_eq!(lowest_class(mask), MIN_CLASS);
        assert_eq!(lowest_class(mask & (mask - 1)), 9);
        assert_eq!(lowest_class(class_bit(MAX_CLASS)), MAX_CLASS);
    }
}
