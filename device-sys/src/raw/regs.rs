//! Volatile access to the cores' register blocks ([`crate::block`]). The blocks are shared
//! with agents the compiler cannot see (the AICore cores), so every access is a volatile
//! read or write of one naturally aligned word, and no Rust reference to a block is ever
//! made. Ordering between accesses is the caller's, through [`super::arch`] barriers.

use core::marker::PhantomData;
use core::ptr::NonNull;

use volatile::VolatilePtr;

use crate::block::{CONDITIONS_PER_LANE, CoreBlock, PayloadSlot, RawCondition, SLOT_ARGS};

/// Reads `*p` with one volatile access.
///
/// # Safety
/// `p` is non-null, aligned and valid for reads.
#[inline]
unsafe fn rd<T: Copy>(p: *mut T) -> T {
    // SAFETY: the caller's contract; `VolatilePtr` does not create a reference.
    unsafe { VolatilePtr::new(NonNull::new_unchecked(p)).read() }
}

/// Writes `*p = v` with one volatile access.
///
/// # Safety
/// `p` is non-null, aligned and valid for writes.
#[inline]
unsafe fn wr<T: Copy>(p: *mut T, v: T) {
    // SAFETY: the caller's contract; `VolatilePtr` does not create a reference.
    unsafe { VolatilePtr::new(NonNull::new_unchecked(p)).write(v) }
}

/// The register blocks of every core, from the base the AICPU was handed at init.
#[derive(Clone, Copy, Debug)]
pub struct CoreBlocks<'a> {
    base: NonNull<CoreBlock>,
    count: usize,
    _blocks: PhantomData<&'a CoreBlock>,
}

// SAFETY: the blocks are device registers shared with other agents by design; every access
// through this type is a single volatile word access, so sharing the handle between threads
// adds no access the protocol does not already expect.
unsafe impl Send for CoreBlocks<'_> {}
// SAFETY: as above.
unsafe impl Sync for CoreBlocks<'_> {}

impl<'a> CoreBlocks<'a> {
    /// The `count` blocks at `base`.
    ///
    /// # Safety
    /// `base` points to `count` consecutive [`CoreBlock`]s, aligned, mapped, and valid for
    /// reads and writes for `'a`; nothing else accesses them except through single volatile
    /// (or atomic) word accesses, as the register protocol does.
    pub unsafe fn new(base: NonNull<CoreBlock>, count: usize) -> Self {
        CoreBlocks {
            base,
            count,
            _blocks: PhantomData,
        }
    }

    /// Cores.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether there are no cores.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The registers of core `i`.
    pub fn core(&self, i: usize) -> Option<CoreRegs<'a>> {
        (i < self.count).then(|| CoreRegs {
            // SAFETY: `i < count`, so the offset stays inside the blocks `new` was given.
            block: unsafe { self.base.add(i) },
            _blocks: PhantomData,
        })
    }
}

/// The registers of one core.
#[derive(Clone, Copy, Debug)]
pub struct CoreRegs<'a> {
    block: NonNull<CoreBlock>,
    _blocks: PhantomData<&'a CoreBlock>,
}

// SAFETY: as for `CoreBlocks`.
unsafe impl Send for CoreRegs<'_> {}
// SAFETY: as for `CoreBlocks`.
unsafe impl Sync for CoreRegs<'_> {}

impl CoreRegs<'_> {
    fn slot(&self, parity: usize) -> *mut PayloadSlot {
        // SAFETY: `block` is valid (`CoreBlocks::new`), `parity & 1` indexes the two slots,
        // and `&raw mut` makes no reference.
        unsafe { &raw mut (*self.block.as_ptr()).payload[parity & 1] }
    }

    /// Fills payload slot `parity` (all but the doorbell); at most [`SLOT_ARGS`] arguments
    /// are written.
    pub fn write_payload(&self, parity: usize, task: u64, kernel: u32, shape: u32, args: &[u64]) {
        let s = self.slot(parity);
        // SAFETY: every pointer is a field of a valid slot; the index is bounded by `take`.
        unsafe {
            wr(&raw mut (*s).task, task);
            wr(&raw mut (*s).kernel, kernel);
            wr(&raw mut (*s).shape, shape);
            for (i, &a) in args.iter().take(SLOT_ARGS).enumerate() {
                wr(&raw mut (*s).args[i], a);
            }
        }
    }

    /// Writes `token` into the doorbell of slot `parity`.
    pub fn ring(&self, parity: usize, token: u32) {
        // SAFETY: a field of a valid slot.
        unsafe { wr(&raw mut (*self.slot(parity)).doorbell, token) }
    }

    /// The doorbell of slot `parity`.
    pub fn doorbell(&self, parity: usize) -> u32 {
        // SAFETY: a field of a valid slot.
        unsafe { rd(&raw mut (*self.slot(parity)).doorbell) }
    }

    /// Slot `parity`'s task, kernel and shape, with its arguments copied into `args`.
    pub fn read_payload(&self, parity: usize, args: &mut [u64; SLOT_ARGS]) -> (u64, u32, u32) {
        let s = self.slot(parity);
        // SAFETY: fields of a valid slot; `n` is bounded by `SLOT_ARGS`.
        unsafe {
            let shape = rd(&raw mut (*s).shape);
            let n = (((shape >> 16) & 0xff) as usize).min(SLOT_ARGS);
            for (i, a) in args.iter_mut().take(n).enumerate() {
                *a = rd(&raw mut (*s).args[i]);
            }
            (rd(&raw mut (*s).task), rd(&raw mut (*s).kernel), shape)
        }
    }

    /// Slot `parity`'s shape word (`lane | lanes << 8 | nargs << 16 | profile << 24`).
    pub fn shape(&self, parity: usize) -> u32 {
        // SAFETY: a field of a valid slot.
        unsafe { rd(&raw mut (*self.slot(parity)).shape) }
    }

    /// The status word.
    pub fn status(&self) -> u32 {
        // SAFETY: a field of a valid block.
        unsafe { rd(&raw mut (*self.block.as_ptr()).status.word) }
    }

    /// Writes the status word.
    pub fn set_status(&self, word: u32) {
        // SAFETY: a field of a valid block.
        unsafe { wr(&raw mut (*self.block.as_ptr()).status.word, word) }
    }

    /// The result word of the token of `parity`.
    pub fn result(&self, parity: usize) -> u64 {
        // SAFETY: a field of a valid block; `parity & 1` indexes the two entries.
        unsafe { rd(&raw mut (*self.block.as_ptr()).status.results[parity & 1]) }
    }

    /// Writes the result word of the token of `parity`.
    pub fn set_result(&self, parity: usize, word: u64) {
        // SAFETY: as for `result`.
        unsafe {
            wr(
                &raw mut (*self.block.as_ptr()).status.results[parity & 1],
                word,
            )
        }
    }

    /// `[start, end]` of the token of `parity`.
    pub fn times(&self, parity: usize) -> [u64; 2] {
        let b = self.block.as_ptr();
        // SAFETY: fields of a valid block; `parity & 1` indexes the two entries.
        unsafe {
            [
                rd(&raw mut (*b).status.times[parity & 1][0]),
                rd(&raw mut (*b).status.times[parity & 1][1]),
            ]
        }
    }

    /// Writes `[start, end]` of the token of `parity`.
    pub fn set_times(&self, parity: usize, t: [u64; 2]) {
        let b = self.block.as_ptr();
        // SAFETY: as for `times`.
        unsafe {
            wr(&raw mut (*b).status.times[parity & 1][0], t[0]);
            wr(&raw mut (*b).status.times[parity & 1][1], t[1]);
        }
    }

    /// Conditions the token of `parity` registered.
    pub fn condition_count(&self, parity: usize) -> u32 {
        // SAFETY: a field of a valid block.
        unsafe { rd(&raw mut (*self.block.as_ptr()).conditions[parity & 1].count) }
    }

    /// Condition `i` of the token of `parity`, if the slab holds it.
    pub fn condition(&self, parity: usize, i: usize) -> Option<RawCondition> {
        if i >= CONDITIONS_PER_LANE {
            return None;
        }
        let c: *mut RawCondition =
            // SAFETY: `i` is in bounds; `&raw mut` makes no reference.
            unsafe { &raw mut (*self.block.as_ptr()).conditions[parity & 1].items[i] };
        // SAFETY: fields of a valid condition.
        unsafe {
            Some(RawCondition {
                kind: rd(&raw mut (*c).kind),
                reserved: 0,
                word: rd(&raw mut (*c).word),
                expected: rd(&raw mut (*c).expected),
            })
        }
    }

    /// Writes the conditions of the token of `parity`: `count` registered, the first
    /// [`CONDITIONS_PER_LANE`] of `items` kept.
    pub fn set_conditions(&self, parity: usize, count: u32, items: &[RawCondition]) {
        let slab = self.block.as_ptr();
        for (i, item) in items.iter().take(CONDITIONS_PER_LANE).enumerate() {
            // SAFETY: `i` is bounded by `take`; fields of a valid condition.
            unsafe {
                let c = &raw mut (*slab).conditions[parity & 1].items[i];
                wr(&raw mut (*c).kind, item.kind);
                wr(&raw mut (*c).word, item.word);
                wr(&raw mut (*c).expected, item.expected);
            }
        }
        // SAFETY: a field of a valid block.
        unsafe { wr(&raw mut (*slab).conditions[parity & 1].count, count) }
    }

    /// Address and length of payload slot `parity` (for cache maintenance).
    pub fn payload_range(&self, parity: usize) -> (usize, usize) {
        (
            self.slot(parity) as usize,
            core::mem::size_of::<PayloadSlot>(),
        )
    }

    /// Address and length of the status line.
    pub fn status_range(&self) -> (usize, usize) {
        // SAFETY: a field of a valid block; no reference is made.
        let p = unsafe { &raw mut (*self.block.as_ptr()).status };
        (
            p as usize,
            core::mem::size_of_val(&crate::block::CoreBlock::ZERO.status),
        )
    }

    /// Address and length of the condition slab of `parity`.
    pub fn conditions_range(&self, parity: usize) -> (usize, usize) {
        // SAFETY: a field of a valid block; no reference is made.
        let p = unsafe { &raw mut (*self.block.as_ptr()).conditions[parity & 1] };
        (
            p as usize,
            core::mem::size_of::<crate::block::ConditionSlab>(),
        )
    }
}
