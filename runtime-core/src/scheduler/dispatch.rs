//! Dispatch policy and the send: idle cores first, then pending slots; MIX tasks on whole
//! idle clusters, with priority on MIX-capable clusters while one waits; DUMMY tasks
//! finished on the spot.
#![forbid(unsafe_code)]

use super::cores::{Inflight, LocalCore};
use super::{DUMMY_BATCH, Scheduler};
use crate::ids::{TaskId, WorkerClass};
use crate::orchestrator::tensor_arg::KernelTensor;
use crate::platform::{Payload, Platform};
use crate::queues::ready_queue::Ready;
use crate::region::config::{MAX_ARGS, MAX_TENSORS};
use crate::region::slot::Meta;
use crate::sync::Ordering;

impl<P: Platform> Scheduler<'_, '_, P> {
    /// Fills idle cores of `class` (except `reserved` ones) first, then pending slots, while
    /// its queue has work.
    pub(super) fn dispatch_single(&mut self, class: WorkerClass, reserved: u128) -> bool {
        let kind = self.cores.kind[class.index()] & !reserved;
        let mut progress = false;
        loop {
            let idle = self.cores.idle & kind;
            let target = if idle != 0 {
                idle
            } else {
                self.cores.pending_free & kind
            };
            if target == 0 {
                return progress;
            }
            let Some(raw) = self.t.queue(class).pop() else {
                return progress;
            };
            let i = LocalCore::lowest(target);
            self.send(i, TaskId::from_raw(raw), 0, 1);
            progress = true;
        }
    }

    /// Starts MIX tasks on clusters whose three cores are all idle. Returns whether it
    /// started any, and whether MIX work is still waiting.
    pub(super) fn dispatch_mix(&mut self) -> (bool, bool) {
        let queue = *self.t.queue(WorkerClass::Mix);
        if self.cores.mix.is_empty() || !queue.maybe_nonempty() {
            return (false, false);
        }
        let mut progress = false;
        for c in 0..self.cores.mix.len() {
            let lanes = self.cores.mix[c];
            let mask = lanes.iter().fold(0u128, |m, &l| m | l.bit());
            if self.cores.idle & mask != mask {
                continue;
            }
            let Some(raw) = queue.pop() else {
                return (progress, false);
            };
            for (lane, &l) in lanes.iter().enumerate() {
                self.send(l, TaskId::from_raw(raw), lane as u8, 3);
            }
            progress = true;
        }
        (progress, queue.maybe_nonempty())
    }

    /// Sends a task the funnel handed over (made ready by a FIN just seen, its queue empty)
    /// to the lowest idle core of its class, skipping the queue's push and pop on a chain's
    /// critical path. Queues it instead when no core of its class is idle, or while MIX work
    /// waits (single-core tasks then leave the MIX clusters alone, see
    /// [`Scheduler::dispatch_mix`]).
    pub(super) fn hand_off(&mut self, ready: Ready) {
        let idle = self.cores.idle & self.cores.kind[ready.class.index()];
        let mix_waits =
            !self.cores.mix.is_empty() && self.t.queue(WorkerClass::Mix).maybe_nonempty();
        if idle == 0 || mix_waits {
            ready.enqueue(&self.t);
            return;
        }
        self.send(LocalCore::lowest(idle), ready.id, 0, 1);
    }

    /// Writes the payload of `task`'s `lane` to local core `i` and rings its doorbell.
    #[inline(always)]
    pub(super) fn send(&mut self, i: LocalCore, task: TaskId, lane: u8, lanes: u8) {
        let g = self.t.gslot(task);
        let slot = self.t.slot(g);
        let meta = Meta::unpack(slot.meta.load(Ordering::Relaxed));
        let mut buf = [0u64; MAX_ARGS as usize];
        let n = (meta.nargs as usize).min(buf.len());
        if n != 0 {
            // The row is looked up only for a task that has arguments.
            for (dst, src) in buf[..n].iter_mut().zip(self.t.args_of(g)) {
                *dst = src.load(Ordering::Relaxed);
            }
        }
        let mut tensors = heapless::Vec::<KernelTensor, { MAX_TENSORS as usize }>::new();
        let nt = meta.ntensors as usize;
        if nt != 0 {
            for cell in self.t.tensors_of(g).iter().take(nt) {
                // At most max_tensors <= MAX_TENSORS cells: the push cannot fail.
                let _ = tensors.push(cell.load());
            }
        }
        let (id, token) = {
            let c = self.cores.core(i);
            (c.id, c.next_token)
        };
        let payload = Payload {
            task,
            kernel: meta.kernel,
            lane,
            lanes,
            args: &buf[..n],
            tensors: &tensors,
            profile: self.tasks_level,
        };
        if self.tasks_level
            && lane == 0
            && let Some(r) = self.t.record_in(slot)
        {
            r.stamp_dispatch(self.by.now, id);
        }
        self.p.write_payload(id, token, &payload);
        self.p.ring_doorbell(id, token);
        self.cores.occupy(
            i,
            Inflight {
                task,
                slot: g,
                token,
                lanes,
            },
        );
        self.dispatched += 1;
    }

    /// Finishes a batch of ready DUMMY tasks here and now.
    pub(super) fn finish_dummies(&mut self) -> bool {
        let q = *self.t.queue(WorkerClass::Dummy);
        let mut progress = false;
        for _ in 0..DUMMY_BATCH {
            let Some(raw) = q.pop() else { break };
            self.finish(TaskId::from_raw(raw));
            progress = true;
        }
        progress
    }
}
