//! The entry points CANN's extend-kernels library resolves in a dispatcher SO. Only
//! `DynTileFwkBackendKernelServerInit` does anything; the other two are there because the
//! library looks them up, and refuse.

use std::ffi::c_void;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use crate::naming::*;

/// A return code the extend-kernels library reports as a kernel error.
#[repr(u32)]
enum Code {
    Ok = 0,
    NullArgs = 1,
    NoInnerSo = 2,
    NoFingerprint = 3,
    NoDirectory = 4,
    WriteFailed = 5,
    Unsupported = 6,
}

/// Where CANN loads AICPU kernel SOs from: `PTO_AICPU_KERNEL_DIR` if set, else the directory
/// this SO was loaded from (the extend-kernels library writes it there; inferred).
fn kernel_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("PTO_AICPU_KERNEL_DIR") {
        return Some(PathBuf::from(d));
    }
    let mut info = libc::Dl_info {
        dli_fname: core::ptr::null(),
        dli_fbase: core::ptr::null_mut(),
        dli_sname: core::ptr::null(),
        dli_saddr: core::ptr::null_mut(),
    };
    // SAFETY: `kernel_dir` is a function of this SO, so dladdr finds the SO; `info` is a
    // valid out-pointer.
    let found = unsafe { libc::dladdr(kernel_dir as *const c_void, &mut info) };
    if found == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dladdr's file name is a NUL-terminated string owned by the loader.
    let name = unsafe { std::ffi::CStr::from_ptr(info.dli_fname) };
    let path = Path::new(std::ffi::OsStr::from_bytes(name.to_bytes()));
    path.parent().map(Path::to_path_buf)
}

/// Writes `bytes` to `dir/name` through a temporary file and a rename, mode 0755.
fn install(dir: &Path, name: &str, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o755)
            .open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, dir.join(name))
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

fn init(args: *const u8) -> Code {
    if args.is_null() {
        return Code::NullArgs;
    }
    // SAFETY: `args` points to the device arguments block (`DeviceArgs`, the host's
    // layout), readable for its size; unaligned reads are fine.
    let a = unsafe { args.cast::<DeviceArgs>().read_unaligned() };
    let (inner, len, device) = (a.inner, a.inner_len, a.device);
    if inner == 0 || len == 0 || len > (1 << 30) {
        return Code::NoInnerSo;
    }
    // SAFETY: the host put `len` bytes of the inner SO at `inner` in device memory, which
    // stays allocated until the bootstrap launch finished.
    let so = unsafe { core::slice::from_raw_parts(inner as usize as *const u8, len as usize) };
    let Ok(fp) = fingerprint(so) else {
        return Code::NoFingerprint;
    };
    let Some(dir) = kernel_dir() else {
        return Code::NoDirectory;
    };
    match install(&dir, &inner_so_name(fp, device as u32), so) {
        Ok(()) => Code::Ok,
        Err(_) => Code::WriteFailed,
    }
}

/// Installs the inner SO named by the device arguments `args` points to; 0 on success.
///
/// # Safety
/// `args` is null or points to a device arguments block of the host's layout whose inner
/// SO address and length describe readable memory.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn DynTileFwkBackendKernelServerInit(args: *mut c_void) -> u32 {
    init(args.cast_const().cast()) as u32
}

/// Looked up by the extend-kernels library; not used by this runtime: refuses.
///
/// # Safety
/// None: `args` is not read.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn DynTileFwkBackendKernelServer(_args: *mut c_void) -> u32 {
    Code::Unsupported as u32
}

/// Looked up by the extend-kernels library; not used by this runtime: refuses.
///
/// # Safety
/// None: `args` is not read.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn StaticTileFwkBackendKernelServer(_args: *mut c_void) -> u32 {
    Code::Unsupported as u32
}
