//! The order the program declared between its tasks, whatever the timing of a run: task `a`
//! comes before task `b` when `b` names `a` among its dependencies, or when both name tiles of
//! one buffer that conflict (one writes, and they share an element), `a` submitted first; and
//! through chains of those. The runtime guarantees exactly this order: a conflicting earlier
//! task is either live when `b` is submitted (so `b` waits for it) or already retired.

use std::collections::{BTreeMap, HashMap, HashSet};

use pto_runtime_core::{TaskId, TensorArg, Tile, overlaps};

/// One tile a task declared, filed under its buffer.
#[derive(Clone, Copy, Debug)]
struct Entry {
    task: u32,
    tile: Tile,
    write: bool,
    lo: u64,
    hi: u64,
}

/// The declared tiles of one buffer, by first byte, that a later tile may still conflict
/// with (an entry a dense write covered is gone: the write stands in for it).
#[derive(Default)]
struct Buffer {
    by_start: BTreeMap<(u64, u64), Entry>,
    /// The longest entry's bytes: a query looks back this far.
    longest: u64,
    /// Numbers entries, so equal starts stay apart.
    next: u64,
}

/// Tasks in submission order and the declared order between them.
#[derive(Default)]
pub(crate) struct DeclaredOrder {
    /// Each task's direct predecessors, by submission index.
    preds: Vec<Vec<u32>>,
    index: HashMap<TaskId, u32>,
    buffers: HashMap<u64, Buffer>,
}

impl DeclaredOrder {
    /// Adds task `id`, submitted with dependencies `deps` and tensor arguments `tensors`;
    /// its submission index.
    pub(crate) fn add(&mut self, id: TaskId, deps: &[TaskId], tensors: &[TensorArg]) -> u32 {
        let me = self.preds.len() as u32;
        let mut preds: Vec<u32> = deps
            .iter()
            .filter_map(|d| self.index.get(d).copied())
            .collect();
        for arg in tensors {
            let Ok((lo, hi)) = arg.tile.bytes() else {
                continue; // the runtime refused such a task; it never gets here
            };
            let write = arg.access.writes();
            let buf = self.buffers.entry(arg.buffer.base).or_default();
            let from = (lo.saturating_sub(buf.longest), 0);
            let mut covered = Vec::new();
            for (key, e) in buf.by_start.range(from..(hi, 0)) {
                if e.hi <= lo || e.task == me || !(write || e.write) {
                    continue;
                }
                if overlaps(&e.tile, &arg.tile) {
                    preds.push(e.task);
                    if write && arg.tile.is_dense() && lo <= e.lo && e.hi <= hi {
                        covered.push(*key);
                    }
                }
            }
            for k in covered {
                buf.by_start.remove(&k);
            }
            buf.longest = buf.longest.max(hi - lo);
            buf.next += 1;
            buf.by_start.insert(
                (lo, buf.next),
                Entry {
                    task: me,
                    tile: arg.tile,
                    write,
                    lo,
                    hi,
                },
            );
        }
        preds.sort_unstable();
        preds.dedup();
        self.preds.push(preds);
        self.index.insert(id, me);
        me
    }

    /// Whether the program declared task `before` (a submission index) to come before task
    /// `after` (a later one), directly or through other tasks.
    pub(crate) fn ordered(&self, before: u32, after: u32) -> bool {
        if before >= after {
            return false;
        }
        let mut seen = HashSet::new();
        let mut stack = vec![after];
        while let Some(t) = stack.pop() {
            for &p in &self.preds[t as usize] {
                if p == before {
                    return true;
                }
                // A predecessor never comes before its own predecessors: below `before`
                // nothing can lead back up to it.
                if p > before && seen.insert(p) {
                    stack.push(p);
                }
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pto_runtime_core::Buffer as Buf;

    fn id(n: u64) -> TaskId {
        TaskId::from_raw(n)
    }

    #[test]
    fn conflicting_tiles_of_one_buffer_order_tasks_and_chains_carry_it() {
        let mut o = DeclaredOrder::default();
        let buf = Buf::new(0x1000, 256);
        let other = Buf::new(0x2000, 256);
        let first = Tile::contiguous(0x1000, 4, 16);
        let second = Tile::contiguous(0x1040, 4, 16);
        let w = o.add(id(1), &[], &[TensorArg::output(buf, first)]);
        let r = o.add(id(2), &[], &[TensorArg::input(buf, first)]);
        let apart = o.add(id(3), &[], &[TensorArg::output(buf, second)]);
        let reader2 = o.add(id(4), &[], &[TensorArg::input(buf, first)]);
        let chained = o.add(
            id(5),
            &[id(4)],
            &[TensorArg::output(other, Tile::contiguous(0x2000, 4, 4))],
        );
        assert!(o.ordered(w, r), "read after write");
        assert!(
            !o.ordered(r, apart) && !o.ordered(w, apart),
            "disjoint tiles"
        );
        assert!(!o.ordered(r, reader2), "two reads are not ordered");
        assert!(
            o.ordered(w, chained),
            "through task 4's explicit dependency"
        );
        assert!(!o.ordered(r, chained));
        assert!(!o.ordered(chained, w), "never backwards");
    }

    #[test]
    fn a_covering_write_stands_in_for_what_it_covers() {
        let mut o = DeclaredOrder::default();
        let buf = Buf::new(0x1000, 64);
        let all = Tile::contiguous(0x1000, 4, 16);
        let a = o.add(id(1), &[], &[TensorArg::output(buf, all)]);
        let b = o.add(id(2), &[], &[TensorArg::output(buf, all)]);
        let c = o.add(
            id(3),
            &[],
            &[TensorArg::input(buf, Tile::contiguous(0x1010, 4, 2))],
        );
        assert_eq!(o.buffers[&0x1000].by_start.len(), 2, "b replaced a");
        assert!(o.ordered(a, c), "through b");
        assert!(o.ordered(b, c));
    }

    #[test]
    fn tiles_of_other_buffers_are_not_ordered_even_on_the_same_bytes() {
        let mut o = DeclaredOrder::default();
        let t = Tile::contiguous(0x1000, 4, 16);
        let a = o.add(id(1), &[], &[TensorArg::output(Buf::new(0x1000, 64), t)]);
        let b = o.add(id(2), &[], &[TensorArg::input(Buf::new(0x0f00, 512), t)]);
        assert!(
            !o.ordered(a, b),
            "the runtime orders tiles of one buffer only"
        );
    }
}
