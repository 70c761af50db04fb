//! The memory map: accesses reach their range, copies cross ranges, and every access goes
//! through the one read path or the one write path.

use std::cell::RefCell;
use std::sync::atomic::AtomicU64;

use super::*;
use crate::memory::SharedWords;

/// An access the map made: address, bytes, and whether it wrote.
type Seen = (u64, usize, bool);

thread_local! {
    /// The accesses this thread's maps made through the read and write paths.
    static SEEN: RefCell<Vec<Seen>> = const { RefCell::new(Vec::new()) };
}

/// Called by the read and write paths after each access that succeeded.
pub(super) fn saw(addr: u64, len: usize, write: bool) {
    SEEN.with(|s| s.borrow_mut().push((addr, len, write)));
}

/// The accesses seen since the last call.
fn seen() -> Vec<Seen> {
    SEEN.with(|s| std::mem::take(&mut *s.borrow_mut()))
}

struct Outside(Vec<AtomicU64>);

impl SharedWords for Outside {
    fn words(&self) -> &[AtomicU64] {
        &self.0
    }
}

#[test]
fn accesses_go_to_their_range_and_copies_cross_ranges() {
    let local = Arc::new(DeviceMemory::new(0x1000, 4096).unwrap());
    let outside = Arc::new(Outside((0..512).map(|_| AtomicU64::new(0)).collect()));
    let window = Arc::new(DeviceMemory::shared(0x10_0000, outside.clone()).unwrap());
    let map = MemoryMap::new(local, vec![window]).unwrap();
    let src = map.alloc(800, 8).unwrap();
    let data: Vec<u64> = (0..100).collect();
    map.write(src, &data).unwrap();
    map.copy(src, 0x10_0008, 100).unwrap();
    assert_eq!(outside.0[1].load(std::sync::atomic::Ordering::Relaxed), 0);
    assert_eq!(
        outside.0[100].load(std::sync::atomic::Ordering::Relaxed),
        99
    );
    assert_eq!(map.add64(0x10_0000, 5), Ok(5));
    assert_eq!(map.load64(0x10_0000), Ok(5));
    assert!(map.load64(0x20_0000).is_err(), "no range there");
    assert!(
        map.copy(src, 0x10_0000 + 4096 - 8, 2).is_err(),
        "past the window"
    );
    map.write_f32s(0x10_0010, &[1.0, 2.5, -3.0]).unwrap();
    let mut f = [0f32; 3];
    map.read_f32s(0x10_0010, &mut f).unwrap();
    assert_eq!(f, [1.0, 2.5, -3.0], "typed slices reach the window");
    assert_eq!(
        map.read_bytes(0x10_0000 + 4096 - 2, &mut [0; 4]),
        Err(MemoryError::OutOfRange {
            addr: 0x10_0000 + 4096 - 2,
            len: 4
        }),
        "a slice may not run past its range"
    );
    assert!(map.write_u32s(src + 2, &[1]).is_err(), "misaligned");
    let clash = Arc::new(DeviceMemory::new(0x1800, 64).unwrap());
    assert!(
        MemoryMap::new(
            Arc::new(DeviceMemory::new(0x1000, 4096).unwrap()),
            vec![clash]
        )
        .is_err()
    );
}

/// A map of 4 KiB of its own memory at 0x1000 and a 4 KiB window at 0x10_0000.
fn map_with_window() -> (MemoryMap, Arc<Outside>) {
    let local = Arc::new(DeviceMemory::new(0x1000, 4096).unwrap());
    let outside = Arc::new(Outside((0..512).map(|_| AtomicU64::new(0)).collect()));
    let window = Arc::new(DeviceMemory::shared(0x10_0000, outside.clone()).unwrap());
    (MemoryMap::new(local, vec![window]).unwrap(), outside)
}

#[test]
fn half_precision_and_generic_slices_reach_the_window() {
    let (map, outside) = map_with_window();
    let w = 0x10_0000;
    let h = [0.25, -1.0, 3.5].map(f16::from_f32);
    map.write_f16s(w + 2, &h).unwrap();
    assert_eq!(
        outside.0[0].load(std::sync::atomic::Ordering::Relaxed),
        u64::from(f16::from_f32(0.25).to_bits()) << 16
            | u64::from(f16::from_f32(-1.0).to_bits()) << 32
            | u64::from(f16::from_f32(3.5).to_bits()) << 48,
        "three f16s in bytes 2..8 of the window's first word"
    );
    let mut back = [f16::ZERO; 3];
    map.read_f16s(w + 2, &mut back).unwrap();
    assert_eq!(back, h);
    let b = [bf16::from_f32(-0.75), bf16::MAX];
    map.write_bf16s(w + 16, &b).unwrap();
    let mut back = [bf16::ZERO; 2];
    map.read_bf16s(w + 16, &mut back).unwrap();
    assert_eq!(back, b);
    map.write_elems(w + 33, &[-5i8, 7]).unwrap();
    let mut back = [0i8; 2];
    map.read_elems(w + 33, &mut back).unwrap();
    assert_eq!(back, [-5, 7]);
    assert_eq!(
        map.write_elems(w + 4096 - 2, &[1i16, 2]),
        Err(MemoryError::OutOfRange {
            addr: w + 4096 - 2,
            len: 4
        }),
        "a slice may not run past its range"
    );
    assert_eq!(
        map.read_bf16s(w + 1, &mut [bf16::ZERO; 2]),
        Err(MemoryError::Misaligned {
            addr: w + 1,
            align: 2
        })
    );
}

#[test]
fn every_access_goes_through_one_read_or_write_path_once() {
    let (map, _) = map_with_window();
    let a = map.alloc(256, 64).unwrap();
    seen();
    let r = |addr, len| vec![(addr, len, false)];
    let w = |addr, len| vec![(addr, len, true)];
    map.load32(a).unwrap();
    assert_eq!(seen(), r(a, 4), "load32");
    map.load64(a).unwrap();
    assert_eq!(seen(), r(a, 8), "load64");
    map.store32(a, 1).unwrap();
    assert_eq!(seen(), w(a, 4), "store32");
    map.store64(a, 1).unwrap();
    assert_eq!(seen(), w(a, 8), "store64");
    map.add32(a, 1).unwrap();
    assert_eq!(seen(), w(a, 4), "add32: an atomic add is a write");
    map.add64(a, 1).unwrap();
    assert_eq!(seen(), w(a, 8), "add64");
    map.write(a, &[1, 2]).unwrap();
    assert_eq!(seen(), w(a, 16), "write");
    map.read(a, &mut [0; 2]).unwrap();
    assert_eq!(seen(), r(a, 16), "read");
    map.write_bytes(a + 1, &[1, 2, 3]).unwrap();
    assert_eq!(seen(), w(a + 1, 3), "write_bytes");
    map.read_bytes(a + 1, &mut [0; 3]).unwrap();
    assert_eq!(seen(), r(a + 1, 3), "read_bytes");
    map.write_elems(a + 2, &[1u16; 3]).unwrap();
    assert_eq!(seen(), w(a + 2, 6), "write_elems");
    map.read_elems(a + 2, &mut [0u16; 3]).unwrap();
    assert_eq!(seen(), r(a + 2, 6), "read_elems");
    map.write_f16s(a, &[f16::ONE; 2]).unwrap();
    assert_eq!(seen(), w(a, 4), "write_f16s");
    map.read_f16s(a, &mut [f16::ONE; 2]).unwrap();
    assert_eq!(seen(), r(a, 4), "read_f16s");
    map.write_bf16s(a, &[bf16::ONE; 2]).unwrap();
    assert_eq!(seen(), w(a, 4), "write_bf16s");
    map.read_bf16s(a, &mut [bf16::ONE; 2]).unwrap();
    assert_eq!(seen(), r(a, 4), "read_bf16s");
    map.write_u32s(a, &[1; 3]).unwrap();
    assert_eq!(seen(), w(a, 12), "write_u32s");
    map.read_u32s(a, &mut [0; 3]).unwrap();
    assert_eq!(seen(), r(a, 12), "read_u32s");
    map.write_f32s(a, &[1.0; 3]).unwrap();
    assert_eq!(seen(), w(a, 12), "write_f32s");
    map.read_f32s(a, &mut [0.0; 3]).unwrap();
    assert_eq!(seen(), r(a, 12), "read_f32s");
    map.write_u64s(a, &[1; 3]).unwrap();
    assert_eq!(seen(), w(a, 24), "write_u64s");
    map.read_u64s(a, &mut [0; 3]).unwrap();
    assert_eq!(seen(), r(a, 24), "read_u64s");
    map.write_f64s(a, &[1.0; 3]).unwrap();
    assert_eq!(seen(), w(a, 24), "write_f64s");
    map.read_f64s(a, &mut [0.0; 3]).unwrap();
    assert_eq!(seen(), r(a, 24), "read_f64s");
    map.copy(a, a + 64, 4).unwrap();
    assert_eq!(
        seen(),
        [(a, 32, false), (a + 64, 32, true)],
        "a copy within a range reads its source and writes its destination once"
    );
    map.copy(a, 0x10_0000, 100).unwrap();
    assert_eq!(
        seen(),
        [(a, 800, false), (0x10_0000, 800, true)],
        "so does a copy across ranges, whatever its bounce buffer does"
    );
    assert!(map.write_f16s(a + 1, &[f16::ONE]).is_err());
    assert!(map.load64(0x20_0000).is_err());
    assert!(map.copy(a + 4, a + 64, 1).is_err());
    assert_eq!(seen(), [], "a refused access is not seen");
}
