//! `CommContext`: what a kernel reads to reach the other ranks' communication windows.
//!
//! The layout is the device context PTO-ISA kernels read, byte for byte: 1 056 bytes, every
//! field at a pinned offset (checked at compile time below). `windows_in[i]` is this rank's
//! address of rank `i`'s window; an address inside this rank's own window maps to the same
//! offset in a peer's.
#![forbid(unsafe_code)]

use core::fmt;
use core::mem::{offset_of, size_of};

/// Most ranks a context describes.
pub const MAX_RANKS: usize = 64;

/// The communication context of one rank, as kernels read it.
#[repr(C)]
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct CommContext {
    /// Scratch memory for collective engines (0 when unused).
    pub work_space: u64,
    /// Its size in bytes.
    pub work_space_size: u64,
    /// This rank, `0..rank_num`.
    pub rank_id: u32,
    /// Ranks in the communicator (1..=[`MAX_RANKS`]).
    pub rank_num: u32,
    /// Bytes of each rank's window.
    pub win_size: u64,
    /// This rank's address of each rank's window (unused entries are 0).
    pub windows_in: [u64; MAX_RANKS],
    /// Reserved for outbound windows; kept equal to `windows_in` where filled.
    pub windows_out: [u64; MAX_RANKS],
}

const _: () = {
    assert!(size_of::<CommContext>() == 1056);
    assert!(offset_of!(CommContext, work_space) == 0);
    assert!(offset_of!(CommContext, work_space_size) == 8);
    assert!(offset_of!(CommContext, rank_id) == 16);
    assert!(offset_of!(CommContext, rank_num) == 20);
    assert!(offset_of!(CommContext, win_size) == 24);
    assert!(offset_of!(CommContext, windows_in) == 32);
    assert!(offset_of!(CommContext, windows_out) == 544);
};

/// Why a context or an address translation is refused.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum CommError {
    /// `rank_num` is 0 or above [`MAX_RANKS`].
    RankCount {
        /// The count given.
        ranks: u32,
    },
    /// A rank at or past `rank_num`.
    NoSuchRank {
        /// The rank given.
        rank: u32,
        /// Ranks in the communicator.
        ranks: u32,
    },
    /// An address (or a range) outside this rank's window.
    OutsideWindow {
        /// The address given.
        addr: u64,
        /// Bytes from it.
        len: u64,
    },
    /// A sub-domain view that does not fit the window.
    ViewOutsideWindow {
        /// Its offset in the window.
        offset: u64,
        /// Its size.
        size: u64,
        /// The window's size.
        window: u64,
    },
    /// A sub-domain that lists a rank twice, or leaves this rank out.
    BadDomain,
}

impl fmt::Display for CommError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::RankCount { ranks } => {
                write!(
                    f,
                    "{ranks} ranks: a communicator has 1 to {MAX_RANKS} ranks"
                )
            }
            Self::NoSuchRank { rank, ranks } => {
                write!(
                    f,
                    "rank {rank} does not exist: the communicator has {ranks}"
                )
            }
            Self::OutsideWindow { addr, len } => write!(
                f,
                "{len} bytes at {addr:#x} are not inside this rank's window"
            ),
            Self::ViewOutsideWindow {
                offset,
                size,
                window,
            } => write!(
                f,
                "a view of {size} bytes at offset {offset} does not fit a window of {window} bytes"
            ),
            Self::BadDomain => write!(
                f,
                "a sub-domain must list distinct ranks of the communicator, this rank among them"
            ),
        }
    }
}

impl core::error::Error for CommError {}

impl CommContext {
    /// The context of rank `rank_id` of `windows.len()` ranks whose windows (as this rank
    /// addresses them) start at `windows[i]`, each `win_size` bytes.
    pub fn new(rank_id: u32, windows: &[u64], win_size: u64) -> Result<Self, CommError> {
        let ranks = windows.len() as u32;
        if windows.is_empty() || windows.len() > MAX_RANKS {
            return Err(CommError::RankCount { ranks });
        }
        if rank_id >= ranks {
            return Err(CommError::NoSuchRank {
                rank: rank_id,
                ranks,
            });
        }
        let mut windows_in = [0u64; MAX_RANKS];
        windows_in[..windows.len()].copy_from_slice(windows);
        Ok(CommContext {
            work_space: 0,
            work_space_size: 0,
            rank_id,
            rank_num: ranks,
            win_size,
            windows_in,
            windows_out: windows_in,
        })
    }

    /// This rank's own window.
    pub fn local_window(&self) -> u64 {
        self.windows_in[self.rank_id as usize % MAX_RANKS]
    }

    /// The address, in `peer`'s window, of the `len` bytes at `addr` in this rank's window.
    pub fn peer_address(&self, peer: u32, addr: u64, len: u64) -> Result<u64, CommError> {
        if peer >= self.rank_num {
            return Err(CommError::NoSuchRank {
                rank: peer,
                ranks: self.rank_num,
            });
        }
        let offset = addr
            .checked_sub(self.local_window())
            .filter(|o| o.checked_add(len).is_some_and(|end| end <= self.win_size))
            .ok_or(CommError::OutsideWindow { addr, len })?;
        Ok(self.windows_in[peer as usize] + offset)
    }

    /// A view of the sub-domain `ranks` (communicator ranks, this rank among them), each
    /// window narrowed to `size` bytes at `offset`. Local: no other rank takes part.
    pub fn sub_domain(&self, ranks: &[u32], offset: u64, size: u64) -> Result<Self, CommError> {
        if ranks.is_empty() || ranks.len() > self.rank_num as usize {
            return Err(CommError::RankCount {
                ranks: ranks.len() as u32,
            });
        }
        if offset
            .checked_add(size)
            .is_none_or(|end| end > self.win_size)
        {
            return Err(CommError::ViewOutsideWindow {
                offset,
                size,
                window: self.win_size,
            });
        }
        let mut windows = [0u64; MAX_RANKS];
        let mut me = None;
        for (i, &r) in ranks.iter().enumerate() {
            if r >= self.rank_num {
                return Err(CommError::NoSuchRank {
                    rank: r,
                    ranks: self.rank_num,
                });
            }
            if ranks[..i].contains(&r) {
                return Err(CommError::BadDomain);
            }
            if r == self.rank_id {
                me = Some(i as u32);
            }
            windows[i] = self.windows_in[r as usize] + offset;
        }
        let me = me.ok_or(CommError::BadDomain)?;
        CommContext::new(me, &windows[..ranks.len()], size)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn four() -> CommContext {
        let w = [0x1000_0000, 0x2000_0000, 0x3000_0000, 0x4000_0000];
        CommContext::new(1, &w, 0x10_0000).unwrap()
    }

    #[test]
    fn addresses_in_my_window_map_to_the_same_offset_in_a_peers() {
        let c = four();
        assert_eq!(c.local_window(), 0x2000_0000);
        assert_eq!(c.peer_address(3, 0x2000_0040, 8), Ok(0x4000_0040));
        assert_eq!(c.peer_address(1, 0x2000_0040, 8), Ok(0x2000_0040));
        assert_eq!(
            c.peer_address(4, 0x2000_0040, 8),
            Err(CommError::NoSuchRank { rank: 4, ranks: 4 })
        );
        assert!(c.peer_address(0, 0x1000_0000, 8).is_err(), "not my window");
        assert!(
            c.peer_address(0, 0x2000_0000 + 0x10_0000 - 4, 8).is_err(),
            "runs past the end"
        );
        assert!(c.peer_address(0, 0x2000_0000 + 0x10_0000 - 8, 8).is_ok());
    }

    #[test]
    fn a_sub_domain_renumbers_its_ranks_and_narrows_the_windows() {
        let c = four();
        let d = c.sub_domain(&[3, 1], 0x100, 0x1000).unwrap();
        assert_eq!((d.rank_id, d.rank_num, d.win_size), (1, 2, 0x1000));
        assert_eq!(d.windows_in[0], 0x4000_0100);
        assert_eq!(d.local_window(), 0x2000_0100);
        assert_eq!(d.peer_address(0, 0x2000_0108, 8), Ok(0x4000_0108));
        assert_eq!(
            c.sub_domain(&[0, 2], 0, 16),
            Err(CommError::BadDomain),
            "without me"
        );
        assert_eq!(c.sub_domain(&[1, 1], 0, 16), Err(CommError::BadDomain));
        assert!(matches!(
            c.sub_domain(&[1], 0x10_0000, 1),
            Err(CommError::ViewOutsideWindow { .. })
        ));
        assert!(matches!(
            c.sub_domain(&[1, 9], 0, 1),
            Err(CommError::NoSuchRank { rank: 9, .. })
        ));
    }

    #[test]
    fn bad_rank_counts_and_ranks_are_errors() {
        assert_eq!(
            CommContext::new(0, &[], 1),
            Err(CommError::RankCount { ranks: 0 })
        );
        assert_eq!(
            CommContext::new(0, &[0; 65], 1),
            Err(CommError::RankCount { ranks: 65 })
        );
        assert_eq!(
            CommContext::new(2, &[1, 2], 1),
            Err(CommError::NoSuchRank { rank: 2, ranks: 2 })
        );
        assert!(std::format!("{}", CommError::RankCount { ranks: 0 }).contains("1 to 64"));
    }
}
