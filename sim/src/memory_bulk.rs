//! Typed bulk access to simulated device memory: byte, `u32`, `f32`, `u64` and `f64` slices.
//!
//! Memory is 8-byte atomic cells holding little-endian bytes, so a slice is read or written
//! cell by cell: whole cells with one Relaxed store, partial cells (a slice's ragged ends)
//! with one atomic read-modify-write that leaves the cell's other bytes as they are. Like
//! [`DeviceMemory::read`] and [`DeviceMemory::write`], the accesses are Relaxed: a task's
//! writes reach its consumers through the FIN (release) and dispatch (acquire) around them.
//! Each call checks the whole range first, so a refused access touches nothing.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::memory::{DeviceMemory, MemoryError};

/// Bytes in one cell.
const CELL: usize = 8;

impl DeviceMemory {
    /// Writes `data` from `addr` on (any alignment).
    pub fn write_bytes(&self, addr: u64, data: &[u8]) -> Result<(), MemoryError> {
        self.check(addr, data.len(), 1)?;
        let mut done = 0;
        for (cell, at, n) in self.spans(addr, data.len()) {
            let mut bytes = [0u8; CELL];
            bytes[at..at + n].copy_from_slice(&data[done..done + n]);
            store_part(cell, at, n, u64::from_le_bytes(bytes));
            done += n;
        }
        Ok(())
    }

    /// Reads `out.len()` bytes from `addr` on (any alignment).
    pub fn read_bytes(&self, addr: u64, out: &mut [u8]) -> Result<(), MemoryError> {
        self.check(addr, out.len(), 1)?;
        let mut done = 0;
        for (cell, at, n) in self.spans(addr, out.len()) {
            let bytes = cell.load(Ordering::Relaxed).to_le_bytes();
            out[done..done + n].copy_from_slice(&bytes[at..at + n]);
            done += n;
        }
        Ok(())
    }

    /// Writes `data` from `addr` (4-aligned) on.
    pub fn write_u32s(&self, addr: u64, data: &[u32]) -> Result<(), MemoryError> {
        self.write_halves(addr, data.len(), |i| data[i])
    }

    /// Reads `out.len()` 32-bit words from `addr` (4-aligned) on.
    pub fn read_u32s(&self, addr: u64, out: &mut [u32]) -> Result<(), MemoryError> {
        self.read_halves(addr, out.len(), |i, v| out[i] = v)
    }

    /// Writes `data` (as IEEE 754 bits) from `addr` (4-aligned) on.
    pub fn write_f32s(&self, addr: u64, data: &[f32]) -> Result<(), MemoryError> {
        self.write_halves(addr, data.len(), |i| data[i].to_bits())
    }

    /// Reads `out.len()` `f32`s from `addr` (4-aligned) on.
    pub fn read_f32s(&self, addr: u64, out: &mut [f32]) -> Result<(), MemoryError> {
        self.read_halves(addr, out.len(), |i, v| out[i] = f32::from_bits(v))
    }

    /// Writes `data` from `addr` (8-aligned) on: [`DeviceMemory::write`].
    pub fn write_u64s(&self, addr: u64, data: &[u64]) -> Result<(), MemoryError> {
        self.write(addr, data)
    }

    /// Reads `out.len()` 64-bit words from `addr` (8-aligned) on: [`DeviceMemory::read`].
    pub fn read_u64s(&self, addr: u64, out: &mut [u64]) -> Result<(), MemoryError> {
        self.read(addr, out)
    }

    /// Writes `data` (as IEEE 754 bits) from `addr` (8-aligned) on.
    pub fn write_f64s(&self, addr: u64, data: &[f64]) -> Result<(), MemoryError> {
        let cells = self.cells(addr, data.len())?;
        for (w, v) in cells.iter().zip(data) {
            w.store(v.to_bits(), Ordering::Relaxed);
        }
        Ok(())
    }

    /// Reads `out.len()` `f64`s from `addr` (8-aligned) on.
    pub fn read_f64s(&self, addr: u64, out: &mut [f64]) -> Result<(), MemoryError> {
        let cells = self.cells(addr, out.len())?;
        for (v, w) in out.iter_mut().zip(cells) {
            *v = f64::from_bits(w.load(Ordering::Relaxed));
        }
        Ok(())
    }

    /// The cells a checked range `addr..addr + len` touches, each with the first byte of the
    /// range in it and how many of its bytes the range covers.
    fn spans(&self, addr: u64, len: usize) -> impl Iterator<Item = (&AtomicU64, usize, usize)> {
        let off = (addr - self.base()) as usize;
        let words = self.cell_slice();
        let mut pos = off;
        let end = off + len;
        std::iter::from_fn(move || {
            if pos >= end {
                return None;
            }
            let at = pos % CELL;
            let n = (CELL - at).min(end - pos);
            let cell = &words[pos / CELL];
            pos += n;
            Some((cell, at, n))
        })
    }

    /// Writes `n` 32-bit words, word `i` being `word(i)`, from `addr` (4-aligned) on.
    fn write_halves(
        &self,
        addr: u64,
        n: usize,
        word: impl Fn(usize) -> u32,
    ) -> Result<(), MemoryError> {
        let len = self.check_halves(addr, n)?;
        let mut i = 0;
        for (cell, at, bytes) in self.spans(addr, len) {
            if bytes == CELL {
                cell.store(
                    u64::from(word(i)) | u64::from(word(i + 1)) << 32,
                    Ordering::Relaxed,
                );
                i += 2;
            } else {
                store_part(cell, at, bytes, u64::from(word(i)) << (8 * at));
                i += 1;
            }
        }
        Ok(())
    }

    /// The bytes of `n` 32-bit words from `addr` on, once checked to lie in this memory and
    /// be 4-aligned.
    fn check_halves(&self, addr: u64, n: usize) -> Result<usize, MemoryError> {
        let len = n.checked_mul(4).ok_or(MemoryError::OutOfRange {
            addr,
            len: usize::MAX,
        })?;
        self.check(addr, len, 4)?;
        Ok(len)
    }

    /// Reads `n` 32-bit words from `addr` (4-aligned) on, handing word `i` to `put(i, v)`.
    fn read_halves(
        &self,
        addr: u64,
        n: usize,
        mut put: impl FnMut(usize, u32),
    ) -> Result<(), MemoryError> {
        let len = self.check_halves(addr, n)?;
        let mut i = 0;
        for (cell, at, bytes) in self.spans(addr, len) {
            let w = cell.load(Ordering::Relaxed) >> (8 * at);
            put(i, w as u32);
            if bytes == CELL {
                put(i + 1, (w >> 32) as u32);
            }
            i += bytes / 4;
        }
        Ok(())
    }
}

/// Stores bytes `at..at + n` of `cell` from the same bytes of `v` (the others of `v` are 0),
/// leaving the cell's other bytes as they are.
fn store_part(cell: &AtomicU64, at: usize, n: usize, v: u64) {
    if n == CELL {
        cell.store(v, Ordering::Relaxed);
        return;
    }
    let mask = ((1u64 << (8 * n)) - 1) << (8 * at);
    // The closure always returns `Some`, so the update cannot fail.
    let _ = cell.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |w| {
        Some((w & !mask) | (v & mask))
    });
}

#[cfg(test)]
mod tests {
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
}
