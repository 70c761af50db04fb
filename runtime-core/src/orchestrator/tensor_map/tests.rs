//! The tensor map on its own: which earlier tasks a new argument waits for.

use std::vec::Vec;

use super::entry::cells_len;
use super::reference::Reference;
use super::whole::WholeSite;
use super::*;
use crate::ids::Seq;
use crate::tensor::arg::Buffer;

struct Owned {
    entries: Vec<MapEntry>,
    heads: Vec<Head>,
    buckets: Vec<CellIndex>,
    cells: Vec<TensorCell>,
}

/// The map, and each slot's tenant and its argument count (the slot's `tensors` word).
struct Map<'a> {
    map: TensorMap<'a>,
    tenants: Vec<Option<(TaskId, usize)>>,
}

impl Map<'_> {
    /// Drops the tasks below `retired`, as the orchestrator does when the watermark moves.
    fn retire(&mut self, retired: u64) {
        for (g, tenant) in self.tenants.iter().enumerate() {
            if let Some((id, count)) = *tenant
                && id.seq().0 < retired
            {
                self.map.forget(SlotIndex::at(g), id, count);
            }
        }
    }

    /// Submits `task` into slot `g` as the orchestrator does: drops the tasks below
    /// `retired` and the slot's previous tenant, then adds every argument. Returns the tasks
    /// it waits for.
    fn submit(&mut self, g: usize, task: TaskId, args: &[TensorArg], retired: u64) -> Vec<u64> {
        self.retire(retired);
        let old = self.tenants[g]
            .replace((task, args.len()))
            .map_or(0, |t| t.1);
        self.map.drop_slot(SlotIndex::at(g), old);
        let mut out = Vec::new();
        self.map
            .add_task(
                (SlotIndex::at(g), task),
                args,
                |a| (a.tile.footprint().unwrap(), true),
                |t, _| {
                    out.push(t.seq().0);
                    Ok(())
                },
            )
            .unwrap();
        out.sort();
        out.dedup();
        out
    }

    /// The tasks `arg` would wait for, among live tasks from `retired` on.
    fn deps(&mut self, arg: TensorArg, retired: u64) -> Vec<u64> {
        self.retire(retired);
        let mut out = Vec::new();
        let range = arg.tile.bytes().unwrap();
        self.map
            .conflicts(&arg, range, &mut Covered::default(), |t| {
                out.push(t.seq().0);
                Ok::<(), ()>(())
            })
            .unwrap();
        out.sort();
        out
    }
}

impl Owned {
    fn new(slots: usize, per_slot: usize) -> Self {
        Owned {
            entries: std::vec![MapEntry::new(); cells_len(slots * per_slot)],
            heads: std::vec![Head::EMPTY; heads_len(slots * per_slot)],
            buckets: std::vec![NIL; buckets_len(slots * per_slot)],
            cells: (0..slots * per_slot).map(|_| TensorCell::new()).collect(),
        }
    }
    fn map(&mut self, per_slot: usize) -> Map<'_> {
        let slots = self.cells.len() / per_slot;
        Map {
            map: TensorMap::new(
                TensorStore {
                    entries: &mut self.entries,
                    heads: &mut self.heads,
                    buckets: &mut self.buckets,
                },
                per_slot,
                &self.cells,
            ),
            tenants: std::vec![None; slots],
        }
    }
}

fn task(i: u64) -> TaskId {
    TaskId::new(1, 0, Seq(i))
}

/// The buffer keyed `base` (the map checks no bounds: submit does).
fn key(base: u64) -> crate::tensor::arg::Buffer {
    crate::tensor::arg::Buffer::new(base, 1 << 40)
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
    m.submit(0, task(0), &[TensorArg::output(key(A), row(0))], 0);
    m.submit(1, task(1), &[TensorArg::input(key(A), row(0))], 0);
    m.submit(2, task(2), &[TensorArg::input(key(A), row(0))], 0);
    // RAW: a reader waits for the writer only.
    assert_eq!(m.deps(TensorArg::input(key(A), row(0)), 0), [0]);
    // WAR + WAW: a writer waits for every reader and the writer.
    assert_eq!(m.deps(TensorArg::output(key(A), row(0)), 0), [0, 1, 2]);
    // Another row, another buffer: nothing.
    assert!(m.deps(TensorArg::inout(key(A), row(1)), 0).is_empty());
    assert!(m.deps(TensorArg::inout(key(B), row(0)), 0).is_empty());
}

#[test]
fn cells_that_share_a_bucket_are_told_apart() {
    let mut o = Owned::new(4, 1);
    let mut m = o.map(1);
    let half = Tile::contiguous(A, 4, 8); // 32 bytes
    let at = place(A, A + 32);
    let bucket = |buffer: u64, p: Place| m.map.buckets.of(BufferHash::of(buffer), p.class, p.cell);
    // Another buffer key over the same bytes whose cell lands in the same bucket.
    let twin = (1..u64::MAX)
        .map(|i| A + i * 0x100_0000)
        .find(|&b| bucket(b, at) == bucket(A, at))
        .unwrap();
    // A tile of buffer A of another size (another class) whose cell lands there too.
    let bytes = (2..24)
        .map(|k| 1u32 << k)
        .find(|&n| n != 32 && bucket(A, place(A, A + n as u64)) == bucket(A, at))
        .unwrap();
    m.submit(0, task(0), &[TensorArg::output(key(A), half)], 0);
    // The twin buffer's writer does not wait for buffer A's, though their bucket and bytes
    // are the same.
    assert!(
        m.submit(1, task(1), &[TensorArg::output(key(twin), half)], 0)
            .is_empty()
    );
    assert_eq!(m.deps(TensorArg::input(key(A), half), 0), [0]);
    assert_eq!(m.deps(TensorArg::input(key(twin), half), 0), [1]);
    // A lookup visiting both of A's classes visits that bucket twice, and reports each
    // entry once.
    let other = Tile::contiguous(A, 1, bytes);
    assert_eq!(
        m.submit(2, task(2), &[TensorArg::output(key(A), other)], 0),
        [0]
    );
    assert_eq!(m.deps(TensorArg::input(key(A), half), 0), [0, 2]);
    m.retire(3);
    let used = (m.map.linked(), m.map.heads_used(), m.map.buckets_used());
    assert_eq!(used, (0, 0, 0));
}

#[test]
fn retired_tasks_leave_the_map_and_a_reused_slot_drops_its_old_entries() {
    let mut o = Owned::new(4, 1);
    let mut m = o.map(1);
    for i in 0..4 {
        m.submit(i as usize, task(i), &[TensorArg::input(key(A), row(i))], 0);
    }
    assert_eq!(m.map.linked(), 4);
    // Tasks below 2 retired: a lookup over their buffer unlinks them.
    assert!(m.deps(TensorArg::output(key(A), row(0)), 2).is_empty());
    assert_eq!(m.map.linked(), 2);
    // Slot 2 gets a new tenant (task 6): task 2's entry goes.
    m.submit(2, task(6), &[TensorArg::input(key(B), row(0))], 0);
    assert_eq!(
        m.deps(TensorArg::output(key(A), row(2)), 2),
        Vec::<u64>::new()
    );
    assert_eq!(m.deps(TensorArg::output(key(A), row(3)), 2), [3]);
    assert_eq!(m.deps(TensorArg::output(key(B), row(0)), 2), [6]);
}

#[test]
fn a_write_of_the_same_tile_stands_in_for_the_entries_it_covers() {
    let mut o = Owned::new(8, 1);
    let mut m = o.map(1);
    for i in 0..5 {
        m.submit(i, task(i as u64), &[TensorArg::input(key(A), row(0))], 0);
    }
    m.submit(5, task(5), &[TensorArg::inout(key(A), row(0))], 0);
    assert_eq!(
        m.map.linked(),
        1,
        "the five readers are covered by the writer"
    );
    assert_eq!(m.deps(TensorArg::input(key(A), row(0)), 0), [5]);
}

#[test]
fn a_buffer_whose_main_class_empties_hands_its_list_to_another() {
    let mut o = Owned::new(4, 1);
    let mut m = o.map(1);
    // Tiles of 256, 512 and 1024 bytes: three classes of one buffer; the first is its head's.
    let tile = |at: u64, bytes: u32| Tile::contiguous(A + at, 1, bytes);
    for (i, (at, bytes)) in [(0, 256), (0x1000, 512), (0x2000, 1024)]
        .into_iter()
        .enumerate()
    {
        m.submit(
            i,
            task(i as u64),
            &[TensorArg::output(key(A), tile(at, bytes))],
            0,
        );
    }
    assert_eq!(m.map.heads_used(), 1 + 2, "the buffer, two class heads");
    m.retire(1);
    assert_eq!(
        m.map.heads_used(),
        1 + 1,
        "a class head went into the buffer's"
    );
    // Both classes are still found, cell by cell and (for a tile spanning many cells) by
    // walking their lists.
    assert_eq!(m.deps(TensorArg::input(key(A), tile(0x1000, 8)), 1), [1]);
    assert_eq!(m.deps(TensorArg::input(key(A), tile(0x2000, 8)), 1), [2]);
    assert_eq!(m.deps(TensorArg::input(key(A), tile(0, 0x4000)), 1), [1, 2]);
    m.retire(3);
    assert_eq!((m.map.heads_used(), m.map.buckets_used()), (0, 0));
}

#[test]
fn the_buffer_index_survives_many_buffers_coming_and_going() {
    let slots = 16;
    let mut o = Owned::new(slots, 1);
    let mut m = o.map(1);
    let n = if cfg!(miri) { 100 } else { 2000u64 };
    for i in 0..n {
        let g = (i % slots as u64) as usize;
        let buffer = 0x10_0000 + (i * 7919 % 97) * 0x1000;
        let retired = i.saturating_sub(slots as u64 - 1);
        m.submit(
            g,
            task(i),
            &[TensorArg::output(key(buffer), row(0))],
            retired,
        );
        assert_eq!(m.deps(TensorArg::input(key(buffer), row(0)), retired), [i]);
    }
}

#[test]
fn entries_of_retired_tasks_do_not_pile_up() {
    let (slots, k) = (64usize, 8u64);
    let mut o = Owned::new(slots, k as usize);
    let mut m = o.map(k as usize);
    let n = if cfg!(miri) { 30 } else { 5000u64 };
    for i in 0..n {
        let args: Vec<TensorArg> = (0..k)
            .map(|a| {
                let j = i * k + a;
                let buffer = 0x10_0000 + (j % 256) * 0x10_0000;
                TensorArg::output(
                    key(buffer),
                    Tile::block(buffer + (j / 256) * 256, 4, 1, 64, 64),
                )
            })
            .collect();
        let retired = i.saturating_sub(4);
        assert!(
            m.submit((i % slots as u64) as usize, task(i), &args, retired)
                .is_empty()
        );
        // Tasks `retired..=i` are in the map, nothing older.
        assert_eq!(m.map.linked(), (i + 1 - retired) as usize * k as usize);
    }
    // Once every task retired, the index is empty too.
    m.retire(n);
    let used = (m.map.linked(), m.map.heads_used(), m.map.buckets_used());
    assert_eq!(used, (0, 0, 0));
}

#[test]
fn lookups_agree_with_a_scan_of_every_live_argument() {
    // Random narrow and wide tiles of two buffers, random accesses, tasks retiring behind;
    // every lookup must find exactly the live conflicting tasks a full scan finds.
    let (slots, per) = (32usize, 2usize);
    let mut o = Owned::new(slots, per);
    let mut m = o.map(per);
    let mut reference = Reference::default();
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut rnd = |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let bufs = [0x100_0000u64, 0x200_0000];
    let n = if cfg!(miri) { 60 } else { 3000u64 };
    for i in 0..n {
        let retired = i.saturating_sub(slots as u64 - 1);
        let args: Vec<TensorArg> = (0..1 + rnd(per as u64))
            .map(|_| {
                let b = bufs[rnd(2) as usize];
                // Rows of 1 KiB: 1 to 12 rows, so tiles fall in many classes and cells; now
                // and then a single element, or the whole buffer (more cells of the small
                // classes than a lookup probes: it walks their lists).
                let tile = match rnd(16) {
                    0 => Tile::block(b, 8, 64, 128, 128),
                    1 => Tile::contiguous(b + rnd(64 * 128) * 8, 8, 1),
                    _ => Tile::block(
                        b + rnd(64) * 1024 + rnd(32) * 8,
                        8,
                        1 + rnd(12) as u32,
                        1 + rnd(16) as u32,
                        128,
                    ),
                };
                match rnd(3) {
                    0 => TensorArg::input(key(b), tile),
                    1 => TensorArg::output(key(b), tile),
                    _ => TensorArg::inout(key(b), tile),
                }
            })
            .collect();
        let want = reference.submit(i, &args, retired);
        let got = m.submit((i % slots as u64) as usize, task(i), &args, retired);
        assert_eq!(got, want, "task {i}");
        // The index stays within the size `heads_len` gives it.
        assert!(m.map.heads_used() <= m.map.linked(), "task {i}");
        assert!(m.map.buckets_used() <= m.map.linked(), "task {i}");
    }
    m.retire(n);
    let used = (m.map.linked(), m.map.heads_used(), m.map.buckets_used());
    assert_eq!(used, (0, 0, 0));
}

/// One tensor argument of a generated program: a buffer, a tile of it and an access.
#[derive(Clone, Debug)]
struct GenArg {
    buffer: usize,
    tile: GenTile,
    access: u8,
}

/// Tiles of a 64 x 128 matrix of 8-byte elements (rows of 1 KiB).
#[derive(Clone, Debug)]
enum GenTile {
    /// `rows x cols` from `(row, col)`: dense when it spans whole rows or one row.
    Block {
        row: u64,
        col: u64,
        rows: u32,
        cols: u32,
    },
    /// One element.
    Element(u64),
    /// The whole matrix.
    Whole,
}

impl GenArg {
    fn arg(&self) -> TensorArg {
        let b = [0x100_0000u64, 0x200_0000, 0x300_0000][self.buffer];
        let tile = match self.tile {
            GenTile::Block {
                row,
                col,
                rows,
                cols,
            } => Tile::block(b + row * 1024 + col * 8, 8, rows, cols, 128),
            GenTile::Element(i) => Tile::contiguous(b + i * 8, 8, 1),
            GenTile::Whole => Tile::block(b, 8, 64, 128, 128),
        };
        match self.access {
            0 => TensorArg::input(key(b), tile),
            1 => TensorArg::output(key(b), tile),
            _ => TensorArg::inout(key(b), tile),
        }
    }
}

fn gen_arg() -> impl proptest::strategy::Strategy<Value = GenArg> {
    use proptest::prelude::*;
    let tile = prop_oneof![
        6 => (0..56u64, 0..112u64, 1..9u32, 1..17u32).prop_map(|(row, col, rows, cols)| {
            GenTile::Block { row, col, rows, cols }
        }),
        2 => (0..56u64, 1..9u32).prop_map(|(row, rows)| GenTile::Block {
            row,
            col: 0,
            rows,
            cols: 128
        }),
        1 => (0..64 * 128u64).prop_map(GenTile::Element),
        1 => Just(GenTile::Whole),
    ];
    (0..3usize, tile, 0..3u8).prop_map(|(buffer, tile, access)| GenArg {
        buffer,
        tile,
        access,
    })
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig {
        cases: if cfg!(miri) { 2 } else { 64 },
        // Under miri there is no file system to keep failing cases in.
        failure_persistence: if cfg!(miri) {
            None
        } else {
            proptest::prelude::ProptestConfig::default().failure_persistence
        },
        ..proptest::prelude::ProptestConfig::default()
    })]

    /// Random programs (tasks of 1 to 4 arguments over three buffers, the watermark lagging
    /// 0 to 15 tasks behind) find exactly what the reference's scan finds, and the map
    /// empties once every task retired.
    #[test]
    fn the_map_finds_what_a_scan_of_every_live_argument_finds(
        program in proptest::collection::vec(
            (proptest::collection::vec(gen_arg(), 1..5), 0..16u64),
            1..if cfg!(miri) { 12 } else { 120 },
        )
    ) {
        let (slots, per) = (16usize, 4usize);
        let mut o = Owned::new(slots, per);
        let mut m = o.map(per);
        let mut reference = Reference::default();
        let mut retired = 0u64;
        for (i, (args, lag)) in program.iter().enumerate() {
            let i = i as u64;
            retired = retired.max(i.saturating_sub(*lag));
            let args: Vec<TensorArg> = args.iter().map(GenArg::arg).collect();
            let want = reference.submit(i, &args, retired);
            let got = m.submit((i % slots as u64) as usize, task(i), &args, retired);
            proptest::prop_assert_eq!(got, want, "task {}", i);
        }
        m.retire(program.len() as u64);
        proptest::prop_assert_eq!(m.map.linked(), 0);
    }
}

impl Map<'_> {
    /// Files an access of `task` (in slot `g`, its only argument) to all of `buffer`, as a
    /// replay does for an instance's task, through `site`.
    fn whole(
        &mut self,
        g: usize,
        task: TaskId,
        (buffer, writes): (Buffer, bool),
        site: &mut Option<WholeSite>,
    ) {
        let old = self.tenants[g].replace((task, 1)).map_or(0, |t| t.1);
        self.map.drop_slot(SlotIndex::at(g), old);
        self.map
            .add_whole((SlotIndex::at(g), task), 0, (buffer, writes), site);
    }
}

/// A buffer of 4 KiB at `base`.
fn small(base: u64) -> Buffer {
    Buffer::new(base, 4096)
}

#[test]
fn a_kept_site_whose_head_slot_another_buffer_took_is_not_used() {
    let mut o = Owned::new(8, 2);
    let mut m = o.map(2);
    // Two buffers whose heads start their probes at the same slot.
    let home = |m: &Map<'_>, base: u64| m.map.heads.home_of_buffer(base);
    let other = (1..4096u64)
        .map(|k| A + k * 0x1_0000)
        .find(|&b| home(&m, b) == home(&m, A))
        .expect("a buffer whose head shares A's home slot");
    let everything = |b: Buffer| TensorArg::output(b, Tile::contiguous(b.base, 4, 1024));
    let mut site = None;
    m.whole(0, task(0), (small(A), false), &mut site);
    // A's head leaves; the other buffer's, of the same class, takes its slot.
    m.retire(1);
    m.whole(1, task(1), (small(other), false), &mut None);
    // Through A's stale site: filed in A's own list, not in the other buffer's.
    m.whole(2, task(2), (small(A), true), &mut site);
    assert_eq!(m.deps(everything(small(A)), 1), [2]);
    assert_eq!(m.deps(everything(small(other)), 1), [1]);
}

#[test]
fn whole_buffer_entries_filed_through_a_kept_site_are_found_however_the_map_changed() {
    let mut o = Owned::new(8, 2);
    let mut m = o.map(2);
    let everything = |b: Buffer| TensorArg::output(b, Tile::contiguous(b.base, 4, 1024));
    let mut site = None;
    // Two readers of all of A through one site: the second goes where the first went.
    m.whole(0, task(0), (small(A), false), &mut site);
    assert!(site.is_some());
    m.whole(1, task(1), (small(A), false), &mut site);
    assert_eq!(m.deps(everything(small(A)), 0), [0, 1]);
    // Both retire: A's head leaves the index, and B's may take its place.
    m.retire(2);
    m.whole(2, task(2), (small(B), true), &mut None);
    // The kept site is stale: the entry is filed anew, found, and keeps a site of its own.
    m.whole(3, task(3), (small(A), true), &mut site);
    assert_eq!(m.deps(everything(small(A)), 2), [3]);
    assert_eq!(m.deps(everything(small(B)), 2), [2]);
    // Tiles of another size in A: its head's list may now be another class's.
    m.submit(
        4,
        task(4),
        &[TensorArg::input(small(A), Tile::contiguous(A, 4, 2))],
        2,
    );
    m.retire(4);
    m.whole(5, task(5), (small(A), false), &mut site);
    m.whole(6, task(6), (small(A), false), &mut site);
    assert_eq!(m.deps(everything(small(A)), 4), [4, 5, 6]);
    // A writer of the first bytes waits for the tile's reader and both whole readers.
    let first = TensorArg::output(small(A), Tile::contiguous(A, 4, 2));
    assert_eq!(m.deps(first, 4), [4, 5, 6]);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig {
        cases: if cfg!(miri) { 2 } else { 64 },
        failure_persistence: if cfg!(miri) {
            None
        } else {
            proptest::prelude::ProptestConfig::default().failure_persistence
        },
        ..proptest::prelude::ProptestConfig::default()
    })]

    /// Random programs that mix submits with whole-buffer accesses filed through sites kept
    /// per buffer for the whole program (a replay keeps them for one instance only: longer
    /// is harder), slots reused and tasks retiring behind: every submit finds exactly what
    /// the reference's scan finds, whole accesses included, and the map empties at the end.
    #[test]
    fn whole_accesses_through_kept_sites_are_found_as_a_scan_finds_them(
        program in proptest::collection::vec(
            (
                proptest::collection::vec(gen_arg(), 1..4),
                0..16u64,
                proptest::option::weighted(0.4, (0..3usize, proptest::bool::ANY)),
            ),
            1..if cfg!(miri) { 12 } else { 120 },
        )
    ) {
        let (slots, per) = (16usize, 4usize);
        let mut o = Owned::new(slots, per);
        let mut m = o.map(per);
        let mut reference = Reference::default();
        let mut sites = [None; 3];
        let mut retired = 0u64;
        for (i, (args, lag, whole)) in program.iter().enumerate() {
            let i = i as u64;
            retired = retired.max(i.saturating_sub(*lag));
            let g = (i % slots as u64) as usize;
            if let Some((b, writes)) = *whole {
                // All of the generated matrix: the bytes of GenTile::Whole.
                let all = GenArg { buffer: b, tile: GenTile::Whole, access: 2 * writes as u8 };
                let arg = all.arg();
                m.retire(retired);
                m.whole(g, task(i), (Buffer::new(arg.buffer.base, 64 * 1024), writes), &mut sites[b]);
                reference.file(i, arg, retired);
                continue;
            }
            let args: Vec<TensorArg> = args.iter().map(GenArg::arg).collect();
            let want = reference.submit(i, &args, retired);
            let got = m.submit(g, task(i), &args, retired);
            proptest::prop_assert_eq!(got, want, "task {}", i);
        }
        m.retire(program.len() as u64);
        proptest::prop_assert_eq!(m.map.linked(), 0);
    }
}
