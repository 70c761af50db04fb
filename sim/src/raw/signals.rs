//! The handler of fatal signals that names a crash in user code (see `crate::crash`).
//!
//! It runs on the faulting thread, on its alternate stack, and does only what is safe in a
//! signal handler: it reads the thread's context (plain values), formats one line into a
//! buffer on its stack, writes it with `write(2)` and leaves with `_exit`. A signal in a
//! thread that runs no user code goes to the handler that was there before.

use std::ffi::c_void;
use std::fmt::Write as _;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::crash::{self, Running};

/// The signals a crash in user code raises.
const FATAL: [libc::c_int; 4] = [libc::SIGSEGV, libc::SIGBUS, libc::SIGFPE, libc::SIGILL];

/// Below a thread's stack, how far a fault still counts as its stack overflowing (the guard
/// page, and a frame that jumped past it).
const OVERFLOW_REACH: usize = 256 << 10;

/// The dispositions before ours, by index in [`FATAL`] (set once, before ours is installed).
static PREVIOUS: [OnceLock<libc::sigaction>; 4] = [const { OnceLock::new() }; 4];
static INSTALLED: AtomicBool = AtomicBool::new(false);

/// Installs the handler for every signal of [`FATAL`], keeping the dispositions before it.
pub(crate) fn install() -> std::io::Result<()> {
    if INSTALLED.swap(true, Ordering::AcqRel) {
        return Ok(());
    }
    // Every previous disposition is read before ours is set, so the handler never reads one
    // not yet written.
    for (i, &sig) in FATAL.iter().enumerate() {
        // SAFETY: a zeroed `sigaction` is a valid value for the kernel to fill in.
        let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
        // SAFETY: reads the current disposition into `old`, a valid `sigaction`.
        if unsafe { libc::sigaction(sig, std::ptr::null(), &mut old) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let _ = PREVIOUS[i].set(old);
    }
    for &sig in &FATAL {
        // SAFETY: a zeroed `sigaction` is a valid value to fill in; `sigemptyset` initialises
        // its mask; the handler has the three-argument type `SA_SIGINFO` asks for.
        unsafe {
            let mut act: libc::sigaction = std::mem::zeroed();
            act.sa_sigaction = on_fatal as *const () as usize;
            act.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut act.sa_mask);
            if libc::sigaction(sig, &act, std::ptr::null_mut()) != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
    }
    Ok(())
}

/// A fixed buffer the line is formatted into (no allocation in a signal handler).
struct Line {
    buf: [u8; 768],
    len: usize,
}

impl std::fmt::Write for Line {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let n = s.len().min(self.buf.len() - self.len);
        self.buf[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
        Ok(())
    }
}

fn signal_name(sig: libc::c_int) -> (&'static str, &'static str) {
    match sig {
        libc::SIGSEGV => ("SIGSEGV", "invalid memory access"),
        libc::SIGBUS => ("SIGBUS", "bus error: misaligned or unmapped access"),
        libc::SIGFPE => (
            "SIGFPE",
            "arithmetic fault, such as an integer division by zero",
        ),
        libc::SIGILL => ("SIGILL", "illegal instruction"),
        _ => ("a fatal signal", "fatal signal"),
    }
}

/// The crash line for `running`, signal `sig` at `addr`.
fn describe(out: &mut Line, running: Running, sig: libc::c_int, addr: usize) {
    let low = crash::stack_low();
    let overflow = sig == libc::SIGSEGV
        && low != 0
        && addr < low.saturating_add(4096)
        && addr >= low.saturating_sub(OVERFLOW_REACH);
    let _ = out.write_str("error: ");
    match running {
        Running::Kernel {
            id,
            name_ptr,
            name_len,
            task,
            core,
            lane,
        } => {
            // SAFETY: the context guard borrows the name for as long as it is set.
            let kname = unsafe { std::slice::from_raw_parts(name_ptr, name_len) };
            let kname = std::str::from_utf8(kname).unwrap_or("?");
            let _ = write!(out, "kernel `{kname}` (id {})", id.0);
            crashed(out, overflow, sig, addr);
            let _ = write!(out, ", running {task} on {core}, lane {lane}");
        }
        Running::Orchestration {
            label_ptr,
            label_len,
        } => {
            // SAFETY: as for the kernel's name.
            let label = unsafe { std::slice::from_raw_parts(label_ptr, label_len) };
            let label = std::str::from_utf8(label).unwrap_or("?");
            let _ = write!(out, "the orchestration ({label})");
            crashed(out, overflow, sig, addr);
        }
        Running::Nothing => {}
    }
    let _ = writeln!(
        out,
        "; the process exits with status {}",
        crash::exit_status(sig)
    );
}

fn crashed(out: &mut Line, overflow: bool, sig: libc::c_int, addr: usize) {
    let (name, what) = signal_name(sig);
    // SIGSEGV and SIGBUS name the address accessed; SIGFPE and SIGILL the instruction.
    let place = if sig == libc::SIGSEGV || sig == libc::SIGBUS {
        "address"
    } else {
        "instruction"
    };
    let _ = if overflow {
        write!(out, " overflowed its stack ({name} at {place} {addr:#x})")
    } else {
        write!(out, " crashed with {name} ({what}) at {place} {addr:#x}")
    };
}

extern "C" fn on_fatal(sig: libc::c_int, info: *mut libc::siginfo_t, uctx: *mut c_void) {
    let running = crash::current();
    if matches!(running, Running::Nothing) {
        pass_on(sig, info, uctx);
        return;
    }
    // SAFETY: the kernel hands a handler installed with SA_SIGINFO a valid `siginfo_t`.
    let addr = unsafe { (*info).si_addr() } as usize;
    let mut line = Line {
        buf: [0; 768],
        len: 0,
    };
    describe(&mut line, running, sig, addr);
    // SAFETY: `write` and `_exit` are async-signal-safe; the buffer is this frame's.
    unsafe {
        libc::write(2, line.buf.as_ptr().cast(), line.len);
        libc::_exit(crash::exit_status(sig));
    }
}

/// Hands the signal to the disposition before ours: its handler if it had one, else that
/// disposition is restored and the faulting instruction, run again, meets it.
fn pass_on(sig: libc::c_int, info: *mut libc::siginfo_t, uctx: *mut c_void) {
    let Some(i) = FATAL.iter().position(|&s| s == sig) else {
        return;
    };
    // `install` set every entry before it set our handler, which is how we got here.
    let Some(&previous) = PREVIOUS[i].get() else {
        return;
    };
    let handler = previous.sa_sigaction;
    if handler == libc::SIG_DFL || handler == libc::SIG_IGN {
        // SAFETY: restoring a disposition the process had; async-signal-safe.
        unsafe { libc::sigaction(sig, &previous, std::ptr::null_mut()) };
        return;
    }
    // SAFETY: the previous handler was installed for this signal with the flags it was
    // installed with; it is called as the kernel would have called it.
    unsafe {
        if previous.sa_flags & libc::SA_SIGINFO != 0 {
            let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut c_void) =
                std::mem::transmute(handler);
            f(sig, info, uctx);
        } else {
            let f: extern "C" fn(libc::c_int) = std::mem::transmute(handler);
            f(sig);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pto_runtime_core::{CoreId, KernelId, TaskId};

    fn text(running: Running, sig: libc::c_int, addr: usize) -> String {
        let mut line = Line {
            buf: [0; 768],
            len: 0,
        };
        describe(&mut line, running, sig, addr);
        String::from_utf8(line.buf[..line.len].to_vec()).unwrap()
    }

    #[test]
    fn a_kernel_crash_names_kernel_task_core_and_address() {
        let name = "deref";
        let running = Running::Kernel {
            id: KernelId(3),
            name_ptr: name.as_ptr(),
            name_len: name.len(),
            task: TaskId::from_raw(0x1_0000_0000_0005),
            core: CoreId(2),
            lane: 0,
        };
        let t = text(running, libc::SIGSEGV, 0x10);
        assert!(
            t.starts_with("error: kernel `deref` (id 3) crashed with SIGSEGV"),
            "{t}"
        );
        assert!(t.contains("at address 0x10"), "{t}");
        assert!(t.contains("on core 2, lane 0"), "{t}");
        assert!(t.ends_with("exits with status 139\n"), "{t}");
        assert_eq!(t.lines().count(), 1);
        let t = text(running, libc::SIGFPE, 0x4000);
        assert!(t.contains("SIGFPE (arithmetic fault"), "{t}");
        assert!(t.contains("at instruction 0x4000"), "{t}");
        assert!(t.ends_with("status 136\n"), "{t}");
    }

    #[test]
    fn a_fault_just_below_the_stack_is_an_overflow() {
        crash::set_stack_low(0x10_0000);
        let label = "liborch.so";
        let running = Running::Orchestration {
            label_ptr: label.as_ptr(),
            label_len: label.len(),
        };
        let t = text(running, libc::SIGSEGV, 0x10_0000 - 64);
        assert!(
            t.starts_with("error: the orchestration (liborch.so) overflowed its stack"),
            "{t}"
        );
        let t = text(running, libc::SIGSEGV, 0x10);
        assert!(t.contains("crashed with SIGSEGV"), "{t}");
        crash::set_stack_low(0);
    }
}
