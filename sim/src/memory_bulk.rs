//! Typed bulk access to simulated device memory: slices of any [`Element`] (`u8` to `u64`,
//! `i8` to `i64`, `f16`, `bf16`, `f32`, `f64`), with named shortcuts for the common ones.
//!
//! Memory is 8-byte atomic cells holding little-endian bytes, so a slice is read or written
//! cell by cell: whole cells with one Relaxed store, partial cells (a slice's ragged ends)
//! with one atomic read-modify-write that leaves the cell's other bytes as they are. Like
//! [`DeviceMemory::read`] and [`DeviceMemory::write`], the accesses are Relaxed: a task's
//! writes reach its consumers through the FIN (release) and dispatch (acquire) around them.
//! Each call checks the whole range first, so a refused access touches nothing.

use std::sync::atomic::{AtomicU64, Ordering};

use half::{bf16, f16};

use crate::element::Element;
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

    /// Writes `data` from `addr` on; `addr` is a multiple of the element's size (its natural
    /// alignment). A 1-, 2- or 4-byte element changes only its own bytes of its cell.
    ///
    /// ```
    /// use pto_sim::{DeviceMemory, half::f16};
    ///
    /// let m = DeviceMemory::new(0x1000, 64)?;
    /// let xs = [1.5, -2.0, 0.1].map(f16::from_f32);
    /// m.write_elems(0x1002, &xs)?; // 2-aligned: any even address
    /// let mut back = [f16::ZERO; 3];
    /// m.read_elems(0x1002, &mut back)?;
    /// assert_eq!(back, xs);
    /// assert!(m.write_elems(0x1001, &xs).is_err(), "misaligned");
    /// # Ok::<(), pto_sim::MemoryError>(())
    /// ```
    pub fn write_elems<T: Element>(&self, addr: u64, data: &[T]) -> Result<(), MemoryError> {
        if T::SIZE == CELL {
            for (w, v) in self.cells(addr, data.len())?.iter().zip(data) {
                w.store(v.encode(), Ordering::Relaxed);
            }
            return Ok(());
        }
        let len = self.check_elems::<T>(addr, data.len())?;
        let mut rest = data;
        for (cell, at, bytes) in self.spans(addr, len) {
            let (now, later) = rest.split_at(bytes / T::SIZE);
            let v = now
                .iter()
                .enumerate()
                .fold(0u64, |v, (k, e)| v | e.encode() << (8 * (at + k * T::SIZE)));
            store_part(cell, at, bytes, v);
            rest = later;
        }
        Ok(())
    }

    /// Reads `out.len()` elements from `addr` on; `addr` is a multiple of the element's size.
    pub fn read_elems<T: Element>(&self, addr: u64, out: &mut [T]) -> Result<(), MemoryError> {
        if T::SIZE == CELL {
            let cells = self.cells(addr, out.len())?;
            for (v, w) in out.iter_mut().zip(cells) {
                *v = T::decode(w.load(Ordering::Relaxed));
            }
            return Ok(());
        }
        let len = self.check_elems::<T>(addr, out.len())?;
        let mut rest = out;
        for (cell, at, bytes) in self.spans(addr, len) {
            let (now, later) = std::mem::take(&mut rest).split_at_mut(bytes / T::SIZE);
            let w = cell.load(Ordering::Relaxed) >> (8 * at);
            for (k, v) in now.iter_mut().enumerate() {
                *v = T::decode(w >> (8 * k * T::SIZE));
            }
            rest = later;
        }
        Ok(())
    }

    /// Writes `data` from `addr` (2-aligned) on: [`DeviceMemory::write_elems`].
    pub fn write_f16s(&self, addr: u64, data: &[f16]) -> Result<(), MemoryError> {
        self.write_elems(addr, data)
    }

    /// Reads `out.len()` `f16`s from `addr` (2-aligned) on: [`DeviceMemory::read_elems`].
    pub fn read_f16s(&self, addr: u64, out: &mut [f16]) -> Result<(), MemoryError> {
        self.read_elems(addr, out)
    }

    /// Writes `data` from `addr` (2-aligned) on: [`DeviceMemory::write_elems`].
    pub fn write_bf16s(&self, addr: u64, data: &[bf16]) -> Result<(), MemoryError> {
        self.write_elems(addr, data)
    }

    /// Reads `out.len()` `bf16`s from `addr` (2-aligned) on: [`DeviceMemory::read_elems`].
    pub fn read_bf16s(&self, addr: u64, out: &mut [bf16]) -> Result<(), MemoryError> {
        self.read_elems(addr, out)
    }

    /// The bytes of `n` elements of `T` from `addr` on, once checked to lie in this memory
    /// and be aligned to the element's size.
    fn check_elems<T: Element>(&self, addr: u64, n: usize) -> Result<usize, MemoryError> {
        let len = n.checked_mul(T::SIZE).ok_or(MemoryError::OutOfRange {
            addr,
            len: usize::MAX,
        })?;
        self.check(addr, len, T::SIZE)?;
        Ok(len)
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
mod tests;
