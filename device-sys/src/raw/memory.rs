//! Reads of the device words the scheduler watches (deferred counters, engine watermarks):
//! only inside ranges the AICPU was told are mapped, only naturally aligned, always one
//! volatile access.

use core::marker::PhantomData;
use core::ptr::NonNull;

use volatile::VolatilePtr;

/// A range of device memory: first byte and length.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemRange {
    /// First byte.
    pub base: u64,
    /// Bytes.
    pub len: u64,
}

/// Device memory the scheduler may read watched words from.
#[derive(Clone, Copy, Debug)]
pub struct WatchedMemory<'a> {
    ranges: &'a [MemRange],
}

impl<'a> WatchedMemory<'a> {
    /// Nothing is readable.
    pub const NONE: WatchedMemory<'static> = WatchedMemory { ranges: &[] };

    /// The ranges, readable by address.
    ///
    /// # Safety
    /// Every range is mapped in this address space and valid for reads for `'a` (device
    /// memory, communication windows); other agents write its words with single aligned
    /// stores or atomics.
    pub unsafe fn new(ranges: &'a [MemRange]) -> Self {
        WatchedMemory { ranges }
    }

    fn covers(&self, addr: u64, width: u64) -> bool {
        addr.is_multiple_of(width)
            && self.ranges.iter().any(|r| {
                addr >= r.base
                    && addr
                        .checked_add(width)
                        .is_some_and(|end| end <= r.base + r.len)
            })
    }

    /// The 32-bit word at `addr`, if it is aligned and inside a range.
    pub fn read_u32(&self, addr: u64) -> Option<u32> {
        if !self.covers(addr, 4) {
            return None;
        }
        let p = NonNull::new(addr as usize as *mut u32)?;
        // SAFETY: `addr` is aligned and inside a range `new` was promised is mapped and
        // readable.
        Some(unsafe { VolatilePtr::new(p).read() })
    }

    /// The 64-bit word at `addr`, if it is aligned and inside a range.
    pub fn read_u64(&self, addr: u64) -> Option<u64> {
        if !self.covers(addr, 8) {
            return None;
        }
        let p = NonNull::new(addr as usize as *mut u64)?;
        // SAFETY: as for `read_u32`.
        Some(unsafe { VolatilePtr::new(p).read() })
    }
}

/// The completion watermarks of the DMA/RDMA engines: one 64-bit word per engine, which
/// the engine (or its driver) raises as posts complete.
#[derive(Clone, Copy, Debug)]
pub struct EngineWords<'a> {
    base: Option<NonNull<u64>>,
    count: usize,
    _words: PhantomData<&'a u64>,
}

// SAFETY: the words are read with single volatile loads only; sharing the handle between
// threads adds nothing to what the engines' protocol already expects.
unsafe impl Send for EngineWords<'_> {}
// SAFETY: as above.
unsafe impl Sync for EngineWords<'_> {}

impl<'a> EngineWords<'a> {
    /// No engines.
    pub const NONE: EngineWords<'static> = EngineWords {
        base: None,
        count: 0,
        _words: PhantomData,
    };

    /// `count` watermark words at `base`.
    ///
    /// # Safety
    /// `base` points to `count` aligned `u64`s, mapped and valid for reads for `'a`, that
    /// other agents write with single aligned stores.
    pub unsafe fn new(base: NonNull<u64>, count: usize) -> Self {
        EngineWords {
            base: Some(base),
            count,
            _words: PhantomData,
        }
    }

    /// Engines.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The watermark of engine `e`.
    pub fn read(&self, e: usize) -> Option<u64> {
        let base = self.base?;
        if e >= self.count {
            return None;
        }
        // SAFETY: `e < count`, inside the words `new` was given.
        Some(unsafe { VolatilePtr::new(base.add(e)).read() })
    }
}
