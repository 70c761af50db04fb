//! Dispatch policy and the send: idle cores first, then pending slots; MIX tasks on whole
//! idle clusters, with priority on MIX-capable clusters while one waits; a task's SPMD
//! blocks spread over the free cores ([`blocks`](super::blocks)); DUMMY tasks finished on
//! the spot.
#![forbid(unsafe_code)]

use super::cores::{Inflight, LocalCore, MixCluster, Share};
use super::{DUMMY_BATCH, Scheduler, blocks};
use crate::error::{FatalCause, FatalError};
use crate::ids::{KernelId, TaskId, WorkerClass};
use crate::observe::stats::SchedCtl;
use crate::platform::{Payload, Platform};
use crate::region::config::{MAX_ARGS, MAX_CORES, MAX_TENSORS};
use crate::region::slot::{Blocks, Meta, TaskSlot};
use crate::sync::Ordering;
use crate::tables::SlotIndex;
use crate::tables::ready::Ready;
use crate::tensor::arg::KernelTensor;

/// The only block of a task of one.
const ONE_BLOCK: Blocks = Blocks::first(1);

/// A ready task's slot, where it is and its constants' word, read once for its dispatch
/// (unpacked where used, so only the fields a path needs are decoded).
#[derive(Clone, Copy)]
pub(super) struct At<'r> {
    g: SlotIndex,
    pub(super) slot: &'r TaskSlot,
    meta: u64,
}

impl At<'_> {
    /// The task has several blocks.
    #[inline(always)]
    fn spmd(&self) -> bool {
        Meta::is_spmd(self.meta)
    }

    /// The task has several blocks or a predicate: not sent straight away.
    #[inline(always)]
    fn special(&self) -> bool {
        Meta::is_special(self.meta)
    }

    /// The task carries a predicate.
    #[inline(always)]
    fn predicated(&self) -> bool {
        Meta::is_predicated(self.meta)
    }

    /// Its blocks start together.
    fn sync(&self) -> bool {
        Meta::unpack(self.meta).sync
    }
}

impl<'r, P: Platform> Scheduler<'r, '_, P> {
    /// Fills idle cores of `class` (except `reserved` ones) first, then pending slots, while
    /// its queue has work. A task of several blocks takes every idle core for its blocks, or
    /// one pending slot when none is idle; in one pass it takes no second pending slot, so
    /// that other schedulers' idle cores get its remaining blocks first.
    pub(super) fn dispatch_single(&mut self, class: WorkerClass, reserved: u128) -> bool {
        let kind = self.cores.kind[class.index()] & !reserved;
        let mut progress = false;
        // The task this pass queued again with blocks left, if any.
        let mut left: Option<u64> = None;
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
            let task = TaskId::from_raw(raw);
            let at = self.at(task);
            if !at.special() {
                self.send(LocalCore::lowest(target), task, at, 0, 1, ONE_BLOCK);
            } else if at.predicated() && self.skipped(task, at) {
                // Finished without running: its core is still idle.
            } else if !at.spmd() {
                self.send(LocalCore::lowest(target), task, at, 0, 1, ONE_BLOCK);
            } else if !self.send_blocks(class, task, at, idle, target, &mut left) {
                return progress;
            }
            progress = true;
        }
    }

    /// [`Scheduler::dispatch_single`] of `task` (at `at`), a task of several blocks: claims one of its next blocks per `idle` core, or one for a core of
    /// `target` with a pending slot free if none is idle and this pass did not queue the
    /// task again already (`left`). Returns `false` if it left the task to other schedulers
    /// instead (the pass ends).
    #[cold]
    #[inline(never)]
    fn send_blocks(
        &mut self,
        class: WorkerClass,
        task: TaskId,
        at: At<'r>,
        idle: u128,
        target: u128,
        left: &mut Option<u64>,
    ) -> bool {
        if at.sync() {
            self.sync_popped(class, task, at);
            return false;
        }
        if idle == 0 && *left == Some(task.raw()) {
            // Its blocks left for idle cores elsewhere, rather than this pending slot.
            Ready { id: task, class }.enqueue(&self.t);
            return false;
        }
        let b = Blocks::unpack(at.slot.blocks.load(Ordering::Relaxed));
        let free = if idle != 0 { idle.count_ones() } else { 1 };
        let claim = blocks::claim(&self.t, task, at.g, class, b, free as u16);
        if claim.mine.end < claim.count {
            *left = Some(task.raw());
        }
        let mut cores = target;
        for block in claim.mine {
            let i = LocalCore::lowest(cores);
            cores &= cores - 1;
            let b = Blocks {
                count: claim.count,
                next: block,
            };
            self.send(i, task, at, 0, 1, b);
        }
        true
    }

    /// Starts MIX tasks on clusters whose three cores are all idle, a block per cluster.
    /// Returns whether it started any, and whether MIX work is still waiting.
    pub(super) fn dispatch_mix(&mut self) -> (bool, bool) {
        let queue = *self.t.queue(WorkerClass::Mix);
        if matches!(self.sync, Some((WorkerClass::Mix, _))) {
            // A held sync-start MIX task waits for the clusters: nothing else goes there.
            return (false, true);
        }
        if self.cores.mix.is_empty() || !queue.maybe_nonempty() {
            return (false, false);
        }
        let mut idle = heapless::Vec::<MixCluster, { MAX_CORES as usize }>::new();
        for &lanes in &self.cores.mix {
            let mask = lanes.iter().fold(0u128, |m, &l| m | l.bit());
            if self.cores.idle & mask == mask {
                // At most as many clusters as `mix` holds: the push cannot fail.
                let _ = idle.push(lanes);
            }
        }
        let mut progress = false;
        let mut next = 0;
        while next < idle.len() {
            let Some(raw) = queue.pop() else {
                return (progress, false);
            };
            let task = TaskId::from_raw(raw);
            let at = self.at(task);
            if at.predicated() && self.skipped(task, at) {
                progress = true;
                continue;
            }
            if at.sync() {
                // Its blocks start together or not at all: clusters in use stay so.
                self.sync_popped(WorkerClass::Mix, task, at);
                return (progress, true);
            }
            // A task of one block has no blocks word of its own (the slot's is a former
            // tenant's): only a task whose meta says spmd reads it.
            let b = if at.spmd() {
                Blocks::unpack(at.slot.blocks.load(Ordering::Relaxed))
            } else {
                ONE_BLOCK
            };
            let free = (idle.len() - next) as u16;
            let claim = blocks::claim(&self.t, task, at.g, WorkerClass::Mix, b, free);
            for block in claim.mine {
                let b = Blocks {
                    count: claim.count,
                    next: block,
                };
                for (lane, &l) in idle[next].iter().enumerate() {
                    self.send(l, task, at, lane as u8, 3, b);
                }
                next += 1;
            }
            progress = true;
        }
        (progress, queue.maybe_nonempty())
    }

    /// Sends a task the funnel handed over (made ready by a FIN just seen, its queue empty)
    /// to the lowest idle core of its class, skipping the queue's push and pop on a chain's
    /// critical path. Queues it instead when no core of its class is idle, or while MIX work
    /// waits (single-core tasks then leave the MIX clusters alone, see
    /// [`Scheduler::dispatch_mix`]), or when it has several blocks (the dispatch passes
    /// spread those).
    pub(super) fn hand_off(&mut self, ready: Ready) {
        let mut idle = self.cores.idle & self.cores.kind[ready.class.index()];
        if let Some((class, _)) = self.sync {
            // Cores a held sync-start task waits for take nothing else.
            idle &= !self.sync_cores(class);
        }
        let mix_waits =
            !self.cores.mix.is_empty() && self.t.queue(WorkerClass::Mix).maybe_nonempty();
        if idle == 0 || mix_waits {
            ready.enqueue(&self.t);
            return;
        }
        let at = self.at(ready.id);
        if at.special() {
            // Several blocks, or a predicate: the dispatch pass takes it from its queue.
            ready.enqueue(&self.t);
            return;
        }
        self.send(LocalCore::lowest(idle), ready.id, at, 0, 1, ONE_BLOCK);
    }

    /// Where `task` lives and its constants (read once a task is popped or handed over).
    #[inline(always)]
    pub(super) fn at(&self, task: TaskId) -> At<'r> {
        let g = self.t.gslot(task);
        let slot = self.t.slot(g);
        At {
            g,
            slot,
            meta: slot.meta.load(Ordering::Relaxed),
        }
    }

    /// Writes the payload of block `b.next` of `task` (at `at`), its lane `lane` of
    /// `lanes`, to local core `i` and rings its doorbell.
    #[inline(always)]
    pub(super) fn send(
        &mut self,
        i: LocalCore,
        task: TaskId,
        at: At<'_>,
        lane: u8,
        lanes: u8,
        b: Blocks,
    ) {
        let At { g, slot, meta } = at;
        let meta = Meta::unpack(meta);
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
        // A MIX task's AIV lanes may run kernels of their own.
        let kernel = if lane > 0 && meta.per_lane {
            KernelId(slot.aiv_kernels[(lane as usize - 1) & 1].load(Ordering::Relaxed))
        } else {
            meta.kernel
        };
        let payload = Payload {
            task,
            kernel,
            lane,
            lanes,
            block: b.next,
            blocks: b.count,
            args: &buf[..n],
            tensors: &tensors,
            profile: self.tasks_level,
        };
        if self.tasks_level
            && lane == 0
            && let Some(r) = self.t.record_block(slot, b.next)
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
                share: if b.count > 1 {
                    Share::BLOCKS.of_block(b.next)
                } else if lanes > 1 {
                    Share::CLUSTER
                } else {
                    Share::ALONE
                },
            },
        );
        self.dispatched += 1;
    }

    /// Whether `task` (at `at`, with a predicate) is skipped: this is its first block's
    /// dispatch, and the predicate is false. A skipped
    /// task is finished here, as a DUMMY task (no core runs it; its consumers are released),
    /// and counted. A predicate the platform cannot read fails the run.
    #[cold]
    #[inline(never)]
    fn skipped(&mut self, task: TaskId, at: At<'r>) -> bool {
        if at.spmd() && Blocks::unpack(at.slot.blocks.load(Ordering::Relaxed)).next != 0 {
            return false;
        }
        let p = self.t.predicate_of(at.g).load();
        self.p.invalidate(p.addr, p.width as usize);
        let Some(raw) = self.p.read_value(p.addr, p.width) else {
            let cause = FatalCause::BadPredicate {
                addr: p.addr,
                width: p.width,
            };
            self.t
                .shared()
                .status()
                .fail(FatalError::new(cause).with_task(task));
            // Finished nonetheless, so nothing waits on it while the run stops.
            self.finish_at(at.g, task);
            return true;
        };
        if p.holds(raw) {
            return false;
        }
        SchedCtl::bump(&self.ctl.skipped, 1);
        if self.tasks_level
            && let Some(r) = self.t.record_block(at.slot, 0)
        {
            r.mark_skipped();
        }
        self.finish_at(at.g, task);
        true
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
