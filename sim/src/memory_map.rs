//! Every memory the simulated machine can address: its own device memory, and ranges that
//! live elsewhere (the communication windows of a multi-rank job, mapped from shared memory).
//! Each access goes to the one range that holds it; a copy may cross ranges.

use std::sync::Arc;

use pto_runtime_core::Buffer;

use half::{bf16, f16};

use crate::element::Element;
use crate::memory::{DeviceMemory, MemoryError};

/// Bytes in a slice of `T` (saturated: an impossible length is out of any range).
fn bytes_of<T>(s: &[T]) -> usize {
    s.len().saturating_mul(size_of::<T>())
}

/// The machine's address space: disjoint ranges, its own memory first.
///
/// Kernels reach it through [`crate::KernelCtx::memory`]; besides 32- and 64-bit words
/// (atomic, ordered) it reads and writes slices of any [`Element`] (`read_elems` /
/// `write_elems`), with shortcuts for bytes, `f16`, `bf16`, `u32`, `f32`, `u64` and `f64`:
///
/// ```
/// use pto_sim::{KernelCtx, KernelError};
///
/// /// `args = [x, y, n]`: y[i] += 2 x[i] for n f32s.
/// fn axpy(ctx: &KernelCtx<'_>) -> Result<(), KernelError> {
///     let [x, y, n] = ctx.args_array()?;
///     let (mut xs, mut ys) = (vec![0f32; n as usize], vec![0f32; n as usize]);
///     ctx.memory().read_f32s(x, &mut xs)?;
///     ctx.memory().read_f32s(y, &mut ys)?;
///     for (y, x) in ys.iter_mut().zip(&xs) {
///         *y += 2.0 * x;
///     }
///     ctx.memory().write_f32s(y, &ys)?;
///     Ok(())
/// }
/// # let _ = axpy;
/// ```
#[derive(Debug)]
pub struct MemoryMap {
    ranges: Vec<Arc<DeviceMemory>>,
    /// Whether data accesses are logged for the access check.
    logs: bool,
}

impl MemoryMap {
    /// `local` (where [`MemoryMap::alloc`] allocates) and `extra` ranges. Overlapping ranges
    /// are an error.
    pub fn new(
        local: Arc<DeviceMemory>,
        extra: Vec<Arc<DeviceMemory>>,
    ) -> Result<Self, MemoryError> {
        let ranges: Vec<_> = std::iter::once(local).chain(extra).collect();
        for (i, a) in ranges.iter().enumerate() {
            for b in &ranges[..i] {
                let (a0, a1) = (a.base(), a.base() + a.len() as u64);
                let (b0, b1) = (b.base(), b.base() + b.len() as u64);
                if a0 < b1 && b0 < a1 {
                    return Err(MemoryError::OutOfRange {
                        addr: a0,
                        len: a.len(),
                    });
                }
            }
        }
        Ok(MemoryMap {
            ranges,
            logs: false,
        })
    }

    /// The machine's own memory.
    pub fn local(&self) -> &DeviceMemory {
        &self.ranges[0]
    }

    /// The range holding `addr..addr + len`.
    fn range(&self, addr: u64, len: usize) -> Result<&DeviceMemory, MemoryError> {
        self.ranges
            .iter()
            .map(|r| &**r)
            .find(|r| r.contains(addr, len))
            .ok_or(MemoryError::OutOfRange { addr, len })
    }

    /// Whether `addr..addr + len` lies inside one range.
    pub fn contains(&self, addr: u64, len: usize) -> bool {
        self.range(addr, len).is_ok()
    }

    /// Allocates a [`Buffer`] from the machine's own memory (see [`DeviceMemory::alloc`]).
    pub fn alloc_buffer(&self, bytes: usize, align: usize) -> Result<Buffer, MemoryError> {
        self.local().alloc_buffer(bytes, align)
    }

    /// Allocates from the machine's own memory (see [`DeviceMemory::alloc`]).
    pub fn alloc(&self, bytes: usize, align: usize) -> Result<u64, MemoryError> {
        self.local().alloc(bytes, align)
    }

    /// See [`DeviceMemory::load32`].
    pub fn load32(&self, addr: u64) -> Result<u32, MemoryError> {
        self.reading_word(addr, 4, |r| r.load32(addr))
    }

    /// See [`DeviceMemory::load64`].
    pub fn load64(&self, addr: u64) -> Result<u64, MemoryError> {
        self.reading_word(addr, 8, |r| r.load64(addr))
    }

    /// See [`DeviceMemory::store32`].
    pub fn store32(&self, addr: u64, v: u32) -> Result<(), MemoryError> {
        self.writing_word(addr, 4, |r| r.store32(addr, v))
    }

    /// See [`DeviceMemory::store64`].
    pub fn store64(&self, addr: u64, v: u64) -> Result<(), MemoryError> {
        self.writing_word(addr, 8, |r| r.store64(addr, v))
    }

    /// See [`DeviceMemory::add32`].
    pub fn add32(&self, addr: u64, delta: u32) -> Result<u32, MemoryError> {
        self.writing_word(addr, 4, |r| r.add32(addr, delta))
    }

    /// See [`DeviceMemory::add64`].
    pub fn add64(&self, addr: u64, delta: u64) -> Result<u64, MemoryError> {
        self.writing_word(addr, 8, |r| r.add64(addr, delta))
    }

    /// See [`DeviceMemory::write`].
    pub fn write(&self, addr: u64, data: &[u64]) -> Result<(), MemoryError> {
        self.writing(addr, bytes_of(data), |r| r.write(addr, data))
    }

    /// See [`DeviceMemory::read`].
    pub fn read(&self, addr: u64, out: &mut [u64]) -> Result<(), MemoryError> {
        self.reading(addr, bytes_of(out), |r| r.read(addr, out))
    }

    /// Writes `data` from `addr` (a multiple of the element's size) on, inside one range: see
    /// [`DeviceMemory::write_elems`].
    pub fn write_elems<T: Element>(&self, addr: u64, data: &[T]) -> Result<(), MemoryError> {
        self.writing(addr, bytes_of(data), |r| r.write_elems(addr, data))
    }

    /// Reads `out.len()` elements from `addr` (a multiple of the element's size) on, inside
    /// one range: see [`DeviceMemory::read_elems`].
    pub fn read_elems<T: Element>(&self, addr: u64, out: &mut [T]) -> Result<(), MemoryError> {
        self.reading(addr, bytes_of(out), |r| r.read_elems(addr, out))
    }

    /// Writes `data` from `addr` (any alignment) on, inside one range: see
    /// [`DeviceMemory::write_bytes`].
    pub fn write_bytes(&self, addr: u64, data: &[u8]) -> Result<(), MemoryError> {
        self.writing(addr, data.len(), |r| r.write_bytes(addr, data))
    }

    /// Reads `out.len()` values from `addr` (any alignment) on, inside one range: see
    /// [`DeviceMemory::read_bytes`].
    pub fn read_bytes(&self, addr: u64, out: &mut [u8]) -> Result<(), MemoryError> {
        self.reading(addr, out.len(), |r| r.read_bytes(addr, out))
    }

    /// Writes `data` from `addr` (2-aligned) on, inside one range: see
    /// [`DeviceMemory::write_f16s`].
    pub fn write_f16s(&self, addr: u64, data: &[f16]) -> Result<(), MemoryError> {
        self.writing(addr, bytes_of(data), |r| r.write_f16s(addr, data))
    }

    /// Reads `out.len()` values from `addr` (2-aligned) on, inside one range: see
    /// [`DeviceMemory::read_f16s`].
    pub fn read_f16s(&self, addr: u64, out: &mut [f16]) -> Result<(), MemoryError> {
        self.reading(addr, bytes_of(out), |r| r.read_f16s(addr, out))
    }

    /// Writes `data` from `addr` (2-aligned) on, inside one range: see
    /// [`DeviceMemory::write_bf16s`].
    pub fn write_bf16s(&self, addr: u64, data: &[bf16]) -> Result<(), MemoryError> {
        self.writing(addr, bytes_of(data), |r| r.write_bf16s(addr, data))
    }

    /// Reads `out.len()` values from `addr` (2-aligned) on, inside one range: see
    /// [`DeviceMemory::read_bf16s`].
    pub fn read_bf16s(&self, addr: u64, out: &mut [bf16]) -> Result<(), MemoryError> {
        self.reading(addr, bytes_of(out), |r| r.read_bf16s(addr, out))
    }

    /// Writes `data` from `addr` (4-aligned) on, inside one range: see
    /// [`DeviceMemory::write_u32s`].
    pub fn write_u32s(&self, addr: u64, data: &[u32]) -> Result<(), MemoryError> {
        self.writing(addr, bytes_of(data), |r| r.write_u32s(addr, data))
    }

    /// Reads `out.len()` values from `addr` (4-aligned) on, inside one range: see
    /// [`DeviceMemory::read_u32s`].
    pub fn read_u32s(&self, addr: u64, out: &mut [u32]) -> Result<(), MemoryError> {
        self.reading(addr, bytes_of(out), |r| r.read_u32s(addr, out))
    }

    /// Writes `data` from `addr` (4-aligned) on, inside one range: see
    /// [`DeviceMemory::write_f32s`].
    pub fn write_f32s(&self, addr: u64, data: &[f32]) -> Result<(), MemoryError> {
        self.writing(addr, bytes_of(data), |r| r.write_f32s(addr, data))
    }

    /// Reads `out.len()` values from `addr` (4-aligned) on, inside one range: see
    /// [`DeviceMemory::read_f32s`].
    pub fn read_f32s(&self, addr: u64, out: &mut [f32]) -> Result<(), MemoryError> {
        self.reading(addr, bytes_of(out), |r| r.read_f32s(addr, out))
    }

    /// Writes `data` from `addr` (8-aligned) on, inside one range: see
    /// [`DeviceMemory::write_u64s`].
    pub fn write_u64s(&self, addr: u64, data: &[u64]) -> Result<(), MemoryError> {
        self.writing(addr, bytes_of(data), |r| r.write_u64s(addr, data))
    }

    /// Reads `out.len()` values from `addr` (8-aligned) on, inside one range: see
    /// [`DeviceMemory::read_u64s`].
    pub fn read_u64s(&self, addr: u64, out: &mut [u64]) -> Result<(), MemoryError> {
        self.reading(addr, bytes_of(out), |r| r.read_u64s(addr, out))
    }

    /// Writes `data` from `addr` (8-aligned) on, inside one range: see
    /// [`DeviceMemory::write_f64s`].
    pub fn write_f64s(&self, addr: u64, data: &[f64]) -> Result<(), MemoryError> {
        self.writing(addr, bytes_of(data), |r| r.write_f64s(addr, data))
    }

    /// Reads `out.len()` values from `addr` (8-aligned) on, inside one range: see
    /// [`DeviceMemory::read_f64s`].
    pub fn read_f64s(&self, addr: u64, out: &mut [f64]) -> Result<(), MemoryError> {
        self.reading(addr, bytes_of(out), |r| r.read_f64s(addr, out))
    }

    /// Copies `words` words from `src` to `dst`, which may lie in different ranges (then
    /// through a bounce buffer of 64 words at a time). One read of the source and one write
    /// of the destination, each of `8 * words` bytes.
    pub fn copy(&self, src: u64, dst: u64, words: usize) -> Result<(), MemoryError> {
        let len = words.checked_mul(8).ok_or(MemoryError::OutOfRange {
            addr: src,
            len: usize::MAX,
        })?;
        self.writing(dst, len, |to| {
            self.reading(src, len, |from| {
                if std::ptr::eq(from, to) {
                    return from.copy(src, dst, words);
                }
                let mut buf = [0u64; 64];
                let mut done = 0;
                while done < words {
                    let n = (words - done).min(buf.len());
                    from.read(src + done as u64 * 8, &mut buf[..n])?;
                    to.write(dst + done as u64 * 8, &buf[..n])?;
                    done += n;
                }
                Ok(())
            })
        })
    }

    /// The one read path: every read of the map (a word, a slice, a copy's source) finds the
    /// range holding `addr..addr + len` here and reads it with `read`. Once `read` has
    /// succeeded, a data read (`word` false: not an atomic word, which is synchronisation)
    /// is logged for the access check when the map logs.
    fn read_path<T>(
        &self,
        addr: u64,
        len: usize,
        word: bool,
        read: impl FnOnce(&DeviceMemory) -> Result<T, MemoryError>,
    ) -> Result<T, MemoryError> {
        let value = read(self.range(addr, len)?)?;
        #[cfg(test)]
        tests::saw(addr, len, false);
        if self.logs && !word {
            crate::access_check::record(addr, len, false);
        }
        Ok(value)
    }

    /// The one write path: every write of the map (a store, an atomic add, a slice, a copy's
    /// destination) finds the range holding `addr..addr + len` here and writes it with
    /// `write`; a data write is logged as [`MemoryMap::read_path`] logs a read.
    fn write_path<T>(
        &self,
        addr: u64,
        len: usize,
        word: bool,
        write: impl FnOnce(&DeviceMemory) -> Result<T, MemoryError>,
    ) -> Result<T, MemoryError> {
        let value = write(self.range(addr, len)?)?;
        #[cfg(test)]
        tests::saw(addr, len, true);
        if self.logs && !word {
            crate::access_check::record(addr, len, true);
        }
        Ok(value)
    }

    /// A data read: see [`MemoryMap::read_path`].
    fn reading<T>(
        &self,
        addr: u64,
        len: usize,
        read: impl FnOnce(&DeviceMemory) -> Result<T, MemoryError>,
    ) -> Result<T, MemoryError> {
        self.read_path(addr, len, false, read)
    }

    /// A data write: see [`MemoryMap::write_path`].
    fn writing<T>(
        &self,
        addr: u64,
        len: usize,
        write: impl FnOnce(&DeviceMemory) -> Result<T, MemoryError>,
    ) -> Result<T, MemoryError> {
        self.write_path(addr, len, false, write)
    }

    /// An atomic word's read (synchronisation: never logged).
    fn reading_word<T>(
        &self,
        addr: u64,
        len: usize,
        read: impl FnOnce(&DeviceMemory) -> Result<T, MemoryError>,
    ) -> Result<T, MemoryError> {
        self.read_path(addr, len, true, read)
    }

    /// An atomic word's write (synchronisation: never logged).
    fn writing_word<T>(
        &self,
        addr: u64,
        len: usize,
        write: impl FnOnce(&DeviceMemory) -> Result<T, MemoryError>,
    ) -> Result<T, MemoryError> {
        self.write_path(addr, len, true, write)
    }

    /// Whether data accesses are logged for the access check.
    pub(crate) fn logs(&self) -> bool {
        self.logs
    }

    /// Logs every data access of the kernels that run on this map for the access check
    /// ([`crate::SimOptions::check_accesses`]).
    pub(crate) fn log_accesses(&mut self) {
        self.logs = true;
    }

    /// Checks that `addr..addr + len` is inside one range and `addr` is `align`-aligned.
    pub(crate) fn check(&self, addr: u64, len: usize, align: usize) -> Result<(), MemoryError> {
        self.range(addr, len)
            .and_then(|r| r.check(addr, len, align))
    }
}

#[cfg(test)]
mod tests;
