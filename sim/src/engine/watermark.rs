//! The engine thread's completion watermark over post ids that land out of order.

use std::collections::BTreeSet;

/// The engine thread's record of landed post ids.
#[derive(Default)]
pub(super) struct Watermark {
    /// Every post id up to this one has landed.
    pub(super) upto: u64,
    /// Landed ids above `upto + 1`.
    pub(super) ahead: BTreeSet<u64>,
}

impl Watermark {
    /// Records `id` as landed; returns the new watermark if it moved.
    pub(super) fn land(&mut self, id: u64) -> Option<u64> {
        if id != self.upto + 1 {
            self.ahead.insert(id);
            return None;
        }
        self.upto = id;
        while self.ahead.remove(&(self.upto + 1)) {
            self.upto += 1;
        }
        Some(self.upto)
    }
}
