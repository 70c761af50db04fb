//! Typed slices of device memory: every element type at every alignment, neighbours untouched,
//! refused accesses touching nothing.

use super::*;

const BASE: u64 = 0x2000_0000;

fn mem() -> DeviceMemory {
    DeviceMemory::new(BASE, 64).unwrap()
}

#[test]
fn bytes_round_trip_at_any_alignment_and_leave_neighbours_alone() {
    let m = mem();
    m.write(BASE, &[u64::MAX; 8]).unwrap();
    let data: Vec<u8> = (1..=13).collect();
    m.write_bytes(BASE + 3, &data).unwrap();
    let mut out = [0u8; 13];
    m.read_bytes(BASE + 3, &mut out).unwrap();
    assert_eq!(out.as_slice(), data.as_slice());
    let mut all = [0u8; 24];
    m.read_bytes(BASE, &mut all).unwrap();
    assert_eq!(all[..3], [0xff; 3], "the bytes before are untouched");
    assert_eq!(all[16..], [0xff; 8], "the bytes after are untouched");
    assert_eq!(
        m.load64(BASE).unwrap(),
        u64::from_le_bytes([0xff, 0xff, 0xff, 1, 2, 3, 4, 5]),
        "little-endian cells"
    );
    m.write_bytes(BASE + 64, &[]).unwrap();
}

#[test]
fn u32s_and_f32s_round_trip_from_either_half_of_a_cell() {
    let m = mem();
    for start in [BASE, BASE + 4] {
        m.write(BASE, &[0; 8]).unwrap();
        let data = [1.5f32, -2.25, 3.0, f32::MIN_POSITIVE, 7.0];
        m.write_f32s(start, &data).unwrap();
        let mut out = [0f32; 5];
        m.read_f32s(start, &mut out).unwrap();
        assert_eq!(out, data, "from {start:#x}");
        assert_eq!(m.load32(start + 4).unwrap(), (-2.25f32).to_bits());
        let mut words = [0u32; 5];
        m.read_u32s(start, &mut words).unwrap();
        assert_eq!(words, data.map(f32::to_bits));
        assert_eq!(m.load32(start + 20).unwrap(), 0, "nothing past the end");
        if start == BASE + 4 {
            assert_eq!(m.load32(BASE).unwrap(), 0, "nothing before the start");
        }
    }
    m.write_u32s(BASE + 4, &[9, 10]).unwrap();
    assert_eq!(m.load64(BASE).unwrap() >> 32, 9);
    assert_eq!(m.load32(BASE + 8).unwrap(), 10);
}

#[test]
fn u64s_and_f64s_round_trip() {
    let m = mem();
    m.write_f64s(BASE + 8, &[0.1, -1e300]).unwrap();
    let mut out = [0f64; 2];
    m.read_f64s(BASE + 8, &mut out).unwrap();
    assert_eq!(out, [0.1, -1e300]);
    m.write_u64s(BASE, &[5, 6]).unwrap();
    let mut w = [0u64; 2];
    m.read_u64s(BASE, &mut w).unwrap();
    assert_eq!(w, [5, 6]);
}

#[test]
fn out_of_range_or_misaligned_slices_are_refused_and_touch_nothing() {
    let m = mem();
    assert_eq!(
        m.write_f32s(BASE + 2, &[1.0]),
        Err(MemoryError::Misaligned {
            addr: BASE + 2,
            align: 4
        })
    );
    assert_eq!(
        m.read_f64s(BASE + 4, &mut [0.0]),
        Err(MemoryError::Misaligned {
            addr: BASE + 4,
            align: 8
        })
    );
    assert_eq!(
        m.write_f32s(BASE + 60, &[1.0, 2.0]),
        Err(MemoryError::OutOfRange {
            addr: BASE + 60,
            len: 8
        })
    );
    assert_eq!(
        m.load32(BASE + 60).unwrap(),
        0,
        "a refused write touches nothing"
    );
    assert_eq!(
        m.read_bytes(BASE - 1, &mut [0; 2]),
        Err(MemoryError::OutOfRange {
            addr: BASE - 1,
            len: 2
        })
    );
    assert!(m.write_bytes(BASE + 63, &[1, 2]).is_err());
    assert!(
        m.read_u32s(u64::MAX - 3, &mut [0; 2]).is_err(),
        "no overflow"
    );
}

/// Bits for the `i`th test value of an element: every byte differs from the fill byte 0xaa
/// and from its neighbours', so a shifted or misplaced element shows.
fn test_bits(i: usize) -> u64 {
    let b = (i as u64 * 8 + 1) & 0x7f;
    u64::from_le_bytes(std::array::from_fn(|k| (b + k as u64) as u8))
}

/// Writes `n` elements of `T` at every legal offset within a cell (and so across cells),
/// over memory filled with 0xaa, and checks they read back bit for bit, that memory holds
/// their little-endian bytes and that no other byte changed.
fn round_trips_everywhere<T: Element>(n: usize) {
    let m = DeviceMemory::new(BASE, 128).unwrap();
    let values: Vec<T> = (0..n).map(|i| T::decode(test_bits(i))).collect();
    for off in (0..8).step_by(T::SIZE) {
        m.write(BASE, &[0xaaaa_aaaa_aaaa_aaaa; 16]).unwrap();
        let at = BASE + 8 + off as u64;
        m.write_elems(at, &values).unwrap();
        let mut back = vec![T::default(); n];
        m.read_elems(at, &mut back).unwrap();
        let bits = |v: &[T]| v.iter().map(|e| e.encode()).collect::<Vec<_>>();
        assert_eq!(bits(&back), bits(&values), "{} at +{off}", T::DTYPE);
        let mut all = [0u8; 128];
        m.read_bytes(BASE, &mut all).unwrap();
        let (first, end) = (8 + off, 8 + off + n * T::SIZE);
        for (i, &b) in all.iter().enumerate() {
            let want = if (first..end).contains(&i) {
                let k = (i - first) / T::SIZE;
                values[k].encode().to_le_bytes()[(i - first) % T::SIZE]
            } else {
                0xaa
            };
            assert_eq!(b, want, "{} at +{off}: byte {i}", T::DTYPE);
        }
    }
}

#[test]
fn every_element_type_round_trips_at_every_alignment_and_leaves_neighbours_alone() {
    for n in [1, 2, 3, 5, 9] {
        round_trips_everywhere::<u8>(n);
        round_trips_everywhere::<i8>(n);
        round_trips_everywhere::<u16>(n);
        round_trips_everywhere::<i16>(n);
        round_trips_everywhere::<f16>(n);
        round_trips_everywhere::<bf16>(n);
        round_trips_everywhere::<u32>(n);
        round_trips_everywhere::<i32>(n);
        round_trips_everywhere::<f32>(n);
        round_trips_everywhere::<u64>(n);
        round_trips_everywhere::<i64>(n);
        round_trips_everywhere::<f64>(n);
    }
}

#[test]
fn f16_and_bf16_shortcuts_are_the_generic_access() {
    let m = mem();
    let h = [1.0, -0.5, 65504.0, 6.1e-5].map(f16::from_f32);
    m.write_f16s(BASE + 2, &h).unwrap();
    let mut back = [f16::ZERO; 4];
    m.read_elems(BASE + 2, &mut back).unwrap();
    assert_eq!(back, h);
    assert_eq!(
        m.load32(BASE).unwrap() >> 16,
        0x3c00,
        "f16 1.0 in bytes 2..4"
    );
    let b = [1.0, -3.0e38, 0.007].map(bf16::from_f32);
    m.write_elems(BASE + 16, &b).unwrap();
    let mut back = [bf16::ZERO; 3];
    m.read_bf16s(BASE + 16, &mut back).unwrap();
    assert_eq!(back, b);
    let mut sixteen = [0u16; 3];
    m.read_elems(BASE + 16, &mut sixteen).unwrap();
    assert_eq!(sixteen, b.map(bf16::to_bits), "the same bytes, as u16");
}

#[test]
fn f32_and_u64_shortcuts_and_the_generic_access_agree() {
    let m = mem();
    m.write_elems(BASE + 4, &[1.5f32, 2.5]).unwrap();
    let mut f = [0f32; 2];
    m.read_f32s(BASE + 4, &mut f).unwrap();
    assert_eq!(f, [1.5, 2.5]);
    m.write_u64s(BASE + 16, &[u64::MAX, 3]).unwrap();
    let mut i = [0i64; 2];
    m.read_elems(BASE + 16, &mut i).unwrap();
    assert_eq!(i, [-1, 3]);
}

#[test]
fn misaligned_or_out_of_range_elements_are_refused_and_touch_nothing() {
    let m = mem();
    let h = [f16::ONE; 2];
    for (addr, align) in [(BASE + 1, 2), (BASE + 63, 2)] {
        assert_eq!(
            m.write_elems(addr, &h),
            Err(MemoryError::Misaligned { addr, align })
        );
    }
    assert_eq!(
        m.read_elems(BASE + 6, &mut [0i32; 1]),
        Err(MemoryError::Misaligned {
            addr: BASE + 6,
            align: 4
        })
    );
    assert_eq!(
        m.write_elems(BASE + 4, &[0f64]),
        Err(MemoryError::Misaligned {
            addr: BASE + 4,
            align: 8
        })
    );
    assert_eq!(
        m.write_elems(BASE + 60, &[1u16; 3]),
        Err(MemoryError::OutOfRange {
            addr: BASE + 60,
            len: 6
        })
    );
    assert_eq!(
        m.write_bf16s(BASE - 2, &[bf16::ONE]),
        Err(MemoryError::OutOfRange {
            addr: BASE - 2,
            len: 2
        })
    );
    assert!(m.read_elems(BASE + 63, &mut [0u8; 2]).is_err());
    assert!(
        m.read_elems(BASE, &mut [0u8; 65]).is_err(),
        "one byte too many"
    );
    let mut all = [1u8; 64];
    m.read_bytes(BASE, &mut all).unwrap();
    assert_eq!(all, [0; 64], "no refused write touched a byte");
    m.write_elems::<u8>(BASE + 64, &[]).unwrap();
}

#[test]
fn neighbouring_halves_written_at_once_by_two_threads_both_land() {
    // Two threads write the even and the odd f16s of the same cells, one element per call:
    // each write changes only its own two bytes, so neither loses the other's.
    let m = mem();
    let value = |i: usize| f16::from_f32(i as f32 + 0.5);
    std::thread::scope(|s| {
        for parity in 0..2 {
            let m = &m;
            s.spawn(move || {
                for _ in 0..200 {
                    for i in (parity..32).step_by(2) {
                        m.write_f16s(BASE + 2 * i as u64, &[value(i)]).unwrap();
                    }
                }
            });
        }
    });
    let mut back = [f16::ZERO; 32];
    m.read_f16s(BASE, &mut back).unwrap();
    assert_eq!(back, std::array::from_fn(value));
}
