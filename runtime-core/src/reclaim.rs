//! Holds, CONSUMED and the ring watermark.
//!
//! A slot is held by its own completion and by every consumer wired to it. The thread that
//! drops the last hold marks the slot CONSUMED and advances its ring's watermark over every
//! consumed slot in order. Two threads racing (one marking, one advancing) cannot both stop
//! short: each writes its word and then reads the other's with sequential consistency, so at
//! least one of them sees both and carries the watermark on.
#![forbid(unsafe_code)]

use crate::slot::state;
use crate::sync::Ordering;
use crate::tables::Tables;

/// Drops one hold on slot `g`; the last one consumes the slot.
pub(crate) fn release_hold(t: &Tables<'_>, g: usize) {
    let slot = t.slot(g);
    if slot.holds.fetch_sub(1, Ordering::AcqRel) == 1 {
        slot.state.store(state::CONSUMED, Ordering::SeqCst);
        advance_watermark(t, t.ring_of(g));
    }
}

/// Moves `ring`'s watermark over every consumed slot at its head.
pub(crate) fn advance_watermark(t: &Tables<'_>, ring: usize) {
    let ctl = &t.rings[ring].retired.0;
    loop {
        let w = ctl.load(Ordering::SeqCst);
        let g = ring * t.window + crate::ids::Seq(w).index(t.shift);
        let slot = t.slot(g);
        if slot.seq.load(Ordering::Acquire) != w
            || slot.state.load(Ordering::SeqCst) != state::CONSUMED
        {
            return;
        }
        // Losing the race means another thread moved it on; look again from there.
        let _ = ctl.compare_exchange(w, w + 1, Ordering::SeqCst, Ordering::SeqCst);
    }
}
