//! Retiring lanes: reading busy cores' status words, each retired token's result word, and
//! the deferred conditions its kernel registered.
#![forbid(unsafe_code)]

use super::cores::{Inflight, LocalCore};
use super::deferred::EntryIndex;
use super::engine_queues::cancel;
use super::{DEADLINES_EVERY, Scheduler, fin, read_watch};
use crate::condition::{Condition, MAX_CONDITIONS, Watch};
use crate::error::{FatalCause, FatalError};
use crate::ids::CoreId;
use crate::observe::profile::ProfileLevel;
use crate::platform::Platform;
use crate::protocol::Outcome;
use crate::sync::Ordering;
use crate::tables::SlotIndex;

/// What became of a lane the scheduler tried to retire.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Lane {
    /// Retired: its task finished, waits in the deferred set, or waits for its other lanes.
    Retired,
    /// Finished, but its unmet conditions find no room in the deferred set yet: it stays on
    /// its core, held, and is tried again every loop.
    Held,
    /// The run failed (the lane's kernel failed, or the protocol broke).
    Failed,
}

/// A lane's conditions as read at its FIN, with the value each word read then.
type Read = heapless::Vec<(Condition, u64), { MAX_CONDITIONS as usize }>;

impl<P: Platform> Scheduler<'_, '_, P> {
    /// Reads the status word of every busy core (or, with a completion queue, of the cores
    /// its records name) and retires what finished.
    pub(super) fn poll_completions(&mut self) -> bool {
        let mut progress = false;
        let mut busy = self.cores.busy();
        if let Some(cq) = self.cq {
            // Held lanes wait for room, not for a report: they are tried regardless.
            let mut named = self.cores.held;
            let counted = self.by.level != ProfileLevel::Off;
            let depth = if counted { cq.len() } else { 0 };
            let mut batch = 0;
            // Bounded: at most a queue's worth per loop, so a flood never starves dispatch.
            for _ in 0..cq.capacity() {
                let Some(c) = cq.pop() else { break };
                batch += 1;
                match self.cores.local(CoreId(c.source as u16)) {
                    Some(i) if c.source <= u16::MAX as u32 => named |= i.bit(),
                    _ => {
                        self.fail(FatalError::new(FatalCause::StrayCompletion {
                            source: c.source,
                            id: c.id,
                        }));
                        return true;
                    }
                }
            }
            if counted {
                self.ctl.cores_queue.drained(depth, batch);
            }
            busy &= named;
        }
        while busy != 0 {
            let i = LocalCore::lowest(busy);
            busy &= busy - 1;
            progress |= self.poll_core(i);
        }
        progress
    }

    fn poll_core(&mut self, i: LocalCore) -> bool {
        let mut progress = false;
        let c = self.cores.core(i);
        if c.held_since.is_some()
            && let Some(run) = c.running
        {
            // Lanes retire in order: the held one first. It is tried again once room may
            // have grown, and every `DEADLINES_EVERY` loops, since its own conditions may
            // have come to hold meanwhile (then it needs no room at all).
            if c.held_closes == self.deferred.closes()
                && !(self.loops as u32).is_multiple_of(DEADLINES_EVERY)
            {
                return false;
            }
            match self.complete_lane(i, run) {
                Lane::Held => return false,
                Lane::Failed => return true,
                Lane::Retired => progress = true,
            }
        }
        let c = self.cores.core(i);
        let Some(run) = c.running else {
            return progress;
        };
        let (id, seen, pending) = (c.id, c.seen, c.pending);
        let status = self.p.core_status(id);
        match fin::decode(status, seen, Some(run.token), pending.map(|p| p.token)) {
            fin::LaneEvent::Nothing => {
                self.cores.core_mut(i).seen = status;
                progress
            }
            fin::LaneEvent::Running => {
                self.cores.core_mut(i).seen = status;
                self.retire(i, run);
                true
            }
            fin::LaneEvent::Both => {
                // If the first lane is held, the pending one's FIN is read again once it
                // retired: the word is not marked as acted on.
                if self.retire(i, run) == Lane::Retired {
                    self.cores.core_mut(i).seen = status;
                    if let Some(next) = self.cores.core(i).running {
                        self.retire(i, next);
                    }
                }
                true
            }
            fin::LaneEvent::Unexplained => {
                let newest = pending.unwrap_or(run).token;
                self.fail(
                    FatalError::new(FatalCause::CoreProtocol {
                        seen: status.token().bits(),
                        newest: newest.bits(),
                    })
                    .with_task(run.task)
                    .with_core(id),
                );
                true
            }
        }
    }

    /// The running lane of local core `i` reported finishing (or the core moved past it):
    /// its result word says how it ended.
    #[inline(always)]
    fn retire(&mut self, i: LocalCore, lane: Inflight) -> Lane {
        let core = self.cores.core(i).id;
        let result = self.p.result(core, lane.token);
        match result.outcome(lane.token) {
            Some(Outcome::Done) => self.complete_lane(i, lane),
            Some(Outcome::Failed(code)) => {
                self.fail(
                    FatalError::new(FatalCause::KernelFailed { code })
                        .with_task(lane.task)
                        .with_core(core),
                );
                Lane::Failed
            }
            None => {
                self.fail(
                    FatalError::new(FatalCause::MissingResult {
                        token: lane.token.bits(),
                        named: result.token().bits(),
                    })
                    .with_task(lane.task)
                    .with_core(core),
                );
                Lane::Failed
            }
        }
    }

    /// The running lane of local core `i` finished normally: read its conditions, retire it
    /// (unless its unmet conditions find no room yet), enter those into the deferred set,
    /// and finish its task if this was the task's last lane and nothing is left to wait for.
    #[inline(always)]
    pub(super) fn complete_lane(&mut self, i: LocalCore, lane: Inflight) -> Lane {
        let core = self.cores.core(i).id;
        let g = lane.slot;
        let slot = self.t.slot(g);
        let n = self.p.conditions(core, lane.token);
        let entry = EntryIndex::from_slot_word(slot.deferred.load(Ordering::Relaxed));
        if n == 0 && entry.is_none() {
            // The common lane: no conditions, nothing deferred. What the general path below
            // does for it, without its bookkeeping (and inlined into the poll).
            self.cores.retire_running(i);
            if self.tasks_level {
                self.stamp_lane(g, core, lane);
            }
            // Only the last lane's FIN is the task's: the funnel stamps it.
            if lane.share.several() && slot.lanes_left.fetch_sub(1, Ordering::AcqRel) != 1 {
                return Lane::Retired;
            }
            self.finish_at_fin(g, lane.task);
            return Lane::Retired;
        }
        self.complete_lane_with(i, lane, core, n, entry)
    }

    /// [`Scheduler::complete_lane`] for a lane with conditions, or whose task has a
    /// deferred entry already (another lane's).
    #[inline(never)]
    fn complete_lane_with(
        &mut self,
        i: LocalCore,
        lane: Inflight,
        core: CoreId,
        n: usize,
        entry: Option<EntryIndex>,
    ) -> Lane {
        let g = lane.slot;
        let slot = self.t.slot(g);
        let mut read = Read::new();
        let mut unmet = 0;
        if n > 0 {
            let registered = entry.map_or(0, |e| self.deferred.registered(e) as usize);
            let limit = self.t.cfg().max_conditions as usize;
            if registered + n > limit {
                self.fail(
                    FatalError::new(FatalCause::TooManyConditions {
                        registered: u32::try_from(registered.saturating_add(n)).unwrap_or(u32::MAX),
                        limit: limit as u32,
                    })
                    .with_task(lane.task)
                    .with_core(core),
                );
                return Lane::Failed;
            }
            if !self.read_conditions(lane, core, n, &mut read) {
                return Lane::Failed;
            }
            unmet = read.iter().filter(|(c, v)| !c.holds(*v)).count();
            // Conditions that hold already need no room.
            if unmet > 0 && !self.deferred.has_room(unmet, entry.is_none()) {
                if self.cores.core(i).held_since.is_none() {
                    let now = self.p.now();
                    self.cores.hold(i, now);
                }
                self.cores.core_mut(i).held_closes = self.deferred.closes();
                return Lane::Held;
            }
        }
        self.cores.retire_running(i);
        if self.tasks_level {
            self.stamp_kernel(g, core, lane);
            self.stamp_fin(g, lane, n > 0);
        }
        let entry = match entry {
            None if unmet > 0 => {
                let e = self.deferred.open(lane.task);
                // A block's lane keeps its entry to itself: other schedulers retire the
                // task's other blocks, and the slot's word is one scheduler's.
                if !lane.share.spmd() {
                    slot.deferred.store(e.slot_word(), Ordering::Relaxed);
                }
                Some(e)
            }
            e => e,
        };
        if let Some(e) = entry {
            for &(c, value) in &read {
                if c.holds(value) {
                    self.deferred.add_met(e);
                } else {
                    self.deferred.add(e, c, value);
                }
            }
        }
        if lane.share.spmd()
            && let Some(e) = entry
        {
            // The lane counts as finished once its own entry closes (see
            // `Scheduler::poll_deferred`).
            if self.deferred.arm(e, self.deferred_deadline()) {
                self.deferred.close(e);
                if slot.lanes_left.fetch_sub(1, Ordering::AcqRel) == 1 {
                    self.finish_at(g, lane.task);
                }
            }
            return Lane::Retired;
        }
        if lane.share.several() && slot.lanes_left.fetch_sub(1, Ordering::AcqRel) != 1 {
            return Lane::Retired;
        }
        match entry {
            None => self.finish_at(g, lane.task),
            Some(e) => {
                if self.deferred.arm(e, self.deferred_deadline()) {
                    let task = self.deferred.close(e);
                    slot.deferred.store(0, Ordering::Relaxed);
                    self.finish_at(g, task);
                }
            }
        }
        Lane::Retired
    }

    /// When an entry armed now times out.
    fn deferred_deadline(&self) -> u64 {
        let now = if self.clocked {
            self.by.now
        } else {
            self.p.now()
        };
        now.saturating_add(self.deferred_timeout_ticks)
    }

    /// Reads the `n` conditions of `lane` and each one's word once into `out`. Returns
    /// `false` after failing the run on a record it cannot decode or a word it cannot read.
    fn read_conditions(
        &mut self,
        lane: Inflight,
        core: crate::ids::CoreId,
        n: usize,
        out: &mut Read,
    ) -> bool {
        for k in 0..n {
            let bad = |cause| FatalError::new(cause).with_task(lane.task).with_core(core);
            let c = match self.p.condition(core, lane.token, k).map(|r| r.decode()) {
                Some(Ok(c)) => c,
                Some(Err(kind)) => {
                    self.fail(bad(FatalCause::UnknownCondition { kind }));
                    return false;
                }
                None => {
                    self.fail(bad(FatalCause::BadCondition { watch: None }));
                    return false;
                }
            };
            let value = match c.watch {
                Watch::Queue(e) => self.eq.value(e),
                w => read_watch(self.p, w),
            };
            let Some(value) = value else {
                self.fail(bad(FatalCause::BadCondition {
                    watch: Some(c.watch),
                }));
                return false;
            };
            // An entry that arrived before this FIN: its failure cancels the task now.
            if let Watch::Queue(e) = c.watch
                && c.holds(value)
                && let Some(f) = self.eq.take_failure(e, c.expected)
            {
                cancel(&self.t, lane.task, f);
            }
            // At most max_conditions <= MAX_CONDITIONS (checked by the caller).
            let _ = out.push((c, value));
        }
        true
    }

    /// Stamps a lane retired on the common path in its block's record: its kernel times,
    /// and, for a block of a task of several, its FIN (each block's record has its own).
    /// Inlined: out of line, the call costs the `Tasks` level more than it saves `Off`.
    #[inline(always)]
    fn stamp_lane(&mut self, g: SlotIndex, core: CoreId, lane: Inflight) {
        self.stamp_kernel(g, core, lane);
        if lane.share.spmd() {
            self.stamp_fin(g, lane, false);
        }
    }

    /// Records a retired lane's kernel times in its block's record (its task's, for a task
    /// of one block), if it keeps one and the platform reports them. A block's lanes are all
    /// on one cluster, so one scheduler stamps each record. The lap clock rises to the
    /// kernel's end, so no later stamp of this phase predates it.
    #[inline(always)]
    fn stamp_kernel(&mut self, g: SlotIndex, core: CoreId, lane: Inflight) {
        if let Some((start, end)) = self.p.lane_times(core, lane.token)
            && let Some(r) = self.t.record_block(self.t.slot(g), lane.share.block())
        {
            r.stamp_kernel(start, end);
            self.raise_clock(end);
        }
    }

    /// Stamps a retired lane's FIN in its block's record, if it keeps one (and its deferred
    /// stamp if `deferred`: it registered conditions, which may all hold already). The lap
    /// clock may predate the kernel's end: the reader raises the FIN stamp to it.
    fn stamp_fin(&self, g: SlotIndex, lane: Inflight, deferred: bool) {
        if let Some(r) = self.t.record_block(self.t.slot(g), lane.share.block()) {
            r.stamp_fin(self.by.now, deferred);
        }
    }
}
