//! The tensor map on its own: which earlier tasks a new argument waits for.

use std::vec::Vec;

use super::*;
use crate::ids::Seq;

struct Owned {
    entries: Vec<MapEntry>,
    heads: Vec<BufferHead>,
}

impl Owned {
    fn new(slots: usize, per_slot: usize) -> Self {
        Owned {
            entries: std::vec![MapEntry::new(); slots * per_slot],
            heads: std::vec![BufferHead::new(); heads_len(slots * per_slot)],
        }
    }
    fn map(&mut self, per_slot: usize) -> TensorMap<'_> {
        TensorMap::new(
            TensorStore {
                entries: &mut self.entries,
                heads: &mut self.heads,
            },
            per_slot,
        )
    }
}

fn task(i: u64) -> TaskId {
    TaskId::new(1, 0, Seq(i))
}

/// The tasks `arg` waits for, among live tasks from `retired` on.
fn deps(m: &mut TensorMap<'_>, arg: TensorArg, retired: u64) -> Vec<u64> {
    let mut out = Vec::new();
    m.conflicts(
        &arg,
        |t| t.seq().0 >= retired,
        |t| {
            out.push(t.seq().0);
            Ok::<(), ()>(())
        },
    )
    .unwrap();
    out.sort();
    out
}

const A: u64 = 0x1000;
const B: u64 = 0x9000;

fn row(r: u64) -> Tile {
    Tile::block(A + r * 8 * 4, 4, 1, 8, 8)
}

#[test]
fn reads_wait_for_writers_and_writes_for_readers_and_writers() {
    let mut o = Owned::new(8, 2);
    let mut m = o.map(2);
    m.register(0, task(0), &[TensorArg::output(A, row(0))]);
    m.register(1, task(1), &[TensorArg::input(A, row(0))]);
    m.register(2, task(2), &[TensorArg::input(A, row(0))]);
    // RAW: a reader waits for the writer only.
    assert_eq!(deps(&mut m, TensorArg::input(A, row(0)), 0), [0]);
    // WAR + WAW: a writer waits for every reader and the writer.
    assert_eq!(deps(&mut m, TensorArg::output(A, row(0)), 0), [0, 1, 2]);
    // Another row, another buffer: nothing.
    assert!(deps(&mut m, TensorArg::inout(A, row(1)), 0).is_empty());
    assert!(deps(&mut m, TensorArg::inout(B, row(0)), 0).is_empty());
}

#[test]
fn retired_tasks_leave_the_map_and_a_reused_slot_drops_its_old_entries() {
    let mut o = Owned::new(4, 1);
    let mut m = o.map(1);
    for i in 0..4 {
        m.register(i as usize, task(i), &[TensorArg::input(A, row(i))]);
    }
    assert_eq!(m.linked(), 4);
    // Tasks below 2 retired: a lookup over their buffer unlinks them.
    assert!(deps(&mut m, TensorArg::output(A, row(0)), 2).is_empty());
    assert_eq!(m.linked(), 2);
    // Slot 2 gets a new tenant (task 6): task 2's entry goes.
    m.register(2, task(6), &[TensorArg::input(B, row(0))]);
    assert_eq!(
        deps(&mut m, TensorArg::output(A, row(2)), 2),
        Vec::<u64>::new()
    );
    assert_eq!(deps(&mut m, TensorArg::output(A, row(3)), 2), [3]);
    assert_eq!(deps(&mut m, TensorArg::output(B, row(0)), 2), [6]);
}

#[test]
fn a_write_of_the_same_tile_stands_in_for_the_entries_it_covers() {
    let mut o = Owned::new(8, 1);
    let mut m = o.map(1);
    for i in 0..5 {
        m.register(i, task(i as u64), &[TensorArg::input(A, row(0))]);
    }
    m.register(5, task(5), &[TensorArg::inout(A, row(0))]);
    assert_eq!(m.linked(), 1, "the five readers are covered by the writer");
    assert_eq!(deps(&mut m, TensorArg::input(A, row(0)), 0), [5]);
}

#[test]
fn the_buffer_index_survives_many_buffers_coming_and_going() {
    let slots = 16;
    let mut o = Owned::new(slots, 1);
    let mut m = o.map(1);
    for i in 0..2000u64 {
        let g = (i % slots as u64) as usize;
        let buffer = 0x10_0000 + (i * 7919 % 97) * 0x1000;
        m.register(g, task(i), &[TensorArg::output(buffer, row(0))]);
        assert_eq!(
            deps(
                &mut m,
                TensorArg::input(buffer, row(0)),
                i.saturating_sub(slots as u64 - 1)
            ),
            [i]
        );
    }
}

#[test]
fn entries_of_retired_tasks_do_not_pile_up() {
    let (slots, k) = (64usize, 8u64);
    let mut o = Owned::new(slots, k as usize);
    let mut m = o.map(k as usize);
    for i in 0..5000u64 {
        let args: Vec<TensorArg> = (0..k)
            .map(|a| {
                let j = i * k + a;
                let buffer = 0x10_0000 + (j % 256) * 0x10_0000;
                TensorArg::output(buffer, Tile::block(buffer + (j / 256) * 256, 4, 1, 64, 64))
            })
            .collect();
        let retired = i.saturating_sub(4);
        for a in &args {
            assert!(deps(&mut m, *a, retired).is_empty());
        }
        m.register((i % slots as u64) as usize, task(i), &args);
    }
    assert!(
        m.linked() <= 5 * k as usize + 256 * 2,
        "{} linked",
        m.linked()
    );
}
