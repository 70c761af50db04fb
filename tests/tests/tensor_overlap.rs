//! Tile overlap against brute force: enumerate every byte small tiles touch.

use std::collections::BTreeSet;

use proptest::prelude::*;
use pto_runtime_core::{MAX_RANK, Tile, overlaps, touches};

/// Every byte `t` touches.
fn bytes_of(t: &Tile) -> BTreeSet<u64> {
    let mut out = BTreeSet::new();
    let rank = t.rank as usize;
    let mut k = [0u32; MAX_RANK];
    loop {
        let off: u64 = (0..rank).map(|d| k[d] as u64 * t.strides[d]).sum();
        let at = t.base + off * t.elem as u64;
        out.extend(at..at + t.elem as u64);
        // Next index, odometer style.
        let mut d = rank;
        loop {
            if d == 0 {
                return out;
            }
            d -= 1;
            k[d] += 1;
            if k[d] < t.shape[d] {
                break;
            }
            k[d] = 0;
        }
    }
}

/// A row-major buffer of `dims` (outermost first) and `elem`-byte elements; its strides.
fn nested_strides(dims: &[u32]) -> [u64; MAX_RANK] {
    let mut s = [0u64; MAX_RANK];
    let mut acc = 1u64;
    for d in (0..dims.len()).rev() {
        s[d] = acc;
        acc *= dims[d] as u64;
    }
    s
}

/// A random sub-tile of a row-major buffer with dimensions `dims`.
fn sub_tile(dims: Vec<u32>, elem: u32) -> impl Strategy<Value = Tile> {
    let rank = dims.len();
    let per_dim: Vec<_> = dims
        .iter()
        .map(|&n| (0..n).prop_flat_map(move |start| (Just(start), 1..=n - start)))
        .collect();
    per_dim.prop_map(move |ranges| {
        let strides = nested_strides(&dims);
        let mut shape = [1u32; MAX_RANK];
        let mut origin = 0u64;
        for (d, (start, len)) in ranges.into_iter().enumerate() {
            shape[d] = len;
            origin += start as u64 * strides[d];
        }
        Tile {
            base: 0x1000 + origin * elem as u64,
            elem,
            rank: rank as u8,
            shape,
            strides,
        }
    })
}

/// Two sub-tiles of one buffer of 1 to 3 dimensions.
fn two_views() -> impl Strategy<Value = (Tile, Tile)> {
    (
        prop::collection::vec(1u32..6, 1..=3),
        prop::sample::select(vec![1u32, 2, 4]),
    )
        .prop_flat_map(|(dims, elem)| (sub_tile(dims.clone(), elem), sub_tile(dims, elem)))
}

/// Any small tile: random rank, shape, strides (possibly overlapping or zero) and base.
fn any_tile() -> impl Strategy<Value = Tile> {
    (
        0u64..64,
        prop::sample::select(vec![1u32, 2, 4, 8]),
        prop::collection::vec((1u32..4, 0u64..6), 1..=3),
    )
        .prop_map(|(base, elem, dims)| {
            let mut t = Tile::contiguous(0x1000 + base, elem, 1);
            t.rank = dims.len() as u8;
            for (d, (n, s)) in dims.into_iter().enumerate() {
                t.shape[d] = n;
                t.strides[d] = s;
            }
            t
        })
}

/// Two small tiles with the same element size and the same arbitrary strides (overlapping,
/// zero, out of order), bases a whole number of elements apart.
fn same_layout() -> impl Strategy<Value = (Tile, Tile)> {
    (
        prop::sample::select(vec![1u32, 4]),
        prop::collection::vec((1u32..4, 1u32..4, 0u64..7), 1..=3),
        0u64..40,
        0u64..40,
    )
        .prop_map(|(elem, dims, ba, bb)| {
            let mut a = Tile::contiguous(0x1000 + ba * elem as u64, elem, 1);
            let mut b = Tile::contiguous(0x1000 + bb * elem as u64, elem, 1);
            a.rank = dims.len() as u8;
            b.rank = a.rank;
            for (d, (na, nb, s)) in dims.into_iter().enumerate() {
                (a.shape[d], b.shape[d]) = (na, nb);
                (a.strides[d], b.strides[d]) = (s, s);
            }
            (a, b)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(if cfg!(miri) { 8 } else { 2000 }))]

    /// Views of one row-major buffer: the answer is exact.
    #[test]
    fn views_of_one_buffer_overlap_exactly_when_they_share_a_byte((a, b) in two_views()) {
        let shared = !bytes_of(&a).is_disjoint(&bytes_of(&b));
        prop_assert_eq!(overlaps(&a, &b), shared, "{:?} / {:?}", a, b);
        prop_assert_eq!(overlaps(&b, &a), shared);
    }

    /// Any tiles: an overlap is never missed.
    #[test]
    fn a_shared_byte_is_never_missed(a in any_tile(), b in any_tile()) {
        if !bytes_of(&a).is_disjoint(&bytes_of(&b)) {
            prop_assert!(overlaps(&a, &b), "{:?} / {:?}", a, b);
        }
    }

    /// A tile against a byte range: exact, whatever the layout.
    #[test]
    fn a_tile_touches_a_range_exactly_when_it_has_a_byte_there(
        t in any_tile(),
        lo in 0x1000u64..0x1000 + 96,
        len in 1u64..48,
    ) {
        let hit = bytes_of(&t).range(lo..lo + len).next().is_some();
        prop_assert_eq!(touches(&t, lo, lo + len), hit, "{:?} / {}..{}", t, lo, lo + len);
    }

    /// A dense tile touches every byte of its range, and only those.
    #[test]
    fn a_dense_tile_is_its_byte_range(t in prop_oneof![any_tile(), two_views().prop_map(|v| v.0)]) {
        let (lo, hi) = t.bytes().unwrap();
        let every = bytes_of(&t).len() as u64 == hi - lo;
        if t.is_dense() {
            prop_assert!(every, "{:?} says dense", t);
        }
        // Row-major sub-tiles spanning whole rows are dense too.
        if t.rank == 1 && t.strides[0] == 1 {
            prop_assert!(t.is_dense());
        }
    }

    /// One layout with any strides: still exact.
    #[test]
    fn one_layout_with_any_strides_is_exact((a, b) in same_layout()) {
        let shared = !bytes_of(&a).is_disjoint(&bytes_of(&b));
        prop_assert_eq!(overlaps(&a, &b), shared, "{:?} / {:?}", a, b);
    }
}
