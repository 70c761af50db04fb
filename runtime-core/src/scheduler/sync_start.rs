//! Sync-start tasks: all the blocks of such a task start in one scheduler pass, on one
//! scheduler's cores. The scheduler that pops one with too few free cores holds it (one at
//! a time) and lets those cores drain, giving them no other work, until every block has
//! one; a scheduler that owns too few cores of its class for it queues it again for the
//! others (the orchestrator refuses a task no scheduler could start).
#![forbid(unsafe_code)]

use super::Scheduler;
use super::cores::LocalCore;
use super::dispatch::At;
use crate::ids::{TaskId, WorkerClass};
use crate::platform::Platform;
use crate::region::slot::Blocks;
use crate::sync::Ordering;
use crate::tables::ready::Ready;

impl<'r, P: Platform> Scheduler<'r, '_, P> {
    /// `task` (at `at`), a sync-start task of `class`, was just popped: started now if
    /// this scheduler has a free core (cluster) for each block, else held here if it owns
    /// enough of them and holds no other, else queued again for the other schedulers.
    pub(super) fn sync_popped(&mut self, class: WorkerClass, task: TaskId, at: At<'r>) {
        let blocks = Blocks::unpack(at.slot.blocks.load(Ordering::Relaxed)).count;
        if self.start_sync(class, task, at, blocks) {
            return;
        }
        if self.sync.is_none() && self.owned(class) >= blocks as u32 {
            self.sync = Some((class, task));
        } else {
            Ready { id: task, class }.enqueue(&self.t);
        }
    }

    /// Starts the held sync-start task if its cores are free now; whether it did.
    pub(super) fn start_held(&mut self) -> bool {
        let Some((class, task)) = self.sync else {
            return false;
        };
        let at = self.at(task);
        let blocks = Blocks::unpack(at.slot.blocks.load(Ordering::Relaxed)).count;
        if self.start_sync(class, task, at, blocks) {
            self.sync = None;
            return true;
        }
        false
    }

    /// The cores a held sync-start task of `class` waits for: every core of the class (of
    /// every MIX cluster for MIX) but those only the deferred set can free.
    pub(super) fn sync_cores(&self, class: WorkerClass) -> u128 {
        match class {
            WorkerClass::Mix => self.cores.mix_reserved(),
            c => self.cores.kind[c.index()] & !self.cores.held,
        }
    }

    /// Cores (clusters for MIX) of `class` this scheduler owns.
    fn owned(&self, class: WorkerClass) -> u32 {
        match class {
            WorkerClass::Mix => self.cores.mix.len() as u32,
            c => self.cores.kind[c.index()].count_ones(),
        }
    }

    /// Sends every one of the `blocks` blocks of `task` (at `at`) at once, each to an idle
    /// core (cluster) of `class`, if there are enough; whether it did.
    fn start_sync(&mut self, class: WorkerClass, task: TaskId, at: At<'r>, blocks: u16) -> bool {
        if class == WorkerClass::Mix {
            let idle: heapless::Vec<_, { crate::region::config::MAX_CORES as usize }> = self
                .cores
                .mix
                .iter()
                .copied()
                .filter(|lanes| lanes.iter().all(|l| self.cores.idle & l.bit() != 0))
                .take(blocks as usize)
                .collect();
            if idle.len() < blocks as usize {
                return false;
            }
            for (block, lanes) in idle.iter().enumerate() {
                let b = Blocks {
                    count: blocks,
                    next: block as u16,
                };
                for (lane, &l) in lanes.iter().enumerate() {
                    self.send(l, task, at, lane as u8, 3, b);
                }
            }
            return true;
        }
        let mut idle = self.cores.idle & self.cores.kind[class.index()];
        if idle.count_ones() < blocks as u32 {
            return false;
        }
        for block in 0..blocks {
            let i = LocalCore::lowest(idle);
            idle &= idle - 1;
            let b = Blocks {
                count: blocks,
                next: block,
            };
            self.send(i, task, at, 0, 1, b);
        }
        true
    }
}
