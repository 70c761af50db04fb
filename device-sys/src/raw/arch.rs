//! What the scheduler needs from the CPU: the system counter, barriers that order memory
//! against other agents (the AICore cores, DMA engines, the host), and cache maintenance by
//! address range. aarch64 (the AICPU) uses its instructions; other targets (host builds and
//! tests) use the nearest equivalent, or nothing where caches are coherent.

/// Cache line size assumed where the CPU cannot be asked.
pub const FALLBACK_LINE: usize = 64;

/// The system counter (aarch64: `CNTVCT_EL0`, after an `isb` so it is not read early).
#[inline]
pub fn counter() -> u64 {
    #[cfg(target_arch = "aarch64")]
    {
        let v: u64;
        // SAFETY: reading CNTVCT_EL0 has no side effect; EL0 access is enabled by every OS
        // the AICPU runs (and by qemu-user). `isb` only orders the read after earlier
        // instructions.
        unsafe {
            core::arch::asm!("isb", "mrs {v}, cntvct_el0", v = out(reg) v, options(nostack, preserves_flags));
        }
        v
    }
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: RDTSC reads the time-stamp counter and has no other effect.
        unsafe { core::arch::x86_64::_rdtsc() }
    }
    #[cfg(not(any(target_arch = "aarch64", target_arch = "x86_64")))]
    {
        compile_error!("pto-device-sys has a counter for aarch64 (and x86_64 for tests) only");
    }
}

/// The counter's frequency in Hz, when the CPU says (aarch64: `CNTFRQ_EL0`).
#[inline]
pub fn counter_frequency() -> Option<u64> {
    #[cfg(target_arch = "aarch64")]
    {
        let f: u64;
        // SAFETY: reading CNTFRQ_EL0 has no side effect and is allowed at EL0.
        unsafe {
            core::arch::asm!("mrs {f}, cntfrq_el0", f = out(reg) f, options(nomem, nostack, preserves_flags));
        }
        (f > 0).then_some(f)
    }
    #[cfg(not(target_arch = "aarch64"))]
    {
        None
    }
}

/// Orders every earlier memory access before every later one, as other agents of the
/// outer-shareable domain (cores, engines, host) observe them (aarch64: `dmb osh`).
#[inline]
pub fn device_barrier() {
    #[cfg(target_arch = "aarch64")]
    // SAFETY: a data memory barrier has no effect besides ordering; the asm is a compiler
    // barrier too (it may touch memory), so volatile accesses are not moved across it.
    unsafe {
        core::arch::asm!("dmb osh", options(nostack, preserves_flags));
    }
    #[cfg(not(target_arch = "aarch64"))]
    core::sync::atomic::fence(core::sync::atomic::Ordering::SeqCst);
}

/// Orders earlier loads before every later access (aarch64: `dmb oshld`): what an acquire
/// of a word written by another agent needs.
#[inline]
pub fn device_acquire() {
    #[cfg(target_arch = "aarch64")]
    // SAFETY: as for `device_barrier`.
    unsafe {
        core::arch::asm!("dmb oshld", options(nostack, preserves_flags));
    }
    #[cfg(not(target_arch = "aarch64"))]
    core::sync::atomic::fence(core::sync::atomic::Ordering::Acquire);
}

/// The smallest data cache line of the CPU (aarch64: `CTR_EL0.DminLine`).
#[inline]
pub fn cache_line() -> usize {
    #[cfg(target_arch = "aarch64")]
    {
        let ctr: u64;
        // SAFETY: reading CTR_EL0 has no side effect; Linux and the AICPU OS allow it at
        // EL0 (SCTLR_EL1.UCT).
        unsafe {
            core::arch::asm!("mrs {c}, ctr_el0", c = out(reg) ctr, options(nomem, nostack, preserves_flags));
        }
        4usize << ((ctr >> 16) & 0xf)
    }
    #[cfg(not(target_arch = "aarch64"))]
    {
        FALLBACK_LINE
    }
}

/// Writes back the lines of `[addr, addr + len)` to the point of coherency, then waits for
/// that to finish (aarch64: `dc cvac` per line, `dsb sy`). Nothing elsewhere.
#[inline]
pub fn clean(addr: usize, len: usize) {
    #[cfg(target_arch = "aarch64")]
    {
        for_lines(addr, len, |line| {
            // SAFETY: `dc cvac` writes a line back without changing its contents; any
            // address is accepted (an unmapped one faults only if the caller passes one,
            // and callers pass ranges of blocks and words they were given as mapped).
            unsafe {
                core::arch::asm!("dc cvac, {a}", a = in(reg) line, options(nostack, preserves_flags));
            }
        });
        // SAFETY: a barrier only waits.
        unsafe {
            core::arch::asm!("dsb sy", options(nostack, preserves_flags));
        }
    }
    #[cfg(not(target_arch = "aarch64"))]
    let _ = (addr, len);
}

/// Writes back and discards the lines of `[addr, addr + len)`, so the next read fetches
/// what another agent wrote (aarch64: `dc civac` per line, `dsb sy`; `dc ivac` would be
/// EL1-only and could drop our own dirty data). Nothing elsewhere.
#[inline]
pub fn clean_invalidate(addr: usize, len: usize) {
    #[cfg(target_arch = "aarch64")]
    {
        for_lines(addr, len, |line| {
            // SAFETY: as for `clean`; clean-and-invalidate keeps the line's contents.
            unsafe {
                core::arch::asm!("dc civac, {a}", a = in(reg) line, options(nostack, preserves_flags));
            }
        });
        // SAFETY: a barrier only waits.
        unsafe {
            core::arch::asm!("dsb sy", options(nostack, preserves_flags));
        }
    }
    #[cfg(not(target_arch = "aarch64"))]
    let _ = (addr, len);
}

#[cfg(target_arch = "aarch64")]
fn for_lines(addr: usize, len: usize, mut f: impl FnMut(usize)) {
    if len == 0 {
        return;
    }
    let line = cache_line();
    let mut a = addr & !(line - 1);
    let end = addr.saturating_add(len);
    while a < end {
        f(a);
        a += line;
    }
}
