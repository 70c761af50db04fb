//! Every memory the simulated machine can address: its own device memory, and ranges that
//! live elsewhere (the communication windows of a multi-rank job, mapped from shared memory).
//! Each access goes to the one range that holds it; a copy may cross ranges.

use std::sync::Arc;

use pto_runtime_core::Buffer;

use crate::memory::{DeviceMemory, MemoryError};

/// The machine's address space: disjoint ranges, its own memory first.
///
/// Kernels reach it through [`crate::KernelCtx::memory`]; besides 32- and 64-bit words
/// (atomic, ordered) it reads and writes slices of bytes, `u32`, `f32`, `u64` and `f64`:
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
        Ok(MemoryMap { ranges })
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
        self.range(addr, 4)?.load32(addr)
    }

    /// See [`DeviceMemory::load64`].
    pub fn load64(&self, addr: u64) -> Result<u64, MemoryError> {
        self.range(addr, 8)?.load64(addr)
    }

    /// See [`DeviceMemory::store32`].
    pub fn store32(&self, addr: u64, v: u32) -> Result<(), MemoryError> {
        self.range(addr, 4)?.store32(addr, v)
    }

    /// See [`DeviceMemory::store64`].
    pub fn store64(&self, addr: u64, v: u64) -> Result<(), MemoryError> {
        self.range(addr, 8)?.store64(addr, v)
    }

    /// See [`DeviceMemory::add32`].
    pub fn add32(&self, addr: u64, delta: u32) -> Result<u32, MemoryError> {
        self.range(addr, 4)?.add32(addr, delta)
    }

    /// See [`DeviceMemory::add64`].
    pub fn add64(&self, addr: u64, delta: u64) -> Result<u64, MemoryError> {
        self.range(addr, 8)?.add64(addr, delta)
    }

    /// See [`DeviceMemory::write`].
    pub fn write(&self, addr: u64, data: &[u64]) -> Result<(), MemoryError> {
        self.range(addr, data.len() * 8)?.write(addr, data)
    }

    /// See [`DeviceMemory::read`].
    pub fn read(&self, addr: u64, out: &mut [u64]) -> Result<(), MemoryError> {
        self.range(addr, out.len() * 8)?.read(addr, out)
    }

    /// Writes `data` from `addr` (any alignment) on, inside one range: see
    /// [`DeviceMemory::write_bytes`].
    pub fn write_bytes(&self, addr: u64, data: &[u8]) -> Result<(), MemoryError> {
        self.range(addr, data.len())?.write_bytes(addr, data)
    }

    /// Reads `out.len()` values from `addr` (any alignment) on, inside one range: see
    /// [`DeviceMemory::read_bytes`].
    pub fn read_bytes(&self, addr: u64, out: &mut [u8]) -> Result<(), MemoryError> {
        self.range(addr, out.len())?.read_bytes(addr, out)
    }

    /// Writes `data` from `addr` (4-aligned) on, inside one range: see
    /// [`DeviceMemory::write_u32s`].
    pub fn write_u32s(&self, addr: u64, data: &[u32]) -> Result<(), MemoryError> {
        self.range(addr, data.len().saturating_mul(4))?
            .write_u32s(addr, data)
    }

    /// Reads `out.len()` values from `addr` (4-aligned) on, inside one range: see
    /// [`DeviceMemory::read_u32s`].
    pub fn read_u32s(&self, addr: u64, out: &mut [u32]) -> Result<(), MemoryError> {
        self.range(addr, out.len().saturating_mul(4))?
            .read_u32s(addr, out)
    }

    /// Writes `data` from `addr` (4-aligned) on, inside one range: see
    /// [`DeviceMemory::write_f32s`].
    pub fn write_f32s(&self, addr: u64, data: &[f32]) -> Result<(), MemoryError> {
        self.range(addr, data.len().saturating_mul(4))?
            .write_f32s(addr, data)
    }

    /// Reads `out.len()` values from `addr` (4-aligned) on, inside one range: see
    /// [`DeviceMemory::read_f32s`].
    pub fn read_f32s(&self, addr: u64, out: &mut [f32]) -> Result<(), MemoryError> {
        self.range(addr, out.len().saturating_mul(4))?
            .read_f32s(addr, out)
    }

    /// Writes `data` from `addr` (8-aligned) on, inside one range: see
    /// [`DeviceMemory::write_u64s`].
    pub fn write_u64s(&self, addr: u64, data: &[u64]) -> Result<(), MemoryError> {
        self.range(addr, data.len().saturating_mul(8))?
            .write_u64s(addr, data)
    }

    /// Reads `out.len()` values from `addr` (8-aligned) on, inside one range: see
    /// [`DeviceMemory::read_u64s`].
    pub fn read_u64s(&self, addr: u64, out: &mut [u64]) -> Result<(), MemoryError> {
        self.range(addr, out.len().saturating_mul(8))?
            .read_u64s(addr, out)
    }

    /// Writes `data` from `addr` (8-aligned) on, inside one range: see
    /// [`DeviceMemory::write_f64s`].
    pub fn write_f64s(&self, addr: u64, data: &[f64]) -> Result<(), MemoryError> {
        self.range(addr, data.len().saturating_mul(8))?
            .write_f64s(addr, data)
    }

    /// Reads `out.len()` values from `addr` (8-aligned) on, inside one range: see
    /// [`DeviceMemory::read_f64s`].
    pub fn read_f64s(&self, addr: u64, out: &mut [f64]) -> Result<(), MemoryError> {
        self.range(addr, out.len().saturating_mul(8))?
            .read_f64s(addr, out)
    }

    /// Copies `words` words from `src` to `dst`, which may lie in different ranges (then
    /// through a bounce buffer of 64 words at a time).
    pub fn copy(&self, src: u64, dst: u64, words: usize) -> Result<(), MemoryError> {
        let len = words.checked_mul(8).ok_or(MemoryError::OutOfRange {
            addr: src,
            len: usize::MAX,
        })?;
        let (from, to) = (self.range(src, len)?, self.range(dst, len)?);
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
    }

    /// Checks that `addr..addr + len` is inside one range and `addr` is `align`-aligned.
    pub(crate) fn check(&self, addr: u64, len: usize, align: usize) -> Result<(), MemoryError> {
        self.range(addr, len)
            .and_then(|r| r.check(addr, len, align))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::SharedWords;
    use std::sync::atomic::AtomicU64;

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
}
