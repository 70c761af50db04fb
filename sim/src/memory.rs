//! Simulated device memory: synthetic device addresses backed by 8-byte atomic cells.
//!
//! Every access goes through the `AtomicU64` of the cell that holds it: a 32-bit word at a
//! 4-aligned address `a` is the low half (`a % 8 == 0`) or the high half (`a % 8 == 4`) of its
//! little-endian cell, so there are no mixed-size atomics and no unsafe. Counters in simulated
//! memory are plain wrapping integers, as on the device.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use pto_runtime_core::Buffer;

/// Alignment of the base address of every [`DeviceMemory`].
const BASE_ALIGN: u64 = 64;
/// Bytes in one cell.
const CELL: u64 = 8;

/// Why an access to simulated device memory was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum MemoryError {
    /// The range `addr..addr + len` is not inside the memory.
    #[error("device range {addr:#x}+{len} bytes lies outside the simulated memory")]
    OutOfRange {
        /// First device address of the range.
        addr: u64,
        /// Bytes in the range.
        len: usize,
    },
    /// `addr` is not a multiple of `align` (for [`DeviceMemory::alloc`], `align` itself is not
    /// a power of two and `addr` is 0).
    #[error("device address {addr:#x} is not {align}-byte aligned")]
    Misaligned {
        /// The device address.
        addr: u64,
        /// The alignment the access needs.
        align: usize,
    },
    /// The host refused the `bytes` bytes that would hold the memory.
    #[error("the host cannot allocate {bytes} bytes of simulated device memory")]
    HostAlloc {
        /// Bytes asked for.
        bytes: u64,
    },
    /// The bump allocator cannot fit `bytes` more bytes; `left` remain past its cursor.
    #[error(
        "simulated device memory is exhausted: asked for {bytes} bytes, {left} left; make it larger"
    )]
    Exhausted {
        /// Bytes asked for.
        bytes: usize,
        /// Bytes left past the allocation cursor.
        left: usize,
    },
}

/// Words that live elsewhere (a communication window mapped from shared memory) and that a
/// [`DeviceMemory`] can stand for.
pub trait SharedWords: Send + Sync {
    /// The words, for as long as `self` lives.
    fn words(&self) -> &[AtomicU64];
}

/// Cells whose first one starts at a 64-byte aligned host address, for
/// [`DeviceMemory::host_addressed`].
struct HostCells {
    store: Box<[AtomicU64]>,
    first: usize,
    len: usize,
}

impl HostCells {
    /// The `len` cells of `store` from its first 64-byte aligned one (`store` has room).
    fn new(store: Box<[AtomicU64]>, len: usize) -> Self {
        let at = store.as_ptr() as u64;
        let first = (at.next_multiple_of(BASE_ALIGN) - at) as usize / CELL as usize;
        HostCells { store, first, len }
    }

    /// The host address of the first cell.
    fn address(&self) -> u64 {
        self.words().as_ptr() as u64
    }
}

impl SharedWords for HostCells {
    fn words(&self) -> &[AtomicU64] {
        &self.store[self.first..self.first + self.len]
    }
}

enum Words {
    Owned(Box<[AtomicU64]>),
    Shared(Arc<dyn SharedWords>),
}

/// Simulated device memory at device addresses `base..base+len`, stored as 8-byte atomic
/// words: zeroed memory of its own, or words that live elsewhere ([`DeviceMemory::shared`]).
pub struct DeviceMemory {
    base: u64,
    words: Words,
    /// Allocation cursor: bytes from `base` handed out by [`DeviceMemory::alloc`].
    bump: AtomicU64,
}

impl DeviceMemory {
    /// Zeroed memory of `bytes` bytes (rounded up to a multiple of 8) at `base` (rounded up to
    /// a multiple of 64). A region that would run past the end of the 64-bit address space is
    /// cut short at it. [`MemoryError::HostAlloc`] if the host cannot give that much (the
    /// pages are zeroed by the OS as they are first touched, so a large memory costs nothing
    /// until used).
    pub fn new(base: u64, bytes: usize) -> Result<Self, MemoryError> {
        let base = base
            .checked_next_multiple_of(BASE_ALIGN)
            .unwrap_or(u64::MAX - (BASE_ALIGN - 1));
        let room = (u64::MAX - base) / CELL;
        let cells = (bytes.div_ceil(CELL as usize) as u64).min(room) as usize;
        let words =
            bytemuck::allocation::try_zeroed_slice_box::<AtomicU64>(cells).map_err(|()| {
                MemoryError::HostAlloc {
                    bytes: cells as u64 * CELL,
                }
            })?;
        Ok(DeviceMemory {
            base,
            words: Words::Owned(words),
            bump: AtomicU64::new(0),
        })
    }

    /// Memory whose words live in `words` (a communication window, say), at device address
    /// `base` (a multiple of 8: the address this process sees them at). Nothing is allocated
    /// from it ([`DeviceMemory::alloc`] reports it exhausted).
    pub fn shared(base: u64, words: Arc<dyn SharedWords>) -> Result<Self, MemoryError> {
        if !base.is_multiple_of(CELL) {
            return Err(MemoryError::Misaligned {
                addr: base,
                align: CELL as usize,
            });
        }
        let len = words.words().len() as u64 * CELL;
        if base.checked_add(len).is_none() {
            return Err(MemoryError::OutOfRange {
                addr: base,
                len: len as usize,
            });
        }
        Ok(DeviceMemory {
            base,
            words: Words::Shared(words),
            bump: AtomicU64::new(len),
        })
    }

    /// Zeroed memory of `bytes` bytes (rounded up to a multiple of 8) whose device addresses
    /// are the host addresses of its own storage (64-byte aligned), so code that dereferences
    /// a device address directly, such as a C kernel of the device ABI running in this
    /// process, reaches the same bytes the simulator's atomics do.
    /// [`MemoryError::HostAlloc`] if the host cannot give that much.
    pub fn host_addressed(bytes: usize) -> Result<Self, MemoryError> {
        let cells = bytes.div_ceil(CELL as usize);
        let spare = (BASE_ALIGN / CELL) as usize - 1;
        let store = cells
            .checked_add(spare)
            .and_then(|n| bytemuck::allocation::try_zeroed_slice_box::<AtomicU64>(n).ok())
            .ok_or(MemoryError::HostAlloc {
                bytes: cells as u64 * CELL,
            })?;
        let host = HostCells::new(store, cells);
        Ok(DeviceMemory {
            base: host.address(),
            words: Words::Shared(Arc::new(host)),
            bump: AtomicU64::new(0),
        })
    }

    /// The cells, for the bulk accessors.
    pub(crate) fn cell_slice(&self) -> &[AtomicU64] {
        self.words()
    }

    fn words(&self) -> &[AtomicU64] {
        match &self.words {
            Words::Owned(w) => w,
            Words::Shared(w) => w.words(),
        }
    }

    /// The first device address (a multiple of 64).
    pub fn base(&self) -> u64 {
        self.base
    }

    /// Size in bytes (a multiple of 8).
    pub fn len(&self) -> usize {
        self.words().len() * CELL as usize
    }

    /// Whether the memory has no bytes at all.
    pub fn is_empty(&self) -> bool {
        self.words().is_empty()
    }

    /// Whether `addr..addr + len` lies inside the memory (an empty range may sit at its end).
    pub fn contains(&self, addr: u64, len: usize) -> bool {
        addr.checked_sub(self.base)
            .and_then(|off| off.checked_add(len as u64))
            .is_some_and(|end| end <= self.len() as u64)
    }

    /// Takes `bytes` bytes (at least 8, rounded up to a multiple of 8) aligned to `align` (a
    /// power of two; below 8 counts as 8) from the lock-free bump allocator, zeroes them and
    /// returns their address. Memory is never given back.
    pub fn alloc(&self, bytes: usize, align: usize) -> Result<u64, MemoryError> {
        if !align.is_power_of_two() {
            return Err(MemoryError::Misaligned { addr: 0, align });
        }
        let align = align.max(CELL as usize) as u64;
        let size = (bytes.max(1) as u64).div_ceil(CELL) * CELL;
        let len = self.len() as u64;
        let mut cur = self.bump.load(Ordering::Relaxed);
        loop {
            let exhausted = MemoryError::Exhausted {
                bytes,
                left: (len - cur) as usize,
            };
            let start = (self.base + cur)
                .checked_next_multiple_of(align)
                .ok_or(exhausted)?
                - self.base;
            let end = start
                .checked_add(size)
                .filter(|&end| end <= len)
                .ok_or(exhausted)?;
            // Relaxed: the cursor publishes no data; the winner zeroes its range itself.
            match self
                .bump
                .compare_exchange_weak(cur, end, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => {
                    let cells = (start / CELL) as usize..(end / CELL) as usize;
                    for w in &self.words()[cells] {
                        w.store(0, Ordering::Relaxed);
                    }
                    return Ok(self.base + start);
                }
                Err(now) => cur = now,
            }
        }
    }

    /// [`DeviceMemory::alloc`] as a [`Buffer`] of `bytes` bytes: what tensor arguments name.
    pub fn alloc_buffer(&self, bytes: usize, align: usize) -> Result<Buffer, MemoryError> {
        Ok(Buffer::new(self.alloc(bytes, align)?, bytes as u64))
    }

    /// The 32-bit word at `addr` (4-aligned). Acquire.
    pub fn load32(&self, addr: u64) -> Result<u32, MemoryError> {
        let (cell, shift) = self.half(addr)?;
        Ok((cell.load(Ordering::Acquire) >> shift) as u32)
    }

    /// The 64-bit word at `addr` (8-aligned). Acquire.
    pub fn load64(&self, addr: u64) -> Result<u64, MemoryError> {
        Ok(self.cell(addr)?.load(Ordering::Acquire))
    }

    /// Stores `v` at `addr` (4-aligned), leaving the other half of its cell as it is. Release.
    pub fn store32(&self, addr: u64, v: u32) -> Result<(), MemoryError> {
        let (cell, shift) = self.half(addr)?;
        update_half(cell, shift, Ordering::Release, |_| v);
        Ok(())
    }

    /// Stores `v` at `addr` (8-aligned). Release.
    pub fn store64(&self, addr: u64, v: u64) -> Result<(), MemoryError> {
        self.cell(addr)?.store(v, Ordering::Release);
        Ok(())
    }

    /// Adds `delta` (wrapping) to the 32-bit word at `addr` (4-aligned) and returns the new
    /// value. AcqRel; never carries into the other half of the cell.
    pub fn add32(&self, addr: u64, delta: u32) -> Result<u32, MemoryError> {
        let (cell, shift) = self.half(addr)?;
        let old = update_half(cell, shift, Ordering::AcqRel, |h| h.wrapping_add(delta));
        Ok(old.wrapping_add(delta))
    }

    /// Adds `delta` (wrapping) to the 64-bit word at `addr` (8-aligned) and returns the new
    /// value. AcqRel.
    pub fn add64(&self, addr: u64, delta: u64) -> Result<u64, MemoryError> {
        let old = self.cell(addr)?.fetch_add(delta, Ordering::AcqRel);
        Ok(old.wrapping_add(delta))
    }

    /// Writes `data` from `addr` (8-aligned) on, one Relaxed store per word.
    pub fn write(&self, addr: u64, data: &[u64]) -> Result<(), MemoryError> {
        let cells = self.cells(addr, data.len())?;
        for (w, &v) in cells.iter().zip(data) {
            w.store(v, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Reads `out.len()` words from `addr` (8-aligned) on, one Relaxed load per word.
    pub fn read(&self, addr: u64, out: &mut [u64]) -> Result<(), MemoryError> {
        let cells = self.cells(addr, out.len())?;
        for (v, w) in out.iter_mut().zip(cells) {
            *v = w.load(Ordering::Relaxed);
        }
        Ok(())
    }

    /// Copies `words` words from `src` to `dst` (both 8-aligned), word by word with Relaxed
    /// accesses. The ranges may overlap: the result is that of `memmove`.
    pub fn copy(&self, src: u64, dst: u64, words: usize) -> Result<(), MemoryError> {
        let from = self.cells(src, words)?;
        let to = self.cells(dst, words)?;
        let step = |(t, f): (&AtomicU64, &AtomicU64)| {
            t.store(f.load(Ordering::Relaxed), Ordering::Relaxed)
        };
        if dst <= src {
            to.iter().zip(from).for_each(step);
        } else {
            to.iter().zip(from).rev().for_each(step);
        }
        Ok(())
    }

    /// Checks that `addr..addr + len` is inside the memory and `addr` is `align`-aligned.
    pub(crate) fn check(&self, addr: u64, len: usize, align: usize) -> Result<(), MemoryError> {
        if !addr.is_multiple_of(align as u64) {
            return Err(MemoryError::Misaligned { addr, align });
        }
        if !self.contains(addr, len) {
            return Err(MemoryError::OutOfRange { addr, len });
        }
        Ok(())
    }

    /// The cells of the `words` words from `addr` on.
    pub(crate) fn cells(&self, addr: u64, words: usize) -> Result<&[AtomicU64], MemoryError> {
        let len = words
            .checked_mul(CELL as usize)
            .ok_or(MemoryError::OutOfRange {
                addr,
                len: usize::MAX,
            })?;
        self.check(addr, len, CELL as usize)?;
        let first = ((addr - self.base) / CELL) as usize;
        Ok(&self.words()[first..first + words])
    }

    /// The cell of the 64-bit word at `addr`.
    fn cell(&self, addr: u64) -> Result<&AtomicU64, MemoryError> {
        Ok(&self.cells(addr, 1)?[0])
    }

    /// The cell holding the 32-bit word at `addr`, and the word's shift within it (0 or 32).
    fn half(&self, addr: u64) -> Result<(&AtomicU64, u32), MemoryError> {
        self.check(addr, 4, 4)?;
        let off = addr - self.base;
        let shift = if off.is_multiple_of(CELL) { 0 } else { 32 };
        Ok((&self.words()[(off / CELL) as usize], shift))
    }
}

impl std::fmt::Debug for DeviceMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceMemory")
            .field("base", &format_args!("{:#x}", self.base))
            .field("len", &self.len())
            .field("allocated", &self.bump.load(Ordering::Relaxed))
            .finish()
    }
}

/// Replaces the 32-bit half of `cell` at `shift` with `f(half)` in one atomic step (ordering
/// `order` on success) and returns the old half.
fn update_half(cell: &AtomicU64, shift: u32, order: Ordering, f: impl Fn(u32) -> u32) -> u32 {
    let mask = 0xffff_ffffu64 << shift;
    let replace = |w: u64| {
        let half = f((w >> shift) as u32);
        (w & !mask) | (half as u64) << shift
    };
    let fetch = match order {
        Ordering::Release | Ordering::Relaxed => Ordering::Relaxed,
        _ => Ordering::Acquire,
    };
    // The closure always returns `Some`, so both arms hold the previous cell value.
    let old = match cell.fetch_update(order, fetch, |w| Some(replace(w))) {
        Ok(w) | Err(w) => w,
    };
    (old >> shift) as u32
}

#[cfg(test)]
mod tests;
