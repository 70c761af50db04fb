//! Tiles: footprints, overlap tests (dense and general), refusals.

use super::tile::*;

const F32: u32 = 4;

#[test]
fn disjoint_blocks_of_one_matrix_are_independent_though_their_ranges_interleave() {
    // A 4x8 matrix of f32, row stride 8: the left and right 4x4 halves.
    let left = Tile::block(0x1000, F32, 4, 4, 8);
    let right = Tile::block(0x1000 + 4 * 4, F32, 4, 4, 8);
    assert!(
        left.bytes().unwrap().1 > right.bytes().unwrap().0,
        "ranges interleave"
    );
    assert!(!overlaps(&left, &right));
    assert!(!overlaps(&right, &left));
    // A column shared by both halves' neighbour overlaps each of them.
    let middle = Tile::block(0x1000 + 2 * 4, F32, 4, 4, 8);
    assert!(overlaps(&left, &middle) && overlaps(&middle, &right));
    // The bottom-right element only touches the right half.
    let corner = Tile::block(0x1000 + (3 * 8 + 7) * 4, F32, 1, 1, 8);
    assert!(overlaps(&corner, &right) && !overlaps(&corner, &left));
}

#[test]
fn tiles_above_the_signed_64_bit_range_are_compared_exactly_too() {
    // The same halves of a 4x8 f32 matrix, at an address past 2^63: the division falls
    // back to 128 bits and gives the same answers.
    let base = 0xffff_0000_0000_1000;
    let left = Tile::block(base, F32, 4, 4, 8);
    let right = Tile::block(base + 4 * 4, F32, 4, 4, 8);
    let middle = Tile::block(base + 2 * 4, F32, 4, 4, 8);
    assert!(!overlaps(&left, &right) && !overlaps(&right, &left));
    assert!(overlaps(&left, &middle) && overlaps(&middle, &right));
    // A dense run between the halves' rows touches only what it covers.
    let (lo, hi) = (base + 4 * 4, base + 8 * 4); // row 0's right half
    assert!(touches(&right, lo, hi) && !touches(&left, lo, hi));
    assert!(!touches(&left, base + 4 * 4 + 1, base + 4 * 4 + 3));
    assert!(floor_div_rem(-7, 2) == (-4, 1) && ceil_div(-7, 2) == -3);
    assert_eq!(
        floor_div_rem(i128::from(u64::MAX), 2),
        (i128::from(u64::MAX / 2), 1)
    );
}

#[test]
fn different_layouts_fall_back_to_byte_ranges() {
    let rows = Tile::block(0, F32, 2, 4, 8);
    let flat = Tile::contiguous(4 * 4, F32, 4); // bytes 16..32: the gap between the rows
    assert!(overlaps(&rows, &flat), "conservative: ranges intersect");
    let far = Tile::contiguous(4 * 16, F32, 4);
    assert!(!overlaps(&rows, &far));
    // Misaligned views of one layout: byte ranges decide.
    let a = Tile::contiguous(0, F32, 4);
    let b = Tile::contiguous(2, F32, 4);
    assert!(overlaps(&a, &b));
}

#[test]
fn the_unrolled_footprints_agree_with_the_step_by_step_one() {
    let shapes = [0u32, 1, 2, 3, 8, 1 << 20, u32::MAX];
    let strides = [0u64, 1, 2, 3, 8, 9, 1 << 40, u64::MAX / 2, u64::MAX];
    let bases = [0u64, 0x1000, 1 << 62, u64::MAX - 64, u64::MAX];
    let elems = [0u32, 1, 4, 1 << 20, u32::MAX];
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut pick = |n: usize| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % n as u64) as usize
    };
    let (mut valid, mut dense) = (0, 0);
    let rounds = if cfg!(miri) { 500 } else { 200_000 };
    for _ in 0..rounds {
        let t = Tile {
            base: bases[pick(bases.len())],
            elem: elems[pick(elems.len())],
            rank: pick(6) as u8,
            shape: core::array::from_fn(|_| shapes[pick(shapes.len())]),
            strides: core::array::from_fn(|_| strides[pick(strides.len())]),
        };
        let fast = t.valid_footprint();
        let slow = t.footprint_error();
        match fast {
            Some(f) => assert_eq!(slow, Ok(f), "{t:?}"),
            None => assert!(slow.is_err(), "{t:?}: {slow:?}"),
        }
        assert_eq!(t.footprint(), slow);
        // Inside a buffer: valid and within its bounds, tested at once.
        let hi = fast.map_or(t.base, |f| f.hi);
        let lo = [0, t.base, t.base.wrapping_add(1), t.base.saturating_sub(4)][pick(4)];
        let end = [u64::MAX, hi, hi.wrapping_sub(1), hi.saturating_add(8), lo][pick(5)];
        let (inside, ok) = t.footprint_inside(lo, end);
        let expected = fast.filter(|f| lo <= f.lo && f.hi <= end);
        assert_eq!(ok.then_some(inside), expected, "{t:?} in {lo:#x}..{end:#x}");
        valid += usize::from(fast.is_some());
        dense += usize::from(fast.is_some_and(|f| f.dense));
    }
    assert!(
        cfg!(miri) || (valid > 1_000 && dense > 100),
        "{valid} valid, {dense} dense"
    );
}

#[test]
fn bad_tiles_are_typed_errors() {
    let mut t = Tile::contiguous(0, F32, 4);
    t.rank = 0;
    assert_eq!(t.bytes(), Err(TileError::Rank { rank: 0 }));
    t.rank = 6;
    assert_eq!(t.bytes(), Err(TileError::Rank { rank: 6 }));
    let t = Tile::contiguous(0, 0, 4);
    assert_eq!(t.bytes(), Err(TileError::ZeroElement));
    let t = Tile::block(0, F32, 0, 4, 4);
    assert_eq!(t.bytes(), Err(TileError::EmptyDimension { dim: 0 }));
    let t = Tile::contiguous(u64::MAX - 8, F32, 4);
    assert_eq!(t.bytes(), Err(TileError::TooLarge));
    assert!(std::format!("{}", TileError::Rank { rank: 9 }).contains("1 to 5"));
}

#[test]
fn a_five_dimensional_tile_spans_and_overlaps_by_all_its_dimensions() {
    // A 2x2x2x2x3 box of a 4x4x4x4x8 f32 array, from index (1, 0, 2, 1, 4).
    let strides = [512, 128, 32, 8, 1];
    let box_at = |at: [u64; 5]| Tile {
        base: 0x1000 + 4 * at.iter().zip(strides).map(|(i, s)| i * s).sum::<u64>(),
        elem: F32,
        rank: 5,
        shape: [2, 2, 2, 2, 3],
        strides,
    };
    let t = box_at([1, 0, 2, 1, 4]);
    let last = 0x1000 + 4 * (512 * 2 + 128 + 32 * 3 + 8 * 2 + 6);
    assert_eq!(t.bytes(), Ok((t.base, last + 4)));
    assert!(!t.is_dense());
    // Shifted along the fifth dimension only: 3 elements on, no element shared; 2 on, some.
    assert!(!overlaps(&t, &box_at([1, 0, 2, 1, 7])));
    assert!(overlaps(&t, &box_at([1, 0, 2, 1, 6])));
    // Shifted along the first: disjoint although the byte ranges interleave.
    assert!(!overlaps(&t, &box_at([3, 0, 2, 1, 4])));
    let mut dense = Tile::contiguous(0, F32, 2);
    dense.rank = 5;
    dense.shape = [2, 3, 1, 4, 2];
    dense.strides = [24, 8, 8, 2, 1];
    assert!(dense.is_dense());
    assert_eq!(dense.bytes(), Ok((0, 48 * 4)));
}

#[test]
fn access_directions() {
    assert!(Access::In.reads() && !Access::In.writes());
    assert!(!Access::Out.reads() && Access::Out.writes());
    assert!(Access::InOut.reads() && Access::InOut.writes());
}
