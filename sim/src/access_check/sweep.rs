//! Finding races: every pair of tasks whose touched ranges overlap, at least one writing, is
//! tested against the declared order; a pair in no order is a race.

use std::collections::HashSet;

use super::order::DeclaredOrder;

/// One range a task touched.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Touch {
    pub(crate) task: u32,
    pub(crate) lo: u64,
    pub(crate) hi: u64,
    pub(crate) write: bool,
}

/// A pair of tasks (submission indices, earlier first) that race, the first bytes found
/// shared, and whether each writes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Found {
    pub(crate) first: u32,
    pub(crate) second: u32,
    pub(crate) bytes: (u64, u64),
    pub(crate) first_writes: bool,
    pub(crate) second_writes: bool,
}

/// Every racing pair of tasks among `touches`, once each, in the order their shared bytes
/// are met (by address).
pub(crate) fn races(mut touches: Vec<Touch>, order: &DeclaredOrder) -> Vec<Found> {
    touches.sort_unstable_by_key(|t| (t.lo, t.hi));
    let mut active: Vec<Touch> = Vec::new();
    let mut tested: HashSet<(u32, u32)> = HashSet::new();
    let mut found = Vec::new();
    for t in touches {
        active.retain(|a| a.hi > t.lo);
        for a in &active {
            if a.task == t.task || !(a.write || t.write) {
                continue;
            }
            let (x, y) = if a.task < t.task { (a, &t) } else { (&t, a) };
            if !tested.insert((x.task, y.task)) {
                continue;
            }
            if !order.ordered(x.task, y.task) {
                found.push(Found {
                    first: x.task,
                    second: y.task,
                    bytes: (t.lo, a.hi.min(t.hi)),
                    first_writes: x.write,
                    second_writes: y.write,
                });
            }
        }
        active.push(t);
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use pto_runtime_core::{Buffer, TaskId, TensorArg, Tile};

    #[test]
    fn overlapping_writes_race_unless_declared_in_order() {
        let mut o = DeclaredOrder::default();
        let buf = Buffer::new(0x1000, 64);
        let tile = Tile::contiguous(0x1000, 4, 16);
        let a = o.add(TaskId::from_raw(1), &[], &[TensorArg::output(buf, tile)]);
        let b = o.add(TaskId::from_raw(2), &[], &[]);
        let c = o.add(TaskId::from_raw(3), &[], &[TensorArg::input(buf, tile)]);
        let t = |task, lo, hi, write| Touch {
            task,
            lo,
            hi,
            write,
        };
        let found = races(
            vec![
                t(a, 0x1000, 0x1040, true),
                t(b, 0x1020, 0x1030, false),
                t(c, 0x1000, 0x1040, false),
                t(b, 0x1038, 0x1040, false),
            ],
            &o,
        );
        assert_eq!(
            found,
            [Found {
                first: a,
                second: b,
                bytes: (0x1020, 0x1030),
                first_writes: true,
                second_writes: false,
            }],
            "b reads what a writes, undeclared, once; c declared its read"
        );
        let reads = races(
            vec![t(b, 0x1000, 0x1040, false), t(c, 0x1000, 0x1040, false)],
            &o,
        );
        assert!(reads.is_empty(), "reads never race");
    }
}
