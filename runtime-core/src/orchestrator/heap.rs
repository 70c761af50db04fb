//! The output heap: each ring's share of the platform's heap, handed out by
//! [`Orchestrator::alloc`] as a ring buffer in submission order and reclaimed as the ring's
//! watermark passes the tasks that own it.
//!
//! Offsets run up forever (`head`); the byte at offset `o` lives at `base + o % len`. A task's
//! buffers start at the `heap_start` in its tenant row, so the oldest live task's start is
//! the tail: everything before it belongs to retired tasks.
#![forbid(unsafe_code)]

use super::Orchestrator;
use crate::error::SubmitError;
use crate::ids::{Seq, TaskId};
use crate::platform::Platform;
use crate::tables::SlotIndex;
use crate::tensor::arg::Buffer;

/// One ring's heap, as the orchestrator sees it.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct RingHeap {
    /// Device address of the ring's share.
    pub(crate) base: u64,
    /// Its bytes.
    pub(crate) len: u64,
    /// Offset of the next byte to hand out.
    pub(crate) head: u64,
    /// Offset where the buffers of the ring's next task begin.
    pub(crate) pending: u64,
}

/// Where an allocation goes, if it fits: its offset and the new head.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Placement {
    pub(crate) offset: u64,
    pub(crate) head: u64,
}

impl RingHeap {
    /// Where `bytes` at an address aligned to `align` (a power of two) would go, skipping
    /// to the start of the buffer rather than wrapping a buffer around its end. `None` if
    /// that would need more than `len` bytes past `tail` (the oldest live task's start).
    ///
    /// The address is aligned, not the offset: a ring's share need not start aligned.
    pub(crate) fn place(&self, bytes: u64, align: u64, tail: u64) -> Option<Placement> {
        let pos = self.head % self.len;
        let pad = pad_to(self.base.checked_add(pos)?, align);
        let offset = if pos.checked_add(pad)?.checked_add(bytes)? <= self.len {
            self.head + pad
        } else {
            // Skip the rest of this lap (the skipped bytes belong to this task too), then
            // pad from the share's first address.
            let pad = pad_to(self.base, align);
            if pad.checked_add(bytes)? > self.len {
                return None;
            }
            self.head.checked_add(self.len - pos)?.checked_add(pad)?
        };
        let head = offset.checked_add(bytes)?;
        (head - tail <= self.len).then_some(Placement { offset, head })
    }

    /// The device address of `offset`.
    pub(crate) fn address(&self, offset: u64) -> u64 {
        self.base + offset % self.len
    }
}

impl<P: Platform> Orchestrator<'_, '_, P> {
    /// [`Orchestrator::alloc`] as a [`Buffer`]: what the tensor arguments of the task that
    /// writes it, and of its consumers, name.
    pub fn alloc_buffer(
        &mut self,
        ring: u8,
        bytes: u64,
        align: u64,
    ) -> Result<Buffer, SubmitError> {
        Ok(Buffer::new(self.alloc(ring, bytes, align)?, bytes))
    }

    /// Allocates an output buffer of `bytes` bytes aligned to `align` (a power of two) from
    /// `ring`'s heap and returns its device address. The buffer belongs to the next task
    /// submitted to `ring` and is reclaimed when that task is, that is once it finished, its
    /// consumers finished, and its scope ended: submit the producer and its consumers in one
    /// scope, so a consumer submitted after the producer finished still finds the buffer.
    /// Waits (bounded by `submit_timeout_us`) while the heap is full; fails at once when only
    /// the end of an open scope could make room.
    pub fn alloc(&mut self, ring: u8, bytes: u64, align: u64) -> Result<u64, SubmitError> {
        self.check_running()?;
        let rings = self.t.cfg().rings;
        if ring >= rings {
            return Err(SubmitError::BadRing { ring, rings });
        }
        if !align.is_power_of_two() {
            return Err(SubmitError::BadAlignment { align });
        }
        let r = ring as usize;
        let heap = self.heaps[r];
        let worst = bytes.saturating_add(align - 1);
        if heap.len == 0 || worst > heap.len {
            return Err(SubmitError::HeapTooSmall {
                bytes: worst,
                heap: heap.len,
            });
        }
        let placed = self.wait_bounded(
            |o, _| {
                let (tail, oldest) = o.heap_tail(r);
                if let Some(p) = o.heaps[r].place(bytes, align, tail) {
                    return Ok(Some(p));
                }
                // Room only comes from retiring the oldest live task: if a scope holds it,
                // waiting cannot succeed.
                match oldest {
                    Some(g) if o.tenants.row(g).scoped => Err(SubmitError::ScopeDeadlock {
                        held: o.t.task_at(g),
                        ring,
                        window: o.t.window() as u32,
                        open: o.scopes.len(),
                    }),
                    _ => Ok(None),
                }
            },
            |waited_us| SubmitError::HeapFull {
                ring,
                bytes,
                waited_us,
            },
        )?;
        self.heaps[r].head = placed.head;
        Ok(self.heaps[r].address(placed.offset))
    }

    /// The heap offset before which every buffer of `r` is free again (the oldest live
    /// task's start, or the pending task's if every task retired), and that task's slot.
    pub(super) fn heap_tail(&self, r: usize) -> (u64, Option<SlotIndex>) {
        let t = self.t;
        let retired = t.rings()[r].retired();
        if retired >= self.next[r] {
            return (self.heaps[r].pending, None);
        }
        let g = t.gslot(TaskId::new(t.cfg().epoch, r as u8, Seq(retired)));
        (self.tenants.row(g).heap_start, Some(g))
    }
}

/// Bytes from `addr` to the next multiple of `align` (a power of two).
#[inline]
fn pad_to(addr: u64, align: u64) -> u64 {
    addr.wrapping_neg() & (align - 1)
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn heap(len: u64) -> RingHeap {
        RingHeap {
            base: 0x1000,
            len,
            ..RingHeap::default()
        }
    }

    #[test]
    fn aligns_fills_and_refuses_past_the_tail() {
        let mut h = heap(256);
        let a = h.place(10, 8, 0).unwrap();
        assert_eq!((a.offset, a.head, h.address(a.offset)), (0, 10, 0x1000));
        h.head = a.head;
        let b = h.place(100, 64, 0).unwrap();
        assert_eq!(b.offset, 64, "aligned");
        h.head = b.head; // 164
        assert_eq!(h.place(100, 8, 0), None, "needs 268 bytes past the tail");
        assert!(h.place(92, 1, 0).is_some(), "exactly to the end");
    }

    #[test]
    fn wraps_by_skipping_the_end_of_the_lap() {
        let mut h = heap(256);
        h.head = 200;
        // 100 bytes do not fit in 200..256: they go to the next lap, at 256 (address base).
        assert_eq!(
            h.place(100, 8, 0),
            None,
            "the tail still holds the first lap"
        );
        let p = h.place(100, 8, 150).unwrap();
        assert_eq!((p.offset, p.head, h.address(p.offset)), (256, 356, 0x1000));
        assert_eq!(h.place(300, 1, 200), None, "larger than the heap");
    }

    #[test]
    fn addresses_are_aligned_when_the_share_is_not() {
        let mut h = RingHeap {
            base: 0x1000 + 1000,
            len: 1000,
            ..RingHeap::default()
        };
        let mut tail = 0;
        for k in 0..40u64 {
            let align = 1 << (k % 8);
            let p = h.place(90, align, tail).unwrap();
            let a = h.address(p.offset);
            assert_eq!(
                a % align,
                0,
                "allocation {k}: {a:#x} is not aligned to {align}"
            );
            assert!(a >= h.base && a + 90 <= h.base + h.len, "inside the share");
            h.head = p.head;
            tail = p.offset; // only the newest buffer stays live
        }
        assert_eq!(
            h.place(1000, 64, h.head),
            None,
            "with its padding it does not fit"
        );
    }
}
