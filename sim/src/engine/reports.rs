//! An engine's completion queues: one per scheduler, each getting the entries of the
//! transfers posted for it, in posting order (as a queue pair's completion queue delivers
//! them), whatever order the transfers end in.

use std::collections::{HashMap, VecDeque};

use pto_runtime_core::{CompletionCell, CompletionEnds, CompletionQueue};

/// One completion queue's storage.
pub(super) struct EngineQueue {
    cells: Box<[CompletionCell]>,
    ends: CompletionEnds,
}

impl EngineQueue {
    /// A queue of `capacity` records (rounded down to a power of two, at least 1).
    pub(super) fn new(capacity: usize) -> Self {
        let cap = capacity.max(1);
        EngineQueue {
            cells: (0..cap).map(CompletionCell::new).collect(),
            ends: CompletionEnds::new(),
        }
    }

    /// The queue over its storage.
    pub(super) fn view(&self) -> CompletionQueue<'_> {
        CompletionQueue::new(&self.cells, &self.ends)
    }
}

/// The posts that report, by queue in posting order, and the outcomes of those that ended
/// before their turn.
pub(super) struct Reports {
    order: Vec<VecDeque<u64>>,
    ended: HashMap<u64, u32>,
}

impl Reports {
    /// No post yet, `queues` queues.
    pub(super) fn new(queues: usize) -> Self {
        Reports {
            order: (0..queues).map(|_| VecDeque::new()).collect(),
            ended: HashMap::new(),
        }
    }

    /// Queues there are.
    pub(super) fn queues(&self) -> usize {
        self.order.len()
    }

    /// Post `id` will report to `queue` (< [`Self::queues`]).
    pub(super) fn posted(&mut self, queue: usize, id: u64) {
        self.order[queue].push_back(id);
    }

    /// Post `id` of `queue` ended with `status`: appends to `due` the entries that may now
    /// be posted, in order (this one, if all before it on its queue ended, and any after it
    /// that ended already).
    pub(super) fn ended(&mut self, queue: usize, id: u64, status: u32, due: &mut Vec<(u64, u32)>) {
        self.ended.insert(id, status);
        let order = &mut self.order[queue];
        while let Some(&front) = order.front() {
            let Some(status) = self.ended.remove(&front) else {
                break;
            };
            order.pop_front();
            due.push((front, status));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_leave_in_posting_order_per_queue() {
        let mut r = Reports::new(2);
        for id in 1..=4 {
            r.posted((id % 2) as usize, id);
        }
        let mut due = Vec::new();
        r.ended(1, 3, 0, &mut due);
        assert!(due.is_empty(), "post 1 is before it on queue 1");
        r.ended(0, 2, 0, &mut due);
        assert_eq!(due, [(2, 0)], "queue 0 does not wait for queue 1");
        r.ended(1, 1, 7, &mut due);
        assert_eq!(due, [(2, 0), (1, 7), (3, 0)]);
        r.ended(0, 4, 0, &mut due);
        assert_eq!(due.last(), Some(&(4, 0)));
    }
}
