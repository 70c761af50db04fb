//! Device memory: sizes, alignment, halves of cells, atomics and bounds.

use super::*;

const BASE: u64 = 0x1000_0000;

fn mem(bytes: usize) -> DeviceMemory {
    DeviceMemory::new(BASE, bytes).unwrap()
}

#[test]
fn base_and_size_are_rounded_up() {
    let m = DeviceMemory::new(100, 13).unwrap();
    assert_eq!(m.base(), 128, "base rounds up to 64");
    assert_eq!(m.len(), 16, "size rounds up to 8");
    let top = DeviceMemory::new(u64::MAX - 10, 64).unwrap();
    assert!(top.base().is_multiple_of(64));
    assert!(
        top.contains(top.base(), top.len()),
        "clipped, never wrapped"
    );
}

#[test]
fn accesses_outside_the_memory_are_out_of_range() {
    let m = mem(64);
    let end = BASE + 64;
    assert_eq!(
        m.load64(end),
        Err(MemoryError::OutOfRange { addr: end, len: 8 })
    );
    assert_eq!(
        m.load32(BASE - 4),
        Err(MemoryError::OutOfRange {
            addr: BASE - 4,
            len: 4
        })
    );
    assert!(m.store64(end - 8, 1).is_ok(), "the last cell is inside");
    assert!(m.load32(end - 4).is_ok(), "the last half is inside");
    assert_eq!(
        m.write(end - 8, &[1, 2]),
        Err(MemoryError::OutOfRange {
            addr: end - 8,
            len: 16
        })
    );
    let mut out = [0; 9];
    assert!(m.read(BASE, &mut out).is_err(), "one word too many");
    assert!(m.contains(end, 0) && !m.contains(end, 1) && !m.contains(0, 0));
    assert!(m.write(BASE, &[]).is_ok());
    assert!(
        !m.contains(u64::MAX, usize::MAX),
        "no overflow in the check"
    );
}

#[test]
fn misaligned_accesses_are_refused() {
    let m = mem(64);
    assert_eq!(
        m.load32(BASE + 2),
        Err(MemoryError::Misaligned {
            addr: BASE + 2,
            align: 4
        })
    );
    assert_eq!(
        m.load64(BASE + 4),
        Err(MemoryError::Misaligned {
            addr: BASE + 4,
            align: 8
        })
    );
    assert!(m.add64(BASE + 4, 1).is_err());
    assert!(m.write(BASE + 4, &[1]).is_err());
    assert!(m.copy(BASE, BASE + 12, 1).is_err());
}

#[test]
fn the_halves_of_a_cell_are_independent() {
    let m = mem(64);
    m.store32(BASE, 0xaaaa_aaaa).unwrap();
    m.store32(BASE + 4, 0x1234_5678).unwrap();
    assert_eq!(
        m.load64(BASE).unwrap(),
        0x1234_5678_aaaa_aaaa,
        "little-endian cell"
    );
    m.store32(BASE, 7).unwrap();
    assert_eq!(
        m.load32(BASE + 4).unwrap(),
        0x1234_5678,
        "high half untouched"
    );
    m.add32(BASE + 4, 1).unwrap();
    assert_eq!(m.load32(BASE).unwrap(), 7, "low half untouched");
    assert_eq!(m.load32(BASE + 4).unwrap(), 0x1234_5679);
}

#[test]
fn add32_wraps_without_carrying_into_the_other_half() {
    let m = mem(64);
    m.store32(BASE, u32::MAX).unwrap();
    assert_eq!(m.add32(BASE, 1).unwrap(), 0);
    assert_eq!(
        m.load32(BASE + 4).unwrap(),
        0,
        "no carry into the high half"
    );
    m.store32(BASE + 4, u32::MAX - 1).unwrap();
    assert_eq!(m.add32(BASE + 4, 3).unwrap(), 1);
    assert_eq!(m.load32(BASE).unwrap(), 0, "low half untouched");
    m.store64(BASE + 8, u64::MAX).unwrap();
    assert_eq!(m.add64(BASE + 8, 2).unwrap(), 1);
}

#[test]
fn alloc_aligns_and_reports_exhaustion() {
    let m = mem(1024);
    assert_eq!(m.alloc(3, 1).unwrap(), BASE, "first block at the base");
    let a = m.alloc(8, 256).unwrap();
    assert!(a.is_multiple_of(256) && a > BASE);
    let b = m.alloc(0, 8).unwrap();
    assert_eq!(b, a + 8, "an empty request still takes one cell");
    assert_eq!(
        m.alloc(8, 12),
        Err(MemoryError::Misaligned { addr: 0, align: 12 })
    );
    let left = (BASE + 1024 - (b + 8)) as usize;
    assert_eq!(
        m.alloc(left + 1, 8),
        Err(MemoryError::Exhausted {
            bytes: left + 1,
            left
        })
    );
    assert_eq!(m.alloc(left, 8).unwrap(), b + 8, "the rest still fits");
    assert!(matches!(
        m.alloc(8, 8),
        Err(MemoryError::Exhausted { left: 0, .. })
    ));
}

#[test]
fn alloc_hands_out_zeroed_disjoint_blocks_across_threads() {
    let m = mem(8 * 64 * 100);
    m.write(BASE, &[u64::MAX; 16]).unwrap();
    let blocks: Vec<u64> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..8)
            .map(|_| {
                s.spawn(|| {
                    (0..100)
                        .map(|_| m.alloc(40, 8).unwrap())
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        hs.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    let mut sorted = blocks;
    sorted.sort_unstable();
    assert!(
        sorted.windows(2).all(|w| w[1] - w[0] >= 40),
        "blocks never overlap"
    );
    let mut out = [1u64; 5];
    m.read(sorted[0], &mut out).unwrap();
    assert_eq!(out, [0; 5], "a block is zeroed even over old data");
}

#[test]
fn copy_moves_words_like_memmove() {
    let m = mem(128);
    m.write(BASE, &[1, 2, 3, 4]).unwrap();
    m.copy(BASE, BASE + 64, 4).unwrap();
    let mut out = [0; 4];
    m.read(BASE + 64, &mut out).unwrap();
    assert_eq!(out, [1, 2, 3, 4]);
    m.copy(BASE, BASE + 8, 4).unwrap();
    let mut out = [0; 5];
    m.read(BASE, &mut out).unwrap();
    assert_eq!(out, [1, 1, 2, 3, 4], "forward overlap");
    m.copy(BASE + 8, BASE, 4).unwrap();
    m.read(BASE, &mut out).unwrap();
    assert_eq!(out, [1, 2, 3, 4, 4], "backward overlap");
    assert_eq!(
        m.copy(BASE, BASE + 104, 4),
        Err(MemoryError::OutOfRange {
            addr: BASE + 104,
            len: 32
        })
    );
    assert!(
        m.copy(BASE, BASE, usize::MAX).is_err(),
        "no overflow in the size"
    );
}

#[test]
fn host_addressed_memory_sits_at_its_storage_and_allocates() {
    let m = DeviceMemory::host_addressed(1000).unwrap();
    assert_eq!(m.base(), m.cell_slice().as_ptr() as u64);
    assert_eq!(m.base() % 64, 0);
    assert_eq!(m.len(), 1000);
    let a = m.alloc(24, 64).unwrap();
    assert_eq!(a, m.base());
    m.store64(a + 16, 7).unwrap();
    assert_eq!(m.cell_slice()[2].load(Ordering::Relaxed), 7);
    assert!(matches!(
        m.alloc(1000, 8),
        Err(MemoryError::Exhausted { .. })
    ));
}
