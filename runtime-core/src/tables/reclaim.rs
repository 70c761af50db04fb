//! Holds, CONSUMED and the ring watermark.
//!
//! A slot is held by its own completion and by every consumer wired to it. The thread that
//! drops the last hold marks the slot CONSUMED and advances its ring's watermark over every
//! consumed slot in order. Two threads racing (one marking slot `k` CONSUMED, one moving the
//! watermark to `k`) cannot both stop short: each writes its word, then a SeqCst fence, then
//! reads the other's word, so at least one of them sees both and carries the watermark on.
#![forbid(unsafe_code)]

use crate::ids::Seq;
use crate::region::slot::state;
use crate::sync::{Ordering, fence};
use crate::tables::{SlotIndex, Tables};

/// Drops one hold on slot `g`; the last one consumes the slot.
pub(crate) fn release_hold(t: &Tables<'_>, g: SlotIndex) {
    let slot = t.slot(g);
    if slot.holds.fetch_sub(1, Ordering::AcqRel) == 1 {
        slot.state.store(state::CONSUMED, Ordering::Release);
        fence(Ordering::SeqCst);
        advance_from(t, t.ring_of(g), None);
    }
}

/// [`release_hold`] by a caller that knows the tenant's sequence number `seq` (the slot
/// holds it until the watermark passes it): if the watermark stands at `seq`, the last
/// hold's caller moves it on without reading the slot back.
#[inline]
pub(crate) fn release_hold_of(t: &Tables<'_>, g: SlotIndex, seq: Seq) {
    let slot = t.slot(g);
    if slot.holds.fetch_sub(1, Ordering::AcqRel) == 1 {
        slot.state.store(state::CONSUMED, Ordering::Release);
        fence(Ordering::SeqCst);
        advance_from(t, t.ring_of(g), Some(seq.0));
    }
}

/// Moves `ring`'s watermark over every consumed slot at its head. The caller has written
/// what it consumed and issued a SeqCst fence; it consumed tenant `mine` (if given). While the
/// watermark stands at `mine`, that slot cannot have a new tenant (reuse waits for the
/// watermark to pass it) and its state is the CONSUMED the caller wrote, so reading it back
/// would only confirm both: the compare-exchange alone decides, as it does for every slot.
#[inline(always)]
fn advance_from(t: &Tables<'_>, ring: usize, mine: Option<u64>) {
    let ctl = &t.rings[ring].retired.0;
    let mut w = ctl.load(Ordering::Acquire);
    loop {
        if mine != Some(w) {
            let g = t.slot_of(ring, Seq(w));
            let slot = t.slot(g);
            if slot.seq.load(Ordering::Acquire) != w
                || slot.state.load(Ordering::Acquire) != state::CONSUMED
            {
                return;
            }
        }
        match ctl.compare_exchange(w, w + 1, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => {
                // Pairs with the fence in `release_hold`: either the thread that consumes
                // slot `w + 1` sees the new watermark, or this thread sees its CONSUMED.
                fence(Ordering::SeqCst);
                w += 1;
            }
            // Another thread moved it on; look again from where it is.
            Err(now) => w = now,
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use crate::ids::WorkerClass;
    use crate::region::config::Config;
    use crate::scheduler::completion::finish;
    use crate::sync::Ordering;
    use crate::testing::owned::{Owned, plant, unmeasured};

    #[test]
    fn watermark_waits_for_the_oldest_slot_then_passes_everything_consumed() {
        let owned = Owned::new(Config::tiny());
        let t = owned.tables();
        let ids: std::vec::Vec<_> = (0..3).map(|s| plant(&t, s, WorkerClass::Dummy)).collect();
        let retired = || t.rings[0].retired.0.load(Ordering::SeqCst);
        finish(&t, ids[2], unmeasured(&t));
        finish(&t, ids[1], unmeasured(&t));
        assert_eq!(retired(), 0, "task 0 still holds the head");
        finish(&t, ids[0], unmeasured(&t));
        assert_eq!(retired(), 3, "one advance passes every consumed slot");
    }
}
