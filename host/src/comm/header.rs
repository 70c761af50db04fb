//! The layout of a communicator's shared object: `[4 KiB header][window of rank 0][window of
//! rank 1]...`, the header's words, and the once-only removal of the object's name.
#![forbid(unsafe_code)]

use std::sync::atomic::Ordering;

use super::raw_shm::{Mapping, unlink};

/// Removes `name`, the name of `map`, unless someone already did or is doing it (the
/// header's [`W_UNLINKED`] word decides, so a name is removed once and never a later job's).
pub(crate) fn remove_once(map: &Mapping, name: &std::ffi::CStr) -> std::io::Result<()> {
    if map.words()[W_UNLINKED]
        .compare_exchange(0, 1, Ordering::AcqRel, Ordering::Acquire)
        .is_ok()
    {
        unlink(name)?;
    }
    Ok(())
}

pub(crate) const HEADER: u64 = 4096;
pub(crate) const MAGIC: u64 = 0x5054_4f5f_434f_4d4d; // "PTO_COMM"
/// Header words.
pub(crate) const W_MAGIC: usize = 0;
pub(crate) const W_RANKS: usize = 1;
pub(crate) const W_WINDOW: usize = 2;
pub(crate) const W_ATTACHED: usize = 3;
pub(crate) const W_JOINED: usize = 4;
/// Non-zero once the launcher watching the job has mapped the object.
pub(crate) const W_WATCHED: usize = 5;
/// Non-zero once someone took on removing the object's name (removal happens once).
pub(crate) const W_UNLINKED: usize = 6;
pub(crate) const W_BARRIER: usize = 8;
/// One heartbeat word per rank: 0 before it joins, then bumped while it waits, [`LEFT`] once
/// it left.
pub(crate) const W_HEARTBEAT: usize = 64;
/// One word per rank: its process id (on this host), written when it joins.
pub(crate) const W_PID: usize = 128;
