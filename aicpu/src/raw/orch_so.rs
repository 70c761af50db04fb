//! The user's orchestration SO, loaded as the chip loads it: its bytes (device memory) go
//! to a temporary file named by device, process and run, which is `dlopen`ed
//! (`RTLD_LAZY | RTLD_LOCAL`) and deleted at once; `pto_orchestrate` is resolved by name.
//! The handle is closed when the orchestration returned.

use core::ffi::{c_char, c_int, c_void};

use pto_device_sys::abi::{PTO_ORCH_ENTRY, PtoAicpuExecArgs, PtoOrchestrate};

unsafe extern "C" {
    fn open(path: *const c_char, flags: c_int, mode: u32) -> c_int;
    fn write(fd: c_int, buf: *const c_void, n: usize) -> isize;
    fn close(fd: c_int) -> c_int;
    fn unlink(path: *const c_char) -> c_int;
    fn getpid() -> c_int;
    fn pto_dl_open(path: *const c_char, flags: c_int) -> *mut c_void;
    fn pto_dl_sym(handle: *mut c_void, name: *const c_char) -> *mut c_void;
    fn pto_dl_close(handle: *mut c_void) -> c_int;
}

// Linux's values (the same on aarch64 and x86_64).
const O_WRONLY: c_int = 0o1;
const O_CREAT: c_int = 0o100;
const O_TRUNC: c_int = 0o1000;
const O_CLOEXEC: c_int = 0o2000000;
const RTLD_LAZY: c_int = 1;

/// Why the SO could not be loaded: the report's value for `OrchestrationLoad`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LoadError {
    /// The temporary file could not be written.
    File = 1,
    /// `dlopen` refused it.
    Open = 2,
    /// It exports no `pto_orchestrate`.
    Symbol = 3,
}

/// A loaded orchestration SO; closed on drop.
pub(crate) struct Loaded {
    handle: *mut c_void,
    /// Its entry.
    pub entry: PtoOrchestrate,
}

impl Drop for Loaded {
    fn drop(&mut self) {
        // SAFETY: a handle `pto_dl_open` returned, closed once.
        unsafe { pto_dl_close(self.handle) };
    }
}

/// `/tmp/pto_orch_<device>_<pid>_<run>.so`, NUL-terminated, in `buf`.
fn temp_path(buf: &mut [u8; 96], device: u32, pid: u32, run: u64) -> *const c_char {
    let mut n = 0;
    let mut put = |b: &[u8]| {
        for &c in b {
            if n < buf.len() - 1 {
                buf[n] = c;
                n += 1;
            }
        }
    };
    let digits = |mut v: u64, put: &mut dyn FnMut(&[u8])| {
        let mut d = [0u8; 20];
        let mut i = d.len();
        loop {
            i -= 1;
            d[i] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        put(&d[i..]);
    };
    put(b"/tmp/pto_orch_");
    digits(device as u64, &mut put);
    put(b"_");
    digits(pid as u64, &mut put);
    put(b"_");
    digits(run, &mut put);
    put(b".so");
    buf[n] = 0;
    buf.as_ptr().cast()
}

/// Loads the orchestration SO the arguments give (`orch_so_len` bytes at `orch_so`,
/// non-null: the caller checks) as that of run `run` on `device`.
pub(crate) fn load(a: &PtoAicpuExecArgs, device: u32, run: u64) -> Result<Loaded, LoadError> {
    // The host wrote `orch_so_len` bytes of the SO at `orch_so` (the exec ABI's contract).
    let (bytes, len) = (a.orch_so, a.orch_so_len);
    let mut buf = [0u8; 96];
    // SAFETY: `getpid` takes nothing and cannot fail.
    let pid = unsafe { getpid() } as u32;
    let path = temp_path(&mut buf, device, pid, run);
    // SAFETY: `path` is NUL-terminated; the flags and mode are Linux's.
    let fd = unsafe { open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o700) };
    if fd < 0 {
        return Err(LoadError::File);
    }
    let mut done = 0u64;
    while done < len {
        // SAFETY: `[bytes + done, bytes + len)` is readable (the exec ABI's contract).
        let n = unsafe {
            write(
                fd,
                (bytes + done) as usize as *const c_void,
                (len - done) as usize,
            )
        };
        if n <= 0 {
            break;
        }
        done += n as u64;
    }
    // SAFETY: `fd` is the descriptor `open` returned, closed once.
    let closed = unsafe { close(fd) } == 0;
    let handle = if done == len && closed {
        // SAFETY: `path` names the file just written.
        unsafe { pto_dl_open(path, RTLD_LAZY) }
    } else {
        core::ptr::null_mut()
    };
    // The file has done its job once loaded (or refused).
    // SAFETY: `path` is NUL-terminated.
    unsafe { unlink(path) };
    if done != len || !closed {
        return Err(LoadError::File);
    }
    if handle.is_null() {
        return Err(LoadError::Open);
    }
    // SAFETY: `handle` is live; the name is NUL-terminated.
    let sym = unsafe { pto_dl_sym(handle, PTO_ORCH_ENTRY.as_ptr()) };
    if sym.is_null() {
        // SAFETY: a live handle, closed once.
        unsafe { pto_dl_close(handle) };
        return Err(LoadError::Symbol);
    }
    // SAFETY: the orchestration ABI says `pto_orchestrate` is a `PtoOrchestrate`.
    let entry: PtoOrchestrate = unsafe { core::mem::transmute(sym) };
    Ok(Loaded { handle, entry })
}
