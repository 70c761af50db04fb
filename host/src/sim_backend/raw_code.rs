//! A kernel's raw code (only `.text`, entry at offset 0, as on the chip) mapped executable
//! in this process, so the simulator's cores can call it as `void (*)(int64_t *args)`.
#![allow(unsafe_code)]

use std::ffi::c_void;
use std::ptr::NonNull;

use rustix::mm::{MapFlags, MprotectFlags, ProtFlags, mmap_anonymous, mprotect, munmap};

/// One kernel's code, readable and executable, never writable once mapped; unmapped on drop.
pub struct RawCode {
    at: NonNull<c_void>,
    len: usize,
}

// SAFETY: the mapping is immutable after `RawCode::map` returns (read and execute only) and
// owned by this value alone, so sharing or sending the address between threads is sound.
unsafe impl Send for RawCode {}
// SAFETY: as for `Send`: nothing mutates the mapping while it is shared.
unsafe impl Sync for RawCode {}

impl RawCode {
    /// `code` copied into a fresh mapping that is then made read-and-execute only.
    pub fn map(code: &[u8]) -> Result<Self, String> {
        if code.is_empty() {
            return Err("the kernel's code is empty".into());
        }
        let len = code.len();
        // SAFETY: a fresh anonymous mapping at an address the kernel picks aliases nothing.
        let at = unsafe {
            mmap_anonymous(
                std::ptr::null_mut(),
                len,
                ProtFlags::READ | ProtFlags::WRITE,
                MapFlags::PRIVATE,
            )
        }
        .map_err(|e| format!("cannot map {len} bytes for a kernel's code: {e}"))?;
        let at = NonNull::new(at).ok_or("the kernel's code mapped at address 0")?;
        let mapped = RawCode { at, len };
        // SAFETY: the mapping is `len` writable bytes that nothing else refers to yet.
        unsafe { std::ptr::copy_nonoverlapping(code.as_ptr(), at.as_ptr().cast::<u8>(), len) };
        sync_instruction_cache(at.as_ptr().cast::<u8>(), len);
        // SAFETY: the range is the mapping made above.
        unsafe { mprotect(at.as_ptr(), len, MprotectFlags::READ | MprotectFlags::EXEC) }
            .map_err(|e| format!("cannot make a kernel's code executable: {e}"))?;
        Ok(mapped)
    }

    /// The entry's address (offset 0).
    pub fn address(&self) -> u64 {
        self.at.as_ptr() as u64
    }
}

impl Drop for RawCode {
    fn drop(&mut self) {
        // SAFETY: the mapping `map` made; no core runs it any more (the machine that calls
        // it is gone before its kernel table drops).
        let _ = unsafe { munmap(self.at.as_ptr(), self.len) };
    }
}

/// Makes freshly written code visible to instruction fetch. aarch64 keeps the instruction
/// cache apart from data writes: clean each data line to the point of unification, then
/// invalidate the instruction lines. x86_64 keeps them coherent.
#[cfg(target_arch = "aarch64")]
fn sync_instruction_cache(start: *const u8, len: usize) {
    let ctr: u64;
    // SAFETY: CTR_EL0 (the cache type register) is readable at EL0 on Linux.
    unsafe { core::arch::asm!("mrs {0}, ctr_el0", out(reg) ctr) };
    // The smallest data and instruction line sizes, as 4 << log2(words).
    let dline = 4usize << ((ctr >> 16) & 0xf);
    let iline = 4usize << (ctr & 0xf);
    let end = start as usize + len;
    for line in (start as usize & !(dline - 1)..end).step_by(dline) {
        // SAFETY: cache maintenance by address on lines of a mapping this process owns
        // changes no memory contents.
        unsafe { core::arch::asm!("dc cvau, {0}", in(reg) line) };
    }
    // SAFETY: barriers only.
    unsafe { core::arch::asm!("dsb ish") };
    for line in (start as usize & !(iline - 1)..end).step_by(iline) {
        // SAFETY: as above.
        unsafe { core::arch::asm!("ic ivau, {0}", in(reg) line) };
    }
    // SAFETY: barriers only.
    unsafe { core::arch::asm!("dsb ish", "isb") };
}

#[cfg(not(target_arch = "aarch64"))]
fn sync_instruction_cache(_start: *const u8, _len: usize) {}
