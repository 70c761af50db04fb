//! A user's shared object loaded from its bytes, through an anonymous in-memory file
//! (`memfd_create`): nothing is written to disk, so nothing is left behind whatever ends the
//! process.
//!
//! The loader knows the SO by its path, `/proc/self/fd/N`, and hands back an SO already
//! loaded under the same path instead of opening the file again. So the file stays open
//! while its SO is loaded: no other SO of this process can then be loaded from fd N.

use std::io::Write;
use std::os::fd::AsRawFd;

use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW};
use rustix::fs::{MemfdFlags, memfd_create};

/// A loaded shared object; unloaded on drop, before its in-memory file closes.
pub struct SharedObject {
    /// Dropped first: unloaded before the file closes.
    lib: Library,
    /// The in-memory file, open while the SO is loaded (its fd number names it).
    _file: std::fs::File,
}

impl std::fmt::Debug for SharedObject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedObject").finish_non_exhaustive()
    }
}

impl SharedObject {
    /// Loads the SO whose bytes are `so` (`RTLD_NOW | RTLD_LOCAL`: every symbol it needs is
    /// resolved now, and its own symbols stay its own). What went wrong, in words, naming
    /// `what` (e.g. "the orchestration SO" or a file name).
    ///
    /// Loading runs the SO's initialisers: the SO is user code the caller is about to run
    /// anyway.
    pub fn load(so: &[u8], what: &str) -> Result<Self, String> {
        let fd = memfd_create("pto-user-so", MemfdFlags::CLOEXEC)
            .map_err(|e| format!("cannot make an in-memory file for {what}: {e}"))?;
        let mut file = std::fs::File::from(fd);
        file.write_all(so)
            .map_err(|e| format!("cannot write {what} to an in-memory file: {e}"))?;
        let path = format!("/proc/self/fd/{}", file.as_raw_fd());
        // SAFETY: loading runs the SO's initialisers; the SO is the user's code, which the
        // caller loads in order to run it.
        let lib = unsafe { Library::open(Some(&path), RTLD_NOW | RTLD_LOCAL) }
            .map_err(|e| format!("cannot load {what}: {}", strip_fd_path(&e.to_string())))?;
        Ok(SharedObject { lib, _file: file })
    }

    /// The address of symbol `name` as this SO (or a library it needs) defines it, if any.
    pub fn address(&self, name: &str) -> Option<usize> {
        let mut c = name.as_bytes().to_vec();
        c.push(0);
        // SAFETY: the symbol is read as an address only, never called or dereferenced here.
        let sym = unsafe { self.lib.get::<*const u8>(&c) }.ok()?;
        Some(*sym as usize)
    }
}

impl SharedObject {
    /// The 32-bit value of the data symbol `name`, if the loader finds it. Only for a symbol
    /// the SO's ELF symbol table shows as a 4-byte data object it exports
    /// (`c_kernel::elf::check` checks the ABI version's).
    pub(crate) fn read_u32(&self, name: &str) -> Option<u32> {
        let at = self.address(name)?;
        if at == 0 || !at.is_multiple_of(4) {
            return None;
        }
        // SAFETY: the symbol is a 4-byte data object the SO exports (checked in its ELF symbol
        // table before it was loaded), so `at` is a readable, aligned u32 while it is loaded.
        Some(unsafe { std::ptr::read_volatile(at as *const u32) })
    }
}

/// The loader's message without the in-memory file's path (`/proc/self/fd/N: ...`), which
/// means nothing to a user.
fn strip_fd_path(msg: &str) -> String {
    match msg.find("/proc/self/fd/") {
        Some(at) => {
            let rest = &msg[at..];
            let after = rest.find(": ").map_or(rest.len(), |i| i + 2);
            format!("{}{}", &msg[..at], &rest[after..])
        }
        None => msg.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_that_are_no_so_are_refused_in_words() {
        let e = SharedObject::load(b"not an elf", "kernel k.so").unwrap_err();
        assert!(e.starts_with("cannot load kernel k.so: "), "{e}");
        assert!(!e.contains("/proc/self/fd"), "{e}");
    }

    #[test]
    fn the_fd_path_leaves_the_loader_message() {
        assert_eq!(
            strip_fd_path("/proc/self/fd/7: undefined symbol: foo"),
            "undefined symbol: foo"
        );
        assert_eq!(strip_fd_path("plain"), "plain");
    }
}
