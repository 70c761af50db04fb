//! What the SO asks of the CPU and the OS: the CPU a thread runs on, and a trap.

unsafe extern "C" {
    /// glibc: the CPU the calling thread runs on, or -1.
    fn sched_getcpu() -> i32;
    /// glibc: gives the CPU to another runnable thread, if any.
    fn sched_yield() -> i32;
    /// glibc: the number of CPUs online.
    fn get_nprocs() -> i32;
}

/// The CPUs online (at least 1).
pub(crate) fn cpus() -> usize {
    // SAFETY: `get_nprocs` takes no arguments and only reads system state.
    let n = unsafe { get_nprocs() };
    n.max(1) as usize
}

/// One iteration of a wait off the scheduling path (tickets, the orchestrator's watch):
/// the CPU goes to whoever can use it.
pub(crate) fn idle() {
    // SAFETY: `sched_yield` takes no arguments and cannot fail in a way that matters.
    unsafe { sched_yield() };
}

/// Whether the calling thread may take part in a run limited to the CPUs of `mask`
/// (0: any).
pub(crate) fn allowed(mask: u64) -> bool {
    if mask == 0 {
        return true;
    }
    // SAFETY: `sched_getcpu` takes no arguments and only reads the thread's state.
    let cpu = unsafe { sched_getcpu() };
    (0..64).contains(&cpu) && mask >> cpu & 1 == 1
}

/// Stops the process with an illegal instruction.
#[cfg_attr(test, allow(dead_code))]
pub(crate) fn trap() -> ! {
    loop {
        #[cfg(target_arch = "aarch64")]
        // SAFETY: `udf` raises an undefined-instruction exception; it touches nothing.
        unsafe {
            core::arch::asm!("udf #0", options(nomem, nostack));
        }
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `ud2` raises an invalid-opcode exception; it touches nothing.
        unsafe {
            core::arch::asm!("ud2", options(nomem, nostack));
        }
    }
}
