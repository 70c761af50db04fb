//! What a running kernel touches, recorded on its core's thread: the byte ranges it reads and
//! writes through the memory API (slices, tensor views, the transfers it posts), kept in a
//! thread-local log while the kernel runs. Atomic word accesses (loads, stores and adds of
//! one word, what counters and flags use) are synchronisation, not data, and are not logged.

use std::cell::RefCell;

/// The ranges one kernel run read and wrote, each list sorted and merged.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Touched {
    /// `[lo, hi)` ranges read.
    pub(crate) reads: Vec<(u64, u64)>,
    /// `[lo, hi)` ranges written.
    pub(crate) writes: Vec<(u64, u64)>,
}

impl Touched {
    /// Adds `other`'s ranges (another lane of the same task).
    pub(crate) fn merge(&mut self, other: Touched) {
        self.reads.extend(other.reads);
        self.writes.extend(other.writes);
        self.reads = merged(std::mem::take(&mut self.reads));
        self.writes = merged(std::mem::take(&mut self.writes));
    }
}

/// `ranges` sorted, with overlapping and touching ones joined.
pub(crate) fn merged(mut ranges: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    ranges.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(ranges.len());
    for (lo, hi) in ranges {
        match out.last_mut() {
            Some(last) if lo <= last.1 => last.1 = last.1.max(hi),
            _ => out.push((lo, hi)),
        }
    }
    out
}

thread_local! {
    static LOG: RefCell<Option<Touched>> = const { RefCell::new(None) };
}

/// Starts logging this thread's accesses (a kernel is about to run).
pub(crate) fn begin() {
    LOG.with(|l| *l.borrow_mut() = Some(Touched::default()));
}

/// Stops logging; what was touched, sorted and merged.
pub(crate) fn end() -> Touched {
    let t = LOG.with(|l| l.borrow_mut().take()).unwrap_or_default();
    Touched {
        reads: merged(t.reads),
        writes: merged(t.writes),
    }
}

/// Logs an access of `len` bytes at `addr` by the kernel this thread runs, if it logs.
pub(crate) fn record(addr: u64, len: usize, write: bool) {
    if len == 0 {
        return;
    }
    let hi = addr.saturating_add(len as u64);
    LOG.with(|l| {
        if let Some(t) = l.borrow_mut().as_mut() {
            if write {
                t.writes.push((addr, hi));
            } else {
                t.reads.push((addr, hi));
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kernels_accesses_are_logged_merged_and_only_while_it_runs() {
        record(0x100, 8, true);
        begin();
        record(0x10, 8, false);
        record(0x18, 8, false);
        record(0x40, 4, true);
        record(0x30, 0, true);
        let t = end();
        assert_eq!(t.reads, [(0x10, 0x20)]);
        assert_eq!(t.writes, [(0x40, 0x44)]);
        record(0x200, 8, true);
        assert_eq!(end(), Touched::default(), "nothing logged outside a kernel");
    }
}
