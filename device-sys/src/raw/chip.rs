//! Volatile access to what the AICPU shares with the AICore executors on the chip: register
//! windows (32-bit MMIO words at fixed offsets), handshake blocks and payload slots (device
//! memory). Every access is one volatile load or store of a naturally aligned word; no Rust
//! reference to shared memory is made. Ordering is the caller's, through [`super::arch`].

use core::marker::PhantomData;
use core::ptr::NonNull;

use volatile::VolatilePtr;

use crate::chip::layout::{Handshake, SLOT_ARGS, SLOT_CONDITIONS, Slot, WINDOW_BYTES};
use pto_runtime_core::ffi::PtoTensor;
use pto_runtime_core::{KernelTensor, RawCondition};

/// Reads `*p` with one volatile access.
///
/// # Safety
/// `p` is non-null, aligned and valid for reads.
#[inline]
unsafe fn rd<T: Copy>(p: *mut T) -> T {
    // SAFETY: the caller's contract; `VolatilePtr` makes no reference.
    unsafe { VolatilePtr::new(NonNull::new_unchecked(p)).read() }
}

/// Writes `*p = v` with one volatile access.
///
/// # Safety
/// `p` is non-null, aligned and valid for writes.
#[inline]
unsafe fn wr<T: Copy>(p: *mut T, v: T) {
    // SAFETY: the caller's contract; `VolatilePtr` makes no reference.
    unsafe { VolatilePtr::new(NonNull::new_unchecked(p)).write(v) }
}

/// One core's register window (`regs[physical_core_id]`).
#[derive(Clone, Copy, Debug)]
pub struct RegWindow<'a> {
    base: NonNull<u32>,
    _regs: PhantomData<&'a u32>,
}

// SAFETY: a window is MMIO shared with the core by design; every access through this type is
// one volatile 32-bit access, so sharing the handle between threads adds nothing the
// handshake does not already expect.
unsafe impl Send for RegWindow<'_> {}
// SAFETY: as above.
unsafe impl Sync for RegWindow<'_> {}

impl<'a> RegWindow<'a> {
    /// The window at `base`.
    ///
    /// # Safety
    /// `base` is 4-byte aligned and `[base, base + WINDOW_BYTES)` is mapped, readable and
    /// writable for `'a` (device registers, or memory playing them in tests).
    pub unsafe fn new(base: NonNull<u32>) -> Self {
        RegWindow {
            base,
            _regs: PhantomData,
        }
    }

    fn word(&self, offset: usize) -> *mut u32 {
        debug_assert!(offset.is_multiple_of(4) && offset + 4 <= WINDOW_BYTES);
        // SAFETY: the offsets passed are the layout's constants, inside the window `new`
        // was given; `add` stays in bounds.
        unsafe { self.base.as_ptr().add(offset / 4) }
    }

    /// The register at `offset` (a `REG_*` constant).
    pub fn read(&self, offset: usize) -> u32 {
        // SAFETY: an aligned word inside the window.
        unsafe { rd(self.word(offset)) }
    }

    /// Writes the register at `offset` (a `REG_*` constant).
    pub fn write(&self, offset: usize, v: u32) {
        // SAFETY: an aligned word inside the window.
        unsafe { wr(self.word(offset), v) }
    }
}

/// The host's table of register windows, by physical core id (0: no window).
#[derive(Clone, Copy, Debug)]
pub struct RegTable<'a> {
    bases: &'a [u64],
}

impl<'a> RegTable<'a> {
    /// The table `bases`.
    ///
    /// # Safety
    /// Every non-zero entry is the address of a register window as [`RegWindow::new`]
    /// requires, for `'a`.
    pub unsafe fn new(bases: &'a [u64]) -> Self {
        RegTable { bases }
    }

    /// Entries in the table.
    pub fn len(&self) -> usize {
        self.bases.len()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.bases.is_empty()
    }

    /// The window of physical core `id`, if the table has an aligned one.
    pub fn window(&self, id: u32) -> Option<RegWindow<'a>> {
        let base = *self.bases.get(id as usize)?;
        if !base.is_multiple_of(4) {
            return None;
        }
        let p = NonNull::new(base as usize as *mut u32)?;
        // SAFETY: a non-zero, aligned entry of a table `new` was promised names windows.
        Some(unsafe { RegWindow::new(p) })
    }
}

/// One core's handshake block.
#[derive(Clone, Copy, Debug)]
pub struct HandshakeRef<'a> {
    p: NonNull<Handshake>,
    _hs: PhantomData<&'a Handshake>,
}

// SAFETY: device memory shared with the core; single volatile word accesses only.
unsafe impl Send for HandshakeRef<'_> {}
// SAFETY: as above.
unsafe impl Sync for HandshakeRef<'_> {}

/// A field of a handshake block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HsField {
    /// `aicpu_ready`.
    AicpuReady,
    /// `aicore_done`.
    AicoreDone,
    /// `core_type`.
    CoreType,
    /// `physical_core_id`.
    PhysicalCoreId,
    /// `base_token`.
    BaseToken,
    /// `aicore_exited`.
    AicoreExited,
}

impl<'a> HandshakeRef<'a> {
    /// The block at `p`.
    ///
    /// # Safety
    /// `p` is aligned, mapped and valid for reads and writes for `'a`; the core touches it
    /// only with single word accesses.
    pub unsafe fn new(p: NonNull<Handshake>) -> Self {
        HandshakeRef {
            p,
            _hs: PhantomData,
        }
    }

    fn field(&self, f: HsField) -> *mut u32 {
        let h = self.p.as_ptr();
        // SAFETY: fields of a valid block; `&raw mut` makes no reference.
        unsafe {
            match f {
                HsField::AicpuReady => &raw mut (*h).aicpu_ready,
                HsField::AicoreDone => &raw mut (*h).aicore_done,
                HsField::CoreType => &raw mut (*h).core_type,
                HsField::PhysicalCoreId => &raw mut (*h).physical_core_id,
                HsField::BaseToken => &raw mut (*h).base_token,
                HsField::AicoreExited => &raw mut (*h).aicore_exited,
            }
        }
    }

    /// A 32-bit field.
    pub fn get(&self, f: HsField) -> u32 {
        // SAFETY: an aligned field of a valid block.
        unsafe { rd(self.field(f)) }
    }

    /// Writes a 32-bit field.
    pub fn set(&self, f: HsField, v: u32) {
        // SAFETY: an aligned field of a valid block.
        unsafe { wr(self.field(f), v) }
    }

    /// Writes `task` (the address of the core's slots).
    pub fn set_task(&self, task: u64) {
        // SAFETY: an aligned field of a valid block.
        unsafe { wr(&raw mut (*self.p.as_ptr()).task, task) }
    }

    /// Address and length of the block (for cache maintenance).
    pub fn range(&self) -> (usize, usize) {
        (self.p.as_ptr() as usize, size_of::<Handshake>())
    }
}

/// One core's two payload slots, and optionally the tensor descriptors of each.
#[derive(Clone, Copy, Debug)]
pub struct SlotPair<'a> {
    p: NonNull<[Slot; 2]>,
    descs: Option<NonNull<PtoTensor>>,
    per_slot: usize,
    _slots: PhantomData<&'a Slot>,
}

// SAFETY: device memory shared with the core; single volatile word accesses only.
unsafe impl Send for SlotPair<'_> {}
// SAFETY: as above.
unsafe impl Sync for SlotPair<'_> {}

impl<'a> SlotPair<'a> {
    /// The slots at `p`.
    ///
    /// # Safety
    /// `p` is aligned, mapped and valid for reads and writes for `'a`; the core touches it
    /// only with single word accesses.
    pub unsafe fn new(p: NonNull<[Slot; 2]>) -> Self {
        SlotPair {
            p,
            descs: None,
            per_slot: 0,
            _slots: PhantomData,
        }
    }

    /// The same slots, with `2 * per_slot` tensor descriptors at `descs` (those of slot 0,
    /// then those of slot 1), which kernels read through `pto_kernel_tensor`.
    ///
    /// # Safety
    /// `descs` is aligned, mapped and valid for writes of `2 * per_slot` descriptors for
    /// `'a`, used by this core's executor alone besides the AICPU.
    pub unsafe fn with_tensors(self, descs: NonNull<PtoTensor>, per_slot: usize) -> Self {
        SlotPair {
            descs: Some(descs),
            per_slot,
            ..self
        }
    }

    fn descs(&self, parity: usize) -> Option<*mut PtoTensor> {
        // SAFETY: inside the `2 * per_slot` descriptors `with_tensors` was given.
        self.descs
            .map(|d| unsafe { d.as_ptr().add((parity & 1) * self.per_slot) })
    }

    /// Address and length of the tensor descriptors of slot `parity` (for cache
    /// maintenance), if the slots have any.
    pub fn tensor_range(&self, parity: usize) -> Option<(usize, usize)> {
        self.descs(parity)
            .map(|d| (d as usize, self.per_slot * size_of::<PtoTensor>()))
    }

    fn slot(&self, parity: usize) -> *mut Slot {
        // SAFETY: `parity & 1` indexes the two slots; `&raw mut` makes no reference.
        unsafe { &raw mut (*self.p.as_ptr())[parity & 1] }
    }

    /// The device address of the pair (what `task` in the handshake holds).
    pub fn addr(&self) -> u64 {
        self.p.as_ptr() as usize as u64
    }

    /// Address and length of slot `parity` (for cache maintenance).
    pub fn range(&self, parity: usize) -> (usize, usize) {
        (self.slot(parity) as usize, size_of::<Slot>())
    }

    /// Fills slot `parity` for a dispatch: the tensors' base addresses, then `args`, as the
    /// kernel's argument words (at most [`SLOT_ARGS`] in all: the run's configuration keeps
    /// them below), and the tensors' descriptors when the slots have room for them all.
    /// `shape` carries the number of words written. Returns that number.
    pub fn write(
        &self,
        parity: usize,
        head: SlotHead,
        tensors: &[KernelTensor],
        args: &[u64],
    ) -> usize {
        let s = self.slot(parity);
        let nt = tensors.len().min(SLOT_ARGS);
        let words = tensors
            .iter()
            .take(nt)
            .map(|t| t.tile.base)
            .chain(args.iter().copied())
            .take(SLOT_ARGS);
        let descs = self.descs(parity).filter(|_| nt <= self.per_slot);
        // SAFETY: fields of a valid slot; the indices are bounded by `take`; descriptors
        // inside the slot's `per_slot` (checked above).
        unsafe {
            wr(&raw mut (*s).result, 0);
            wr(&raw mut (*s).kernel_addr, head.kernel_addr);
            wr(&raw mut (*s).task, head.task);
            wr(&raw mut (*s).kernel, head.kernel);
            wr(&raw mut (*s).block, head.block);
            let mut n = 0;
            for (i, a) in words.enumerate() {
                wr(&raw mut (*s).args[i], a);
                n = i + 1;
            }
            wr(&raw mut (*s).shape, head.shape | (n as u32) << 16);
            wr(&raw mut (*s).ntensors, nt as u32);
            wr(
                &raw mut (*s).tensors,
                descs.map_or(0, |d| d as usize as u64),
            );
            if let Some(d) = descs {
                for (i, t) in tensors.iter().take(nt).enumerate() {
                    write_desc(d.add(i), &PtoTensor::from_kernel(t));
                }
            }
            n
        }
    }

    /// The result word of slot `parity`.
    pub fn result(&self, parity: usize) -> u64 {
        // SAFETY: a field of a valid slot.
        unsafe { rd(&raw mut (*self.slot(parity)).result) }
    }

    /// The shape word of slot `parity`.
    pub fn shape(&self, parity: usize) -> u32 {
        // SAFETY: a field of a valid slot.
        unsafe { rd(&raw mut (*self.slot(parity)).shape) }
    }

    /// `[start, end]` of slot `parity`.
    pub fn times(&self, parity: usize) -> [u64; 2] {
        let s = self.slot(parity);
        // SAFETY: fields of a valid slot.
        unsafe { [rd(&raw mut (*s).times[0]), rd(&raw mut (*s).times[1])] }
    }

    /// Conditions the kernel of slot `parity` registered.
    pub fn ncond(&self, parity: usize) -> u32 {
        // SAFETY: a field of a valid slot.
        unsafe { rd(&raw mut (*self.slot(parity)).ncond) }
    }

    /// Condition `i` of slot `parity`, if the slot holds it.
    pub fn condition(&self, parity: usize, i: usize) -> Option<RawCondition> {
        if i >= SLOT_CONDITIONS {
            return None;
        }
        // SAFETY: `i` is in bounds; fields of a valid slot; no reference is made.
        unsafe {
            let c = &raw mut (*self.slot(parity)).conditions[i];
            Some(RawCondition {
                kind: rd(&raw mut (*c).kind),
                reserved: 0,
                word: rd(&raw mut (*c).word),
                expected: rd(&raw mut (*c).expected),
            })
        }
    }
}

/// What a dispatch writes at the head of a slot.
#[derive(Clone, Copy, Debug)]
pub struct SlotHead {
    /// The kernel's device address.
    pub kernel_addr: u64,
    /// The task's raw id.
    pub task: u64,
    /// The kernel's id.
    pub kernel: u32,
    /// `lane | lanes << 8 | profile << 24` (the word count goes into bits 16..24).
    pub shape: u32,
    /// `block | blocks << 16`: the SPMD block, of how many.
    pub block: u32,
}

/// Writes descriptor `t` to `d`, whole (every field, reserved ones included, so nothing of
/// a former tenant stays).
///
/// # Safety
/// `d` is aligned and valid for writes.
unsafe fn write_desc(d: *mut PtoTensor, t: &PtoTensor) {
    // SAFETY: the caller's contract.
    unsafe { wr(d, *t) }
}

use core::mem::size_of;
