//! Signals for jobs that never leak and never orphan: a rank removes its job's shared-memory
//! name when a terminating signal comes before every rank mapped the object, and dies with its
//! launcher; a launcher takes SIGINT, SIGTERM and SIGHUP as a request to stop its ranks and
//! clean up; a rank that joined a job leaves its signal to its heartbeat thread for a few
//! milliseconds, which names the peers that died first. The handlers only touch atomics and
//! make async-signal-safe calls.
#![allow(unsafe_code)]

use std::ffi::{CStr, CString, c_char, c_int};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, AtomicU32, Ordering};

/// The signals a terminal, a batch system or a parent sends to end a job.
const TERMINATING: [c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// The shared-memory name a terminating signal removes (null: none). Set and cleared by the
/// communicator while it holds a name no other process can remove yet.
static GUARDED: AtomicPtr<c_char> = AtomicPtr::new(std::ptr::null_mut());
/// Whether [`remove_on_signal`] installed the rank's handlers (guards are kept only then).
static RANK_HANDLERS: AtomicBool = AtomicBool::new(false);
/// The last terminating signal a launcher received, 0 if none.
static PENDING: AtomicI32 = AtomicI32::new(0);
/// A terminating signal a rank received and left to a watcher of its peers, 0 if none.
static RANK_PENDING: AtomicI32 = AtomicI32::new(0);
/// How many threads watch the rank's peers and take its terminating signals
/// ([`take_deferred`]): while one does, a signal is theirs to act on.
static DEFERRING: AtomicU32 = AtomicU32::new(0);

extern "C" fn rank_handler(sig: c_int) {
    RANK_PENDING.store(sig, Ordering::SeqCst);
    if DEFERRING.load(Ordering::SeqCst) > 0 {
        // A watcher of the job's peers takes it within milliseconds (`take_deferred`): it
        // names a peer that died, then ends the process as the signal would have.
        return;
    }
    // No watcher, or the last one stopped as the signal came: whoever takes the signal
    // first ends the process.
    if RANK_PENDING.swap(0, Ordering::SeqCst) != 0 {
        end_by(sig);
    }
}

/// Removes the guarded name, then ends the process by `sig` (its default action, restored by
/// `SA_RESETHAND`). Async-signal-safe.
fn end_by(sig: c_int) {
    let name = GUARDED.swap(std::ptr::null_mut(), Ordering::AcqRel);
    if !name.is_null() {
        // SAFETY: `name` came from `CString::into_raw` in `guard` and is never freed (a
        // guarded name is leaked on purpose), so it is a valid C string; `shm_unlink` is an
        // `unlink` of a path built on the stack.
        unsafe { libc::shm_unlink(name) };
    }
    // SAFETY: zeroed `sigset_t` is a valid value that `sigemptyset` initialises; unblocking
    // `sig` on this thread and raising it are async-signal-safe calls on live locals. The
    // handler was reset to the default action when the signal was delivered (the signal is
    // blocked while the handler runs, and delivered as it returns).
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, sig);
        libc::signal(sig, libc::SIG_DFL);
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::raise(sig);
    }
}

extern "C" fn launcher_handler(sig: c_int) {
    PENDING.store(sig, Ordering::Release);
}

fn install(handler: extern "C" fn(c_int), flags: c_int) -> std::io::Result<()> {
    for sig in TERMINATING {
        // SAFETY: a zeroed `sigaction` is a valid value (empty mask, no flags) that is then
        // filled in; `handler` is an `extern "C" fn(c_int)` that only touches atomics and
        // async-signal-safe calls; `sigaction` reads `act` and writes nothing back (null
        // `oldact`).
        let rc = unsafe {
            let mut act: libc::sigaction = std::mem::zeroed();
            act.sa_sigaction = handler as usize;
            act.sa_flags = flags;
            libc::sigemptyset(&mut act.sa_mask);
            libc::sigaction(sig, &act, std::ptr::null_mut())
        };
        if rc != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// For a rank: SIGINT, SIGTERM or SIGHUP first remove the shared-memory name the
/// communicator guards (see `guard`), then end the process as they would have. While the
/// rank has joined a job, a thread of it takes the signal first (`take_deferred`): it
/// names any peer that died before (the signal is often a launcher's teardown after that
/// death), within milliseconds, then ends the process the same way. A second signal ends it
/// at once.
pub fn remove_on_signal() -> std::io::Result<()> {
    install(rank_handler, libc::SA_RESETHAND | libc::SA_RESTART)?;
    RANK_HANDLERS.store(true, Ordering::Release);
    Ok(())
}

/// For a launcher: SIGINT, SIGTERM and SIGHUP are recorded instead of ending the process;
/// [`take_pending`] tells the launcher's loop, which stops the ranks and cleans up.
pub fn record_signals() -> std::io::Result<()> {
    install(launcher_handler, libc::SA_RESTART)
}

/// The terminating signal the launcher received since the last call, if any.
pub fn take_pending() -> Option<i32> {
    match PENDING.swap(0, Ordering::AcqRel) {
        0 => None,
        sig => Some(sig),
    }
}

/// Makes a terminating signal remove `name` (when [`remove_on_signal`] was called): the
/// communicator guards its object's name from creating or opening it until the name is
/// removed on purpose. One name at a time; a later guard replaces an earlier one.
pub(crate) fn guard(name: &CStr) {
    if !RANK_HANDLERS.load(Ordering::Acquire) {
        return;
    }
    // Leaked on purpose: a handler may be reading the previous pointer right now, so no
    // guarded name is ever freed (one short string per communicator).
    let raw = CString::from(name).into_raw();
    GUARDED.store(raw, Ordering::Release);
}

/// Terminating signals held back on this thread while it lives: making the object and
/// guarding its name is one step for a signal (it comes before or after, never between).
pub(crate) struct Held(libc::sigset_t);

/// Holds SIGINT, SIGTERM and SIGHUP back on this thread until the result is dropped (they are
/// delivered then). A rank makes its object before it starts any other thread, so a signal to
/// the process waits too.
pub(crate) fn hold() -> Held {
    // SAFETY: zeroed `sigset_t`s are valid values that `sigemptyset` then initialises;
    // `pthread_sigmask` reads `set` and writes the previous mask into `old`, both live locals.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigemptyset(&mut old);
        for sig in TERMINATING {
            libc::sigaddset(&mut set, sig);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old);
        Held(old)
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        // SAFETY: restores the mask `hold` saved, a valid `sigset_t`; no old mask is asked for.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &self.0, std::ptr::null_mut()) };
    }
}

/// A thread that watches the rank's peers starts taking its terminating signals (when
/// [`remove_on_signal`] was called): it calls [`take_deferred`] every few milliseconds, and
/// [`stop_deferring`] when it stops.
pub(crate) fn start_deferring() {
    if RANK_HANDLERS.load(Ordering::Acquire) {
        DEFERRING.fetch_add(1, Ordering::SeqCst);
    }
}

/// The thread that called [`start_deferring`] stops taking signals. Returns a signal that
/// came meanwhile, which the caller must act on ([`end_by_signal`]).
pub(crate) fn stop_deferring() -> Option<i32> {
    if !RANK_HANDLERS.load(Ordering::Acquire) {
        return None;
    }
    DEFERRING.fetch_sub(1, Ordering::SeqCst);
    take_deferred()
}

/// A terminating signal the rank received and left to its watchers, if any: the caller
/// names what it knows, then calls [`end_by_signal`].
pub(crate) fn take_deferred() -> Option<i32> {
    match RANK_PENDING.swap(0, Ordering::SeqCst) {
        0 => None,
        sig => Some(sig),
    }
}

/// Ends the process by `sig`, as the signal would have: the guarded name removed, the
/// default action taken. Does not return.
pub(crate) fn end_by_signal(sig: i32) -> ! {
    end_by(sig);
    // A signal whose default action does not end the process (none of ours).
    std::process::exit(128 + sig)
}

/// Stops guarding any name (it was removed, or someone else now owns its removal).
pub(crate) fn unguard() {
    GUARDED.store(std::ptr::null_mut(), Ordering::Release);
}

/// For a rank spawned by a launcher (process `parent`): the kernel sends this process SIGTERM
/// when the launcher dies, however it dies (SIGKILL included). Errors if the launcher is gone
/// already (it died before the request was made).
pub fn die_with_parent(parent: u32) -> std::io::Result<()> {
    rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::TERM))?;
    let now = rustix::process::getppid().map_or(0, |p| p.as_raw_nonzero().get() as u32);
    if now != parent {
        return Err(std::io::Error::other(format!(
            "the launcher (process {parent}) is gone"
        )));
    }
    Ok(())
}

/// Sends `sig` to process `pid`; a process that is gone already is fine.
pub fn send(pid: u32, sig: i32) {
    let Some(pid) = rustix::process::Pid::from_raw(pid as i32) else {
        return;
    };
    if let Some(sig) = rustix::process::Signal::from_named_raw(sig) {
        let _ = rustix::process::kill_process(pid, sig);
    }
}

/// Whether process `pid` is gone: no such process, a zombie waiting to be reaped, or one on
/// its way out ([`is_doomed`]). A process this one cannot see (0, another pid namespace)
/// counts as alive.
pub fn is_dead(pid: u32) -> bool {
    let Some(p) = rustix::process::Pid::from_raw(pid as i32) else {
        return false;
    };
    match rustix::process::test_kill_process(p) {
        Err(rustix::io::Errno::SRCH) => true,
        Err(_) => false,
        Ok(()) => matches!(process_state(pid), Some('Z' | 'X')) || is_doomed(pid),
    }
}

/// Whether process `pid` is on its way out but not a zombie yet: killed by SIGKILL (pending:
/// it cannot be caught, blocked or ignored) or already exiting. A loaded machine can take
/// longer than a peer's patience to give a killed process the CPU it needs to exit; it
/// died all the same.
pub fn is_doomed(pid: u32) -> bool {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"));
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"));
    status.is_ok_and(|s| sigkill_pending(&s)) || stat.is_ok_and(|s| exiting(&s))
}

/// Whether `status` (the text of `/proc/<pid>/status`) shows SIGKILL pending, for the thread
/// or the whole process.
fn sigkill_pending(status: &str) -> bool {
    const SIGKILL: u64 = 1 << (libc::SIGKILL - 1);
    status
        .lines()
        .filter_map(|l| l.strip_prefix("SigPnd:").or(l.strip_prefix("ShdPnd:")))
        .filter_map(|mask| u64::from_str_radix(mask.trim(), 16).ok())
        .any(|mask| mask & SIGKILL != 0)
}

/// Whether `stat` (the text of `/proc/<pid>/stat`) has the kernel's exiting flag set
/// (`PF_EXITING`, in the flags field, the seventh after the command's closing parenthesis).
fn exiting(stat: &str) -> bool {
    const PF_EXITING: u64 = 0x4;
    stat.rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().nth(6)?.parse::<u64>().ok())
        .is_some_and(|flags| flags & PF_EXITING != 0)
}

/// The state letter of `/proc/<pid>/stat` (`R`, `S`, `T` stopped, `Z` zombie...).
pub fn process_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) S ...`: the command may hold spaces and parentheses; the state follows the
    // last `)`.
    stat.rsplit_once(')')?.1.trim_start().chars().next()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pending_sigkill_or_the_exiting_flag_is_a_process_on_its_way_out() {
        let status = |sig: &str, shd: &str| {
            format!("Name:\tpto-launch\nSigQ:\t1/63\nSigPnd:\t{sig}\nShdPnd:\t{shd}\n")
        };
        assert!(!sigkill_pending(&status(
            "0000000000000000",
            "0000000000000000"
        )));
        // SIGKILL is signal 9: bit 8.
        assert!(sigkill_pending(&status(
            "0000000000000100",
            "0000000000000000"
        )));
        assert!(sigkill_pending(&status(
            "0000000000000000",
            "0000000000000100"
        )));
        assert!(!sigkill_pending(&status(
            "0000000000004000",
            "0000000000000002"
        )));
        // `pid (comm) state ppid pgrp session tty tpgid flags ...`; a command may hold `)`.
        let stat = |flags: u32| format!("42 (a) b) R 1 42 42 0 -1 {flags} 0 0 0 0");
        assert!(!exiting(&stat(0x0040_0000)));
        assert!(exiting(&stat(0x0040_0004)));
        assert!(!exiting("42 (a"), "a line cut short is no evidence");
    }

    #[test]
    fn this_process_is_alive_and_not_doomed() {
        assert!(!is_doomed(std::process::id()));
        assert!(!is_dead(std::process::id()));
    }
}
