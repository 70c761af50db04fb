//! The live tasks of a stopped run, read from their slots: which wait for producers (and
//! which producers) and which were ready. Slow walks, for stall reports only.
#![forbid(unsafe_code)]

use crate::ids::{Seq, TaskId};
use crate::observe::stall::Stall;
use crate::region::slot::{Meta, state};
use crate::sync::Ordering;
use crate::tables::{SlotIndex, Tables};

impl<'r> Tables<'r> {
    /// Slot `g` if task `id` is its tenant and has not finished.
    fn unfinished(&self, id: TaskId) -> Option<SlotIndex> {
        let g = self.gslot(id);
        let slot = self.slot(g);
        (slot.seq.load(Ordering::Acquire) == id.seq().0
            && slot.state.load(Ordering::Acquire) == state::PENDING)
            .then_some(g)
    }

    /// Every submitted, unfinished task that waits for producers or was ready. Tasks in a
    /// deferred set are left to their scheduler's report.
    pub(crate) fn stalls(&self) -> impl Iterator<Item = Stall> + '_ {
        self.rings.iter().enumerate().flat_map(move |(r, ring)| {
            let (from, to) = (ring.retired(), ring.next.0.load(Ordering::Acquire));
            (from..to).filter_map(move |seq| {
                let task = TaskId::new(self.cfg.epoch, r as u8, Seq(seq));
                let slot = self.slot(self.unfinished(task)?);
                if slot.deferred.load(Ordering::Acquire) != 0 {
                    return None;
                }
                match slot.pending.load(Ordering::Acquire) {
                    0 => Some(Stall::Ready {
                        task,
                        class: Meta::decode(slot.meta.load(Ordering::Acquire)).ok()?.class,
                    }),
                    left => Some(Stall::Producers { task, left }),
                }
            })
        })
    }

    /// The producers of `task` that had not finished (none if `task` itself finished or is
    /// not a live task).
    pub(crate) fn producers_of(&self, task: TaskId) -> impl Iterator<Item = TaskId> + '_ {
        self.pinned_producers(task)
            .filter(move |&p| self.unfinished(p).is_some())
    }

    /// The finished producers of live `task` if it waits for more producers than have not
    /// finished (one of those finished without releasing it); none otherwise.
    pub(crate) fn finished_producers_of(&self, task: TaskId) -> impl Iterator<Item = TaskId> + '_ {
        let waits = self
            .unfinished(task)
            .map_or(0, |g| self.slot(g).pending.load(Ordering::Acquire));
        let lost = waits as usize > self.producers_of(task).count();
        self.pinned_producers(task)
            .filter(move |&p| lost && self.unfinished(p).is_none() && self.tenant(p))
    }

    /// The producers live `task` pinned, in its edge order (none if it is not live).
    fn pinned_producers(&self, task: TaskId) -> impl Iterator<Item = TaskId> + '_ {
        let g = self.unfinished(task);
        let pinned = g.map_or(0, |g| {
            Meta::decode(self.slot(g).meta.load(Ordering::Acquire)).map_or(0, |m| m.pinned)
        });
        (0..pinned as usize).filter_map(move |k| {
            let e = self.edge(self.edge_ref(g?, k));
            Some(TaskId::from_raw(e.producer.load(Ordering::Acquire)))
        })
    }

    /// Whether `id` is still its slot's tenant (a pinned producer stays one).
    fn tenant(&self, id: TaskId) -> bool {
        self.slot(self.gslot(id)).seq.load(Ordering::Acquire) == id.seq().0
    }
}
