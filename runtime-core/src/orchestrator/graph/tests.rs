//! Graphs against the scripted machine: a replay wires what submitting its tasks one by one
//! wires (a property over random graphs, bindings and fresh tasks between replays), refuses
//! bindings that do not fit, keeps instances apart, and holds its internal buffers until its
//! last task is reclaimed.

use std::string::ToString;
use std::vec;
use std::vec::Vec;

use proptest::prelude::*;

use super::*;
use crate::error::{GraphError, SubmitError};
use crate::ids::Seq;
use crate::orchestrator::{Dependency, Orchestrator, TaskSpec};
use crate::predicate::CmpOp;
use crate::region::config::Config;
use crate::tables::SlotIndex;
use crate::tensor::tile::Access;
use crate::testing::rig::{Rig, Script, steps};

/// Every buffer of these tests: 16 elements of 4 bytes.
const LEN: u64 = 64;

/// A machine whose window holds every task a test submits, with a 1 MiB heap.
fn rig() -> Rig {
    let cfg = Config {
        task_window: 256,
        max_deps: 64,
        ..Config::tiny()
    };
    let mut rig = Rig::new(cfg, 0);
    rig.p.heap = (0x10_0000, 1 << 20);
    rig
}

/// The tiles the tests pick from, in a 16-element buffer at `base`: the whole, halves, a
/// middle, one element, and two interleaved strided tiles (with holes).
fn tile(base: u64, which: usize) -> Tile {
    match which {
        0 => Tile::contiguous(base, 4, 16),
        1 => Tile::contiguous(base, 4, 8),
        2 => Tile::contiguous(base + 32, 4, 8),
        3 => Tile::contiguous(base + 16, 4, 8),
        4 => Tile::contiguous(base + 8, 4, 1),
        5 => Tile::block(base, 4, 4, 2, 4),
        _ => Tile::block(base + 8, 4, 4, 2, 4),
    }
}

const TILES: usize = 7;

fn arg(buffer: Buffer, which: usize, access: Access) -> TensorArg {
    TensorArg {
        buffer,
        tile: tile(buffer.base, which),
        access,
        dtype: None,
    }
}

/// The tensor arguments `args` plan, buffer `k` being `buffer(k)`.
fn planned(args: &[ArgPlan], buffer: impl Fn(usize) -> Buffer) -> Vec<TensorArg> {
    args.iter()
        .map(|a| arg(buffer(a.buffer), a.tile, a.access))
        .collect()
}

fn vector(tensors: &[TensorArg]) -> TaskSpec<'_> {
    TaskSpec::new(KernelId(1), WorkerClass::Aiv).tensors(tensors)
}

/// Storage for a graph of up to 16 tasks.
struct Store {
    tasks: Vec<GraphRecordedTask>,
    args: Vec<GraphRecordedArg>,
    words: Vec<u64>,
}

impl Store {
    fn new() -> Self {
        Store {
            tasks: vec![GraphRecordedTask::EMPTY; 16],
            args: vec![GraphRecordedArg::EMPTY; 64],
            words: vec![0; 256],
        }
    }
    fn storage(&mut self) -> GraphStorage<'_> {
        GraphStorage {
            tasks: &mut self.tasks,
            args: &mut self.args,
            words: &mut self.words,
        }
    }
}

/// One tensor argument of a planned task: a buffer (of the graph's boundaries then internals,
/// or of the pool for a fresh task), a tile and an access.
#[derive(Clone, Debug)]
struct ArgPlan {
    buffer: usize,
    tile: usize,
    access: Access,
}

#[derive(Clone, Debug)]
struct TaskPlan {
    args: Vec<ArgPlan>,
    /// Earlier tasks of the graph it is ordered after by name.
    after: Vec<u32>,
}

/// What the program does, in order: a fresh task on the pool, or a replay binding boundary
/// `i` to pool buffer `bind[i]`.
#[derive(Clone, Debug)]
enum Step {
    Fresh(Vec<ArgPlan>),
    Replay(Vec<usize>),
}

#[derive(Clone, Debug)]
struct Plan {
    boundaries: usize,
    internals: usize,
    tasks: Vec<TaskPlan>,
    steps: Vec<Step>,
}

/// Buffers the program's fresh tasks and replays' bindings use.
const POOL: usize = 4;

fn pool(k: usize) -> Buffer {
    Buffer::new(0x4000_0000 + k as u64 * 0x1000, LEN)
}

/// The boundaries as recorded: elsewhere than any binding, so every replay moves them.
fn recorded(i: usize) -> Buffer {
    Buffer::new(0x5000_0000 + i as u64 * 0x1000, LEN)
}

fn access() -> impl Strategy<Value = Access> {
    prop_oneof![Just(Access::In), Just(Access::Out), Just(Access::InOut)]
}

fn args(buffers: usize) -> impl Strategy<Value = Vec<ArgPlan>> {
    proptest::collection::vec(
        (0..buffers, 0..TILES, access()).prop_map(|(buffer, tile, access)| ArgPlan {
            buffer,
            tile,
            access,
        }),
        1..=3,
    )
}

fn plan() -> impl Strategy<Value = Plan> {
    (1..=3usize, 0..=2usize)
        .prop_flat_map(|(boundaries, internals)| {
            let buffers = boundaries + internals;
            let task = (args(buffers), proptest::collection::vec(0..16u32, 0..=1));
            let steps = proptest::collection::vec(
                prop_oneof![
                    args(POOL).prop_map(Step::Fresh),
                    Just((0..POOL).collect::<Vec<_>>())
                        .prop_shuffle()
                        .prop_map(move |p| Step::Replay(p[..boundaries].to_vec())),
                ],
                1..=8,
            );
            (
                Just(boundaries),
                Just(internals),
                proptest::collection::vec(task, 1..=8),
                steps,
            )
        })
        .prop_map(|(boundaries, internals, tasks, steps)| Plan {
            boundaries,
            internals,
            tasks: tasks
                .into_iter()
                .enumerate()
                .map(|(i, (args, after))| TaskPlan {
                    args,
                    // Only earlier tasks can be named.
                    after: after.into_iter().filter(|&a| a < i as u32).collect(),
                })
                .collect(),
            steps,
        })
}

/// Each task's producers (by sequence number), as `run` saw them wired.
type Wiring = Vec<Vec<u64>>;

/// What a run did: each task's producers, and what it was.
struct Ran {
    wiring: Wiring,
    tasks: Vec<Ask>,
}

/// What a task asked for: its instance (`None` for a fresh task), its accesses (buffer
/// base, whether it writes), and the tasks it named.
#[derive(Default)]
struct Ask {
    instance: Option<usize>,
    accesses: Vec<(u64, bool)>,
    named: Vec<u64>,
}

fn accesses(tensors: &[TensorArg]) -> Vec<(u64, bool)> {
    tensors
        .iter()
        .map(|a| (a.buffer.base, a.access.writes()))
        .collect()
}

/// Runs `plan` on a fresh machine, each replay through the graph (`replay`) or as its tasks
/// submitted one by one with the same buffers (and so at the same addresses).
fn run(plan: &Plan, replay: bool) -> Ran {
    let mut tasks = Vec::new();
    let rig = rig();
    let mut o = rig.orchestrator();
    let mut wiring: Wiring = Vec::new();
    let mut note = |d: Dependency| {
        let c = d.consumer.seq().0 as usize;
        if wiring.len() <= c {
            wiring.resize(c + 1, Vec::new());
        }
        wiring[c].push(d.producer.seq().0);
    };
    let mut store = Store::new();
    let boundaries: Vec<Buffer> = (0..plan.boundaries).map(recorded).collect();
    let graph = {
        let mut rec = o.record(store.storage(), &boundaries).unwrap();
        let internals: Vec<Buffer> = (0..plan.internals)
            .map(|_| rec.internal(LEN, 16).unwrap())
            .collect();
        let buffers: Vec<Buffer> = boundaries.iter().chain(&internals).copied().collect();
        for t in &plan.tasks {
            let tensors = planned(&t.args, |b| buffers[b]);
            let after: Vec<Node> = t.after.iter().map(|&n| Node(n)).collect();
            rec.add_after(&vector(&tensors), &after).unwrap();
        }
        rec.finish()
    };
    for (n, step) in plan.steps.iter().enumerate() {
        match step {
            Step::Fresh(args) => {
                let tensors = planned(args, pool);
                o.submit_recorded(&vector(&tensors), &mut note).unwrap();
                tasks.push(Ask {
                    accesses: accesses(&tensors),
                    ..Ask::default()
                });
            }
            Step::Replay(bind) => {
                let bound: Vec<Buffer> = bind.iter().map(|&k| pool(k)).collect();
                if replay {
                    let instance = o
                        .replay_recorded(&graph, &Bindings::new(&bound), &mut note)
                        .unwrap();
                    assert_eq!(instance.len() as usize, plan.tasks.len());
                    tasks.extend((0..instance.len()).map(|_| Ask {
                        instance: Some(n),
                        ..Ask::default()
                    }));
                } else {
                    let epoch = rig.tables().cfg().epoch;
                    let ran = one_by_one(&mut o, plan, (&bound, epoch), &mut note);
                    tasks.extend(ran.into_iter().map(|a| Ask {
                        instance: Some(n),
                        ..a
                    }));
                }
            }
        }
    }
    drop(o);
    wiring.resize(
        rig.tables().rings()[0]
            .next
            .0
            .load(crate::sync::Ordering::Relaxed) as usize,
        Vec::new(),
    );
    Ran { wiring, tasks }
}

/// Submits the tasks of `plan`'s graph one by one with boundaries `bound` and internal
/// buffers allocated as a replay would (so at the same addresses).
fn one_by_one(
    o: &mut Orchestrator<'_, '_, Script>,
    plan: &Plan,
    (bound, epoch): (&[Buffer], u16),
    note: &mut dyn FnMut(Dependency),
) -> Vec<Ask> {
    let internals: Vec<Buffer> = (0..plan.internals)
        .map(|_| o.alloc_buffer(0, LEN, 16).unwrap())
        .collect();
    let buffers: Vec<Buffer> = bound.iter().chain(&internals).copied().collect();
    let first = o.submitted();
    let mut ran = Vec::new();
    for t in &plan.tasks {
        let tensors = planned(&t.args, |b| buffers[b]);
        let deps: Vec<TaskId> = t
            .after
            .iter()
            .map(|&n| TaskId::new(epoch, 0, Seq(first + n as u64)))
            .collect();
        o.submit_recorded(&vector(&tensors).deps(&deps), note)
            .unwrap();
        ran.push(Ask {
            instance: None,
            accesses: accesses(&tensors),
            named: deps.iter().map(|d| d.seq().0).collect(),
        });
    }
    ran
}

/// Which task must finish before which: the transitive closure of `wiring`.
fn order(wiring: &Wiring) -> Vec<Vec<bool>> {
    let n = wiring.len();
    let mut before = vec![vec![false; n]; n];
    for c in 0..n {
        for &p in &wiring[c] {
            let p = p as usize;
            before[c][p] = true;
            let via = before[p].clone();
            for (b, v) in before[c].iter_mut().zip(via) {
                *b |= v;
            }
        }
    }
    before
}

/// The order buffer-granularity conflicts (and named dependencies) give: `c` after `p` when
/// both touch one buffer and one of them writes it, or `c` named `p`.
fn coarse(tasks: &[Ask]) -> Wiring {
    let conflict = |c: &Ask, p: &Ask| {
        c.accesses
            .iter()
            .any(|&(b, w)| p.accesses.iter().any(|&(pb, pw)| pb == b && (w || pw)))
    };
    (0..tasks.len())
        .map(|c| {
            (0..c)
                .filter(|&p| tasks[c].named.contains(&(p as u64)) || conflict(&tasks[c], &tasks[p]))
                .map(|p| p as u64)
                .collect()
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: if cfg!(miri) { 3 } else { 128 },
        failure_persistence: if cfg!(miri) {
            None
        } else {
            ProptestConfig::default().failure_persistence
        },
        ..ProptestConfig::default()
    })]

    /// Replays interleaved with fresh tasks keep every order their tasks submitted one by
    /// one would have; inside an instance, exactly that order; and no order beyond what
    /// whole-buffer conflicts give (an instance meets the rest of the program at the
    /// granularity of its boundary buffers).
    #[test]
    fn a_replay_keeps_the_order_of_its_tasks_submitted_one_by_one(plan in plan()) {
        let replayed = run(&plan, true);
        let submitted = run(&plan, false);
        let n = submitted.wiring.len();
        prop_assert_eq!(replayed.wiring.len(), n);
        let (a, b) = (order(&replayed.wiring), order(&submitted.wiring));
        let c = order(&coarse(&submitted.tasks));
        for t in 0..n {
            for p in 0..n {
                prop_assert!(!b[t][p] || a[t][p], "task {} no longer waits for {}", t, p);
                prop_assert!(!a[t][p] || c[t][p], "task {} waits for {} sharing no buffer", t, p);
                let (it, ip) = (submitted.tasks[t].instance, submitted.tasks[p].instance);
                if it.is_some() && it == ip {
                    prop_assert_eq!(a[t][p], b[t][p], "inside an instance: task {} and {}", t, p);
                }
            }
        }
    }
}

/// Records, on `o`, a graph of two tasks over boundaries `x` (read) and `y` (written)
/// through internal buffer `t`: `t = f(x)`, then `y = g(t)`.
fn two_step<'s>(
    o: &Orchestrator<'_, '_, Script>,
    store: &'s mut Store,
) -> Result<Graph<'s>, GraphError> {
    let mut rec = o.record(store.storage(), &[recorded(0), recorded(1)])?;
    let t = rec.internal(LEN, 16)?;
    rec.add(&vector(&[
        arg(recorded(0), 0, Access::In),
        arg(t, 0, Access::Out),
    ]))?;
    rec.add(&vector(&[
        arg(t, 0, Access::In),
        arg(recorded(1), 0, Access::Out),
    ]))?;
    Ok(rec.finish())
}

#[test]
fn bindings_that_do_not_fit_are_refused_before_anything_is_submitted() {
    let rig = rig();
    let mut o = rig.orchestrator();
    let mut store = Store::new();
    let graph = two_step(&o, &mut store).unwrap();
    assert_eq!((graph.tasks(), graph.edges()), (2, 1));
    let cases = [
        (
            vec![pool(0)],
            GraphError::WrongCount {
                given: 1,
                recorded: 2,
            },
        ),
        (
            vec![pool(0), Buffer::new(pool(1).base, 32)],
            GraphError::WrongSize {
                index: 1,
                given: 32,
                recorded: LEN,
            },
        ),
        (
            vec![pool(0), Buffer::new(pool(0).base + 32, LEN)],
            GraphError::Aliased { a: 0, b: 1 },
        ),
    ];
    for (bound, want) in cases {
        assert_eq!(o.replay(&graph, &Bindings::new(&bound)), Err(want));
    }
    let bound = [pool(0), pool(1)];
    assert_eq!(
        o.replay(&graph, &Bindings::new(&bound).ring(3)),
        Err(GraphError::Submit {
            task: 0,
            error: SubmitError::BadRing { ring: 3, rings: 1 }
        })
    );
    let unsubmitted = TaskId::new(rig.tables().cfg().epoch, 0, Seq(5));
    assert!(matches!(
        o.replay(&graph, &Bindings::new(&bound).after(&[unsubmitted])),
        Err(GraphError::Submit {
            task: 0,
            error: SubmitError::NotYetSubmitted { .. }
        })
    ));
    assert_eq!(
        o.submitted(),
        0,
        "nothing of a refused replay was submitted"
    );
    let i = o.replay(&graph, &Bindings::new(&bound)).unwrap();
    assert_eq!((i.len(), o.submitted()), (2, 2));
    let (first, last) = (i.task(Node(0)).unwrap(), i.last().unwrap());
    assert_eq!((first.seq().0, last.seq().0), (0, 1));
    assert_eq!(i.task(Node(2)), None);
}

#[test]
fn a_recording_refuses_what_a_graph_cannot_hold_and_names_it() {
    let rig = rig();
    let o = rig.orchestrator();
    let mut store = Store::new();
    let (x, y) = (recorded(0), recorded(1));
    // Boundaries: overlapping, empty, in the internal buffers' addresses.
    let half = Buffer::new(x.base + 32, LEN);
    let refused = |b: &[Buffer]| o.record(Store::new().storage(), b).err();
    assert_eq!(
        refused(&[x, half]),
        Some(GraphError::OverlappingBoundaries { a: 0, b: 1 })
    );
    assert_eq!(
        refused(&[Buffer::new(x.base, 0)]),
        Some(GraphError::OverlappingBoundaries { a: 0, b: 0 })
    );
    assert_eq!(
        refused(&[Buffer::new(u64::MAX - 64, 8)]),
        Some(GraphError::Reserved { index: 0 })
    );
    let mut rec = o.record(store.storage(), &[x, y]).unwrap();
    assert_eq!(
        rec.internal(LEN, 3).err(),
        Some(GraphError::InternalBuffer {
            error: SubmitError::BadAlignment { align: 3 }
        })
    );
    // A buffer the graph does not know, ids and rings, nodes that are not earlier tasks, a
    // tile outside its buffer, an unknown kernel.
    let elsewhere = pool(0);
    assert_eq!(
        rec.add(&vector(&[
            arg(x, 0, Access::In),
            arg(elsewhere, 0, Access::Out)
        ])),
        Err(GraphError::UnknownBuffer {
            task: 0,
            arg: 1,
            base: elsewhere.base
        })
    );
    let a = rec.add(&vector(&[arg(x, 0, Access::Out)])).unwrap();
    let id = TaskId::new(rig.tables().cfg().epoch, 0, Seq(0));
    let named = [arg(y, 0, Access::Out)];
    assert_eq!(
        rec.add(&vector(&named).deps(&[id])),
        Err(GraphError::NotInGraph { task: 1 })
    );
    assert_eq!(
        rec.add(&vector(&named).ring(1)),
        Err(GraphError::NotInGraph { task: 1 })
    );
    assert_eq!(
        rec.add_after(&vector(&named), &[Node(1)]),
        Err(GraphError::BadNode { task: 1, node: 1 })
    );
    let outside = TensorArg::output(y, Tile::contiguous(y.base + 60, 4, 2));
    assert!(matches!(
        rec.add(&vector(&[outside])),
        Err(GraphError::Refused {
            task: 1,
            error: SubmitError::BadTensor { index: 0, .. }
        })
    ));
    assert_eq!(
        rec.add(&TaskSpec::new(KernelId(99), WorkerClass::Aiv)),
        Err(GraphError::Refused {
            task: 1,
            error: SubmitError::UnknownKernel {
                kernel: KernelId(99)
            }
        })
    );
    let b = rec.add_after(&vector(&named), &[a]).unwrap();
    assert_eq!(b.index(), 1);
    assert_eq!(rec.finish().edges(), 1);
    // Storage: full of tasks, then of words.
    let mut small = Store {
        tasks: vec![GraphRecordedTask::EMPTY; 1],
        args: vec![GraphRecordedArg::EMPTY; 4],
        words: vec![0; 1],
    };
    let mut rec = o.record(small.storage(), &[x]).unwrap();
    assert_eq!(
        rec.add(&TaskSpec::dummy().args(&[1, 2])),
        Err(GraphError::StorageFull {
            what: "words",
            capacity: 1
        })
    );
    rec.add(&TaskSpec::dummy()).unwrap();
    assert_eq!(
        rec.add(&TaskSpec::dummy()),
        Err(GraphError::StorageFull {
            what: "tasks",
            capacity: 1
        })
    );
}

#[test]
fn a_graph_recorded_by_another_run_is_refused() {
    let (a, b) = (rig(), rig());
    let mut store = Store::new();
    let graph = two_step(&a.orchestrator(), &mut store).unwrap();
    let bound = [pool(0), pool(1)];
    assert_eq!(
        b.orchestrator().replay(&graph, &Bindings::new(&bound)),
        Err(GraphError::OtherRun)
    );
}

#[test]
fn instances_keep_their_own_internal_buffers_and_wait_only_for_what_they_share() {
    let rig = rig();
    let mut o = rig.orchestrator();
    let mut store = Store::new();
    let graph = two_step(&o, &mut store).unwrap();
    let mut wiring = Vec::new();
    let mut note = |d: Dependency| wiring.push((d.consumer.seq().0, d.producer.seq().0));
    // Two instances at once on distinct buffers, then a third reading the first's output.
    let (b1, b2, b3) = ([pool(0), pool(1)], [pool(2), pool(3)], [pool(1), pool(2)]);
    for bound in [&b1, &b2, &b3] {
        o.replay_recorded(&graph, &Bindings::new(bound), &mut note)
            .unwrap();
    }
    // Each instance's second task waits for its first (their internal buffer); the third
    // instance's first reads pool(1), which instance 1's second task wrote, and its second
    // writes pool(2), which instance 2's first read (write after read).
    wiring.sort();
    assert_eq!(wiring, vec![(1, 0), (3, 2), (4, 1), (5, 2), (5, 4)]);
    // Each instance's internal buffer is its own: the row of each first task names a
    // different one.
    let t = rig.tables();
    let internal = |seq: usize| t.tensors_of(SlotIndex::at(seq))[1].load().buffer;
    let (i1, i2, i3) = (internal(0), internal(2), internal(4));
    assert!(i1 != i2 && i2 != i3 && i1 != i3, "{i1:?} {i2:?} {i3:?}");
    assert!(
        i1.base >= 0x10_0000 && i1.end() <= 0x10_0000 + (1 << 20),
        "from the heap"
    );
    // The kernels see their bound buffers.
    assert_eq!(t.tensors_of(SlotIndex::at(1))[1].load().buffer, pool(1));
}

#[test]
fn views_of_a_graphs_buffers_are_ordered_as_the_buffers_and_move_with_them() {
    let rig = rig();
    let mut o = rig.orchestrator();
    let mut store = Store::new();
    let mut rec = o.record(store.storage(), &[recorded(0)]).unwrap();
    let t = rec.internal(LEN, 16).unwrap();
    // The first half of `t` as a buffer of its own, and the second half of the boundary.
    let head = Buffer::new(t.base, LEN / 2);
    let tail = Buffer::new(recorded(0).base + LEN / 2, LEN / 2);
    let write = |b: Buffer| TensorArg::output(b, Tile::contiguous(b.base, 4, 8));
    let read = |b: Buffer| TensorArg::input(b, Tile::contiguous(b.base, 4, 8));
    rec.add(&vector(&[write(head)])).unwrap();
    rec.add(&vector(&[read(t), write(tail)])).unwrap();
    let graph = rec.finish();
    let mut wiring = Vec::new();
    let bound = [pool(3)];
    o.replay_recorded(&graph, &Bindings::new(&bound), &mut |d: Dependency| {
        wiring.push((d.consumer.seq().0, d.producer.seq().0))
    })
    .unwrap();
    // The read of all of `t` waits for the write of its first half.
    assert_eq!(wiring, vec![(1, 0)]);
    // Each kernel sees its view, moved: the first half of the instance's `t`, the second
    // half of the bound buffer.
    let tables = rig.tables();
    let seen = |seq: usize, k: usize| tables.tensors_of(SlotIndex::at(seq))[k].load();
    let (h, whole) = (seen(0, 0), seen(1, 0));
    assert_eq!((h.buffer.base, h.buffer.len), (whole.buffer.base, LEN / 2));
    assert_eq!(whole.buffer.len, LEN);
    let moved = seen(1, 1);
    assert_eq!(moved.buffer, Buffer::new(pool(3).base + LEN / 2, LEN / 2));
    assert_eq!(moved.tile.base, pool(3).base + LEN / 2);
}

#[test]
fn patched_scalars_take_each_replays_values_and_bad_patches_are_refused() {
    let rig = rig();
    let mut o = rig.orchestrator();
    let mut store = Store::new();
    let mut rec = o.record(store.storage(), &[recorded(0)]).unwrap();
    let t = [arg(recorded(0), 0, Access::In)];
    let first = rec.add(&vector(&t).args(&[5, 6, 7])).unwrap();
    rec.add(&vector(&t).args(&[8])).unwrap();
    rec.patch(first, 1, 0).unwrap();
    rec.patch(first, 2, 1).unwrap();
    let bad = |e| matches!(e, Err(GraphError::BadPatch { .. }));
    assert!(bad(rec.patch(first, 3, 0)), "no fourth scalar");
    assert!(
        bad(rec.patch(first, 0, MAX_GRAPH_SCALARS as u32)),
        "no such slot"
    );
    assert!(matches!(
        rec.patch(Node::at(2), 0, 0),
        Err(GraphError::BadNode { node: 2, .. })
    ));
    let graph = rec.finish();
    assert_eq!(graph.scalars(), 2);
    let b = [pool(0)];
    assert_eq!(
        o.replay(&graph, &Bindings::new(&b)).unwrap_err(),
        GraphError::WrongScalars {
            given: 0,
            recorded: 2
        }
    );
    for values in [[60, 70], [61, 71]] {
        o.replay(&graph, &Bindings::new(&b).scalars(&values))
            .unwrap();
    }
    // The kernels see each replay's values; the unpatched scalars stay as recorded.
    let tables = rig.tables();
    let args = |seq: usize, n: usize| -> Vec<u64> {
        tables.args_of(SlotIndex::at(seq))[..n]
            .iter()
            .map(|a| a.load(crate::sync::Ordering::Relaxed))
            .collect()
    };
    assert_eq!(args(0, 3), [5, 60, 70]);
    assert_eq!(args(1, 1), [8]);
    assert_eq!(args(2, 3), [5, 61, 71]);
}

#[test]
fn bindings_that_do_not_fit_fall_back_to_one_by_one_submits_when_asked() {
    let rig = rig();
    let mut o = rig.orchestrator();
    let mut store = Store::new();
    let graph = two_step(&o, &mut store).unwrap();
    // Aliased: the same buffer read and written. Refused, unless the replay asks to fall back.
    let same = [pool(0), pool(0)];
    assert!(matches!(
        o.replay(&graph, &Bindings::new(&same)),
        Err(GraphError::Aliased { .. })
    ));
    let mut wiring = Vec::new();
    let mut note = |d: Dependency| wiring.push((d.consumer.seq().0, d.producer.seq().0));
    let i = o
        .replay_recorded(&graph, &Bindings::new(&same).or_submit(), &mut note)
        .unwrap();
    assert!(matches!(i.fell_back(), Some(GraphError::Aliased { .. })));
    assert_eq!(i.len(), 2);
    // Then a replay that fits, reading what the one-by-one instance wrote: the tensor map
    // had every argument of it, exactly.
    let fits = [pool(0), pool(1)];
    let j = o
        .replay_recorded(&graph, &Bindings::new(&fits).or_submit(), &mut note)
        .unwrap();
    assert_eq!(j.fell_back(), None);
    wiring.sort();
    wiring.dedup();
    assert_eq!(wiring, vec![(1, 0), (2, 1), (3, 2)]);
    // A longer buffer: the tiles still lie in it.
    let longer = [Buffer::new(pool(4).base, 2 * LEN), pool(6)];
    let k = o
        .replay(&graph, &Bindings::new(&longer).or_submit())
        .unwrap();
    assert!(matches!(
        k.fell_back(),
        Some(GraphError::WrongSize { index: 0, .. })
    ));
    // A shorter one: the submit refuses the tile outside it, naming the task.
    let shorter = [Buffer::new(pool(7).base, LEN / 2), pool(8)];
    let r = o.replay(&graph, &Bindings::new(&shorter).or_submit());
    assert!(
        matches!(
            r,
            Err(GraphError::Submit {
                task: 0,
                error: crate::SubmitError::BadTensor { .. }
            })
        ),
        "{r:?}"
    );
    // Counts never fall back.
    assert!(matches!(
        o.replay(&graph, &Bindings::new(&[pool(0)]).or_submit()),
        Err(GraphError::WrongCount { .. })
    ));
}

#[test]
fn an_instance_holds_its_internal_buffers_until_its_last_task_is_reclaimed() {
    let mut rig = Rig::new(Config::tiny(), 0);
    rig.p.heap = (0x10_0000, 256);
    let mut o = rig.orchestrator();
    let mut s = rig.scheduler();
    let mut store = Store::new();
    let (x, y) = (recorded(0), recorded(1));
    // Task 0 writes internal buffer t; task 1, independent of it, writes y.
    let graph = {
        let mut rec = o.record(store.storage(), &[x, y]).unwrap();
        let t = rec.internal(128, 64).unwrap();
        rec.add(&vector(&[
            arg(x, 0, Access::In),
            TensorArg::whole_output(t, 4),
        ]))
        .unwrap();
        rec.add(&vector(&[arg(y, 0, Access::Out)])).unwrap();
        rec.finish()
    };
    let bound = [pool(0), pool(1)];
    o.replay(&graph, &Bindings::new(&bound)).unwrap();
    let t = rig.tables();
    let internal = t.tensors_of(SlotIndex::at(0))[1].load().buffer;
    s.step();
    // Both dispatched (one per AIV core); task 0 finishes, task 1 still runs.
    let rung = rig.p.rung();
    let on_core = |seq: u64| *rung.iter().find(|r| r.2.seq().0 == seq).unwrap();
    let (core, token, _) = on_core(0);
    rig.p.fin(core.0, token.bits());
    steps(&mut s, 4);
    assert_eq!(
        t.rings()[0].retired(),
        1,
        "task 0 is reclaimed, task 1 runs"
    );
    let (tail, _) = o.heap_tail(0);
    assert!(
        o.heaps[0].address(tail) <= internal.base,
        "the instance's buffer at {:#x} is still held (tail at {tail})",
        internal.base
    );
    let (core, token, _) = on_core(1);
    rig.p.fin(core.0, token.bits());
    steps(&mut s, 4);
    assert_eq!(t.rings()[0].retired(), 2);
    assert_eq!(
        o.heap_tail(0).0,
        o.heaps[0].head,
        "everything is free again"
    );
}

#[test]
fn predicates_in_bound_and_internal_buffers_move_with_them() {
    let rig = rig();
    let mut o = rig.orchestrator();
    let mut store = Store::new();
    let x = recorded(0);
    let graph = {
        let mut rec = o.record(store.storage(), &[x]).unwrap();
        let t = rec.internal(LEN, 16).unwrap();
        rec.add(&vector(&[arg(x, 0, Access::In)]).when(Predicate::new(
            x.base + 8,
            4,
            CmpOp::Eq,
            1,
        )))
        .unwrap();
        rec.add(&vector(&[arg(t, 0, Access::Out)]).when(Predicate::new(
            t.base + 4,
            4,
            CmpOp::Ne,
            0,
        )))
        .unwrap();
        // Outside the graph's buffers: checked at record as a submit would be (the script
        // reads no memory).
        let outside = Predicate::new(0x2000, 8, CmpOp::Lt, 9);
        assert!(matches!(
            rec.add(&vector(&[arg(t, 0, Access::In)]).when(outside)),
            Err(GraphError::Refused {
                task: 2,
                error: SubmitError::BadPredicate { .. }
            })
        ));
        rec.finish()
    };
    o.replay(&graph, &Bindings::new(&[pool(3)])).unwrap();
    let t = rig.tables();
    let internal = t.tensors_of(SlotIndex::at(1))[0].load().buffer;
    let at = |seq: usize| t.predicate_of(SlotIndex::at(seq)).load().addr;
    assert_eq!(at(0), pool(3).base + 8, "in the binding");
    assert_eq!(at(1), internal.base + 4, "in the instance's own buffer");
}

#[test]
fn a_replay_waits_for_the_tasks_it_is_bound_after() {
    let rig = rig();
    let mut o = rig.orchestrator();
    let mut store = Store::new();
    let graph = two_step(&o, &mut store).unwrap();
    let before = o.submit(&TaskSpec::dummy()).unwrap();
    let mut wiring = Vec::new();
    let bound = [pool(0), pool(1)];
    o.replay_recorded(&graph, &Bindings::new(&bound).after(&[before]), &mut |d| {
        wiring.push((d.consumer.seq().0, d.producer.seq().0))
    })
    .unwrap();
    // The first task waits for `before`; the second for the first only.
    assert_eq!(wiring, vec![(1, 0), (2, 1)]);
}

#[test]
fn more_earlier_tasks_than_a_replay_takes_is_refused_before_anything_is_submitted() {
    let cfg = Config {
        task_window: 512,
        ..Config::tiny()
    };
    let mut rig = Rig::new(cfg, 0);
    rig.p.heap = (0x10_0000, 1 << 20);
    let mut o = rig.orchestrator();
    let mut store = Store::new();
    let graph = two_step(&o, &mut store).unwrap();
    // 257 readers of what the instance will write.
    let read = [arg(pool(1), 0, Access::In)];
    for _ in 0..257 {
        o.submit(&vector(&read)).unwrap();
    }
    let bound = [pool(0), pool(1)];
    assert_eq!(
        o.replay(&graph, &Bindings::new(&bound)),
        Err(GraphError::TooManyFound { max: 256 })
    );
    assert_eq!(o.submitted(), 257);
}

/// Records, on `o`, one task over boundary `x` (64 bytes): it reads the first half of `x`
/// (naming the whole buffer), writes a view of its bytes 8..24 and runs if the element at
/// byte 4 is 1.
fn on_a_part<'s>(o: &Orchestrator<'_, '_, Script>, store: &'s mut Store) -> Graph<'s> {
    let x = recorded(0);
    let view = Buffer::new(x.base + 8, 16);
    let mut rec = o.record(store.storage(), &[x]).unwrap();
    let tensors = [
        arg(x, 1, Access::In),
        TensorArg::output(view, Tile::contiguous(view.base, 4, 4)),
    ];
    rec.add(&vector(&tensors).when(Predicate::new(x.base + 4, 4, CmpOp::Eq, 1)))
        .unwrap();
    rec.finish()
}

#[test]
fn a_shift_moves_an_instances_tiles_views_and_predicates_along_its_binding() {
    let rig = rig();
    let mut o = rig.orchestrator();
    let mut store = Store::new();
    let graph = on_a_part(&o, &mut store);
    let b = pool(3);
    // The graph touches bytes 0..32 of its 64: it moves by up to 32 either way of them.
    o.replay(&graph, &Bindings::new(&[b]).shifts(&[32]))
        .unwrap();
    o.replay(&graph, &Bindings::new(&[b]).shifts(&[0])).unwrap();
    let t = rig.tables();
    let seen = |seq: usize, k: usize| t.tensors_of(SlotIndex::at(seq))[k].load();
    // The whole buffer stays the binding; its tile moved.
    let whole = seen(0, 0);
    assert_eq!(whole.buffer, b);
    assert_eq!(whole.tile.base, b.base + 32);
    assert_eq!(whole.start_offset(), 8, "elements into the buffer");
    // The view moved with its tile.
    let view = seen(0, 1);
    assert_eq!(view.buffer, Buffer::new(b.base + 40, 16));
    assert_eq!(view.tile.base, b.base + 40);
    assert_eq!(t.predicate_of(SlotIndex::at(0)).load().addr, b.base + 36);
    // A shift of 0 is the recording's place.
    assert_eq!(seen(1, 0).tile.base, b.base);
    assert_eq!(seen(1, 1).buffer, Buffer::new(b.base + 8, 16));
    assert_eq!(t.predicate_of(SlotIndex::at(1)).load().addr, b.base + 4);
}

#[test]
fn a_shift_that_leaves_the_binding_or_a_wrong_count_of_them_is_refused() {
    let rig = rig();
    let mut o = rig.orchestrator();
    let mut store = Store::new();
    let graph = on_a_part(&o, &mut store);
    let b = [pool(3)];
    for shift in [33, -1, i64::MAX, i64::MIN] {
        let r = o.replay(&graph, &Bindings::new(&b).shifts(&[shift]).or_submit());
        assert_eq!(
            r,
            Err(GraphError::ShiftedOutside {
                index: 0,
                shift,
                span: (0, 32),
                len: LEN,
            }),
            "{shift}"
        );
    }
    assert_eq!(
        o.replay(&graph, &Bindings::new(&b).shifts(&[0, 0])),
        Err(GraphError::WrongShifts {
            given: 2,
            recorded: 1
        })
    );
    assert_eq!(o.submitted(), 0, "nothing submitted");
    let e = GraphError::ShiftedOutside {
        index: 0,
        shift: 33,
        span: (0, 32),
        len: 64,
    };
    assert_eq!(
        e.to_string(),
        "binding 0 moved by 33 bytes puts the bytes 0..32 its tasks touch outside its 64"
    );
}

#[test]
fn a_shifted_instance_that_falls_back_submits_its_tasks_where_the_shift_puts_them() {
    let rig = rig();
    let mut o = rig.orchestrator();
    let mut store = Store::new();
    let graph = on_a_part(&o, &mut store);
    // Longer than recorded: one by one, moved by the shift, which the longer binding holds.
    let longer = [Buffer::new(pool(3).base, 2 * LEN)];
    // A submit reads the predicate's element where the shift put it.
    rig.p
        .word(crate::condition::Watch::Counter32(pool(3).base + 100), 1);
    let i = o
        .replay(&graph, &Bindings::new(&longer).shifts(&[96]).or_submit())
        .unwrap();
    assert!(matches!(i.fell_back(), Some(GraphError::WrongSize { .. })));
    let t = rig.tables();
    let seen = |k: usize| t.tensors_of(SlotIndex::at(0))[k].load();
    assert_eq!(seen(0).buffer, longer[0]);
    assert_eq!(seen(0).tile.base, pool(3).base + 96);
    // One by one, a view names the binding itself (as without a shift), its tile moved.
    assert_eq!(seen(1).buffer, longer[0]);
    assert_eq!(seen(1).tile.base, pool(3).base + 104);
    assert_eq!(
        t.predicate_of(SlotIndex::at(0)).load().addr,
        pool(3).base + 100
    );
}
