//! POSIX shared memory, the host crate's only unsafe code: make an object whole before it has
//! a name, open a named one, map it, view it as atomic words, unmap it, unlink it.
#![allow(unsafe_code)]

use std::ffi::CStr;
use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::ptr::NonNull;
use std::sync::atomic::AtomicU64;

use pto_runtime_core::BarrierWords;

/// A shared-memory object mapped read-write into this process.
pub(crate) struct Mapping {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is plain memory that this type only exposes as atomics; it stays mapped
// until the `Mapping` is dropped, whichever thread drops it.
unsafe impl Send for Mapping {}
// SAFETY: as above: shared access goes through atomics only.
unsafe impl Sync for Mapping {}

fn last_error() -> io::Error {
    io::Error::last_os_error()
}

/// The last OS error, or `Ok(())` if it is `errno`: an outcome the caller expects.
fn last_error_unless(errno: i32) -> io::Result<()> {
    let e = last_error();
    if e.raw_os_error() == Some(errno) {
        Ok(())
    } else {
        Err(e)
    }
}

impl Mapping {
    /// Opens and maps `name`. `Ok(None)` if it does not exist yet or is not sized yet.
    pub(crate) fn open(name: &CStr) -> io::Result<Option<Self>> {
        // SAFETY: as in `create`.
        let fd = unsafe { libc::shm_open(name.as_ptr(), libc::O_RDWR, 0 as libc::mode_t) };
        if fd < 0 {
            return last_error_unless(libc::ENOENT).map(|()| None);
        }
        // SAFETY: `stat` is plain data that fstat fills; `fd` is open.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: `fd` is open and `st` is writable.
        let result = if unsafe { libc::fstat(fd, &mut st) } != 0 {
            Err(last_error())
        } else if st.st_size <= 0 {
            Ok(None) // the creator has not sized it yet
        } else {
            Self::map(fd, st.st_size as usize, libc::PROT_READ | libc::PROT_WRITE).map(Some)
        };
        // SAFETY: `fd` is open and not used after this.
        unsafe { libc::close(fd) };
        result
    }

    fn map(fd: libc::c_int, len: usize, prot: libc::c_int) -> io::Result<Self> {
        // SAFETY: a fresh shared mapping of `len` bytes of an open descriptor; the kernel
        // picks the address.
        let p = unsafe { libc::mmap(std::ptr::null_mut(), len, prot, libc::MAP_SHARED, fd, 0) };
        if p == libc::MAP_FAILED {
            return Err(last_error());
        }
        let ptr = NonNull::new(p.cast::<u8>()).ok_or_else(last_error)?;
        Ok(Mapping { ptr, len })
    }

    /// Bytes mapped.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// This process's address of the first byte.
    pub(crate) fn address(&self) -> u64 {
        self.ptr.as_ptr() as u64
    }

    /// The mapping as 64-bit atomic words (only loaded from, in a read-only mapping).
    pub(crate) fn words(&self) -> &[AtomicU64] {
        // SAFETY: the mapping is page-aligned (so 8-aligned), `len / 8` whole words long, zero
        // or written only through atomics by every process, and stays mapped while `self`
        // lives; `AtomicU64` has the size and alignment of `u64`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr().cast::<AtomicU64>(), self.len / 8) }
    }

    /// Three words at `words[at..at + 3]` as a barrier.
    pub(crate) fn barrier(&self, at: usize) -> &BarrierWords {
        let w = &self.words()[at..at + 3];
        // SAFETY: `BarrierWords` is `repr(C)` of three `AtomicU64` fields, so it has the
        // layout of `[AtomicU64; 3]`, which `w` is (bounds-checked above); it borrows `self`.
        unsafe { &*w.as_ptr().cast::<BarrierWords>() }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: `ptr..ptr + len` is the mapping `map` made; no reference into it outlives
        // `self` (every view borrows it).
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}

/// A shared-memory object that has no name yet: made in `/dev/shm` with `O_TMPFILE`, so
/// that whatever happens to its maker before [`Unnamed::link`], no name is ever left
/// behind, and a name, once given, is given to a complete object.
pub(crate) struct Unnamed {
    fd: OwnedFd,
    map: Mapping,
}

/// Where POSIX shared-memory objects live: the name `/x` is the file `/dev/shm/x`.
pub(crate) const SHM_DIR: &str = "/dev/shm";

impl Unnamed {
    /// Makes an object of `len` bytes with no name, reserved up front (zero-filled:
    /// `fallocate`, so a full `/dev/shm` is an `ENOSPC` error here rather than a `SIGBUS`
    /// when a page is first touched), and maps its first `header` bytes to be written.
    pub(crate) fn create(len: usize, header: usize) -> io::Result<Self> {
        use rustix::fs::{Mode, OFlags};
        let fd = rustix::fs::open(
            SHM_DIR,
            OFlags::TMPFILE | OFlags::RDWR | OFlags::CLOEXEC,
            Mode::RUSR | Mode::WUSR,
        )
        .map_err(|e| {
            io::Error::new(
                io::Error::from(e).kind(),
                format!("open({SHM_DIR}, O_TMPFILE): {e} (Linux 3.11 or later is needed)"),
            )
        })?;
        reserve(&fd, len as u64)?;
        let map = Mapping::map(
            fd.as_raw_fd(),
            header.min(len),
            libc::PROT_READ | libc::PROT_WRITE,
        )?;
        Ok(Unnamed { fd, map })
    }

    /// The mapped header, to be written before the object is named.
    pub(crate) fn header(&self) -> &Mapping {
        &self.map
    }

    /// Gives the object the POSIX name `name` (`/x`, the file `/dev/shm/x`). `Ok(false)` if
    /// that name is taken (nothing changes then). The object itself goes away with the last
    /// mapping or descriptor if it never gets a name.
    pub(crate) fn link(&self, name: &CStr) -> io::Result<bool> {
        use rustix::fs::{AtFlags, CWD};
        let path = shm_path(name);
        // Through `/proc` (any user may do that), else by the descriptor itself (which needs
        // CAP_DAC_READ_SEARCH) where `/proc` is not mounted.
        let proc_path = format!("/proc/self/fd/{}", self.fd.as_raw_fd());
        let linked = match rustix::fs::linkat(CWD, &proc_path, CWD, &path, AtFlags::SYMLINK_FOLLOW)
        {
            Err(rustix::io::Errno::NOENT) if !std::path::Path::new("/proc/self").exists() => {
                rustix::fs::linkat(self.fd.as_fd(), "", CWD, &path, AtFlags::EMPTY_PATH)
            }
            other => other,
        };
        match linked {
            Ok(()) => Ok(true),
            Err(rustix::io::Errno::EXIST) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }
}

/// The file of the POSIX name `name` (`/x` is `/dev/shm/x`).
pub(crate) fn shm_path(name: &CStr) -> std::path::PathBuf {
    let name = name.to_string_lossy();
    std::path::Path::new(SHM_DIR).join(name.trim_start_matches('/'))
}

/// What identifies a file and who owns it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct FileStat {
    /// Its device and inode: the same pair is the same file.
    pub(crate) dev: u64,
    /// See `dev`.
    pub(crate) ino: u64,
    /// The user that owns it.
    pub(crate) uid: u32,
    /// Its size in bytes.
    pub(crate) size: u64,
}

impl FileStat {
    fn of(st: &rustix::fs::Stat) -> Self {
        FileStat {
            dev: st.st_dev,
            ino: st.st_ino,
            uid: st.st_uid,
            size: st.st_size.max(0) as u64,
        }
    }
}

/// Maps the first `len` bytes of the regular file `path` read-only (a symbolic link is not
/// followed), with what identifies it. `Ok(None)` if it is gone or not a regular file, or
/// shorter than `len`.
pub(crate) fn read_only(
    path: &std::path::Path,
    len: usize,
) -> io::Result<Option<(Mapping, FileStat)>> {
    use rustix::fs::{FileType, Mode, OFlags};
    let fd = match rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
        Mode::empty(),
    ) {
        Ok(fd) => fd,
        Err(rustix::io::Errno::NOENT | rustix::io::Errno::LOOP) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let st = rustix::fs::fstat(&fd)?;
    let stat = FileStat::of(&st);
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile || stat.size < len as u64 {
        return Ok(None);
    }
    Mapping::map(fd.as_raw_fd(), len, libc::PROT_READ).map(|m| Some((m, stat)))
}

/// Removes the file `path` if it is still the file `was` (a name re-made since is left
/// alone, up to the instant between the check and the removal); `Ok(false)` if it is not.
pub(crate) fn unlink_if_same(path: &std::path::Path, was: &FileStat) -> io::Result<bool> {
    use rustix::fs::{AtFlags, CWD};
    match rustix::fs::statat(CWD, path, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) if (st.st_dev, st.st_ino) == (was.dev, was.ino) => {}
        Ok(_) | Err(rustix::io::Errno::NOENT) => return Ok(false),
        Err(e) => return Err(e.into()),
    }
    match rustix::fs::unlink(path) {
        Ok(()) => Ok(true),
        Err(rustix::io::Errno::NOENT) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// Allocates `len` bytes of `fd` (retrying on a signal); a file system without `fallocate`
/// gets the size alone.
fn reserve(fd: &OwnedFd, len: u64) -> io::Result<()> {
    loop {
        match rustix::fs::fallocate(fd, rustix::fs::FallocateFlags::empty(), 0, len) {
            Ok(()) => return Ok(()),
            Err(rustix::io::Errno::INTR) => continue,
            Err(rustix::io::Errno::OPNOTSUPP) => {
                return rustix::fs::ftruncate(fd, len).map_err(io::Error::from);
            }
            Err(e) => return Err(e.into()),
        }
    }
}

/// Bytes free for unprivileged use in the file system that holds POSIX shared memory
/// (`/dev/shm`), if it can be read.
pub(crate) fn shm_free_bytes() -> Option<u64> {
    let st = rustix::fs::statvfs("/dev/shm").ok()?;
    st.f_bavail.checked_mul(st.f_frsize)
}

/// Removes the object `name` (a missing one is fine).
pub(crate) fn unlink(name: &CStr) -> io::Result<()> {
    // SAFETY: `name` is a valid NUL-terminated string.
    if unsafe { libc::shm_unlink(name.as_ptr()) } == 0 {
        return Ok(());
    }
    last_error_unless(libc::ENOENT)
}

/// Sleeps until the low 32 bits of `word` (shared between processes) may have changed from
/// `expected`, at most `timeout`. Returns at once if they differ already; spurious returns are
/// fine, the caller re-checks.
pub(crate) fn futex_wait(word: &AtomicU64, expected: u32, timeout: std::time::Duration) {
    let ts = libc::timespec {
        tv_sec: timeout.as_secs().min(i64::MAX as u64) as libc::time_t,
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    // SAFETY: `word` is a live, 8-aligned atomic (its low half is the 4-aligned 32-bit word on
    // a little-endian machine); FUTEX_WAIT only reads it and `ts` outlives the call. A shared
    // (not private) futex, so waiters in other processes mapping the same memory are woken.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr().cast::<u32>(),
            libc::FUTEX_WAIT,
            expected,
            &ts as *const libc::timespec,
        );
    }
}

/// Wakes every waiter of `futex_wait` on `word`.
pub(crate) fn futex_wake(word: &AtomicU64) {
    // SAFETY: as in `futex_wait`; FUTEX_WAKE does not touch the word's memory.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr().cast::<u32>(),
            libc::FUTEX_WAKE,
            i32::MAX,
        );
    }
}
