//! Recording a graph: each task checked as a submit would check it, its buffers resolved to
//! boundaries or internal buffers, and the order its buffers impose among its tasks resolved
//! into edges by the tensor map's rules (a conflicting earlier access to the same bytes, read
//! after write, write after write or write after read; a write of the same bytes standing in
//! for the accesses it covers). For each boundary, the recording also marks the tasks that
//! meet the world outside the graph: those that wait for what came before the instance
//! (entries), and those that later tasks wait for (exits, once the graph is complete).
#![forbid(unsafe_code)]

use super::{
    Block, BufferRef, Graph, GraphRecordedArg, GraphRecordedTask, GraphStorage, Internal,
    MAX_GRAPH_BOUNDARIES, MAX_GRAPH_INTERNALS, MAX_GRAPH_PATCHES, MAX_GRAPH_SCALARS, NO_ARG, Node,
    Patch, Span, UNSHIFTED,
};
use crate::error::{GraphError, SubmitError};
use crate::orchestrator::{Orchestrator, TaskSpec, validate};
use crate::platform::Platform;
use crate::region::config::{MAX_DEPS, MAX_TENSORS};
use crate::region::slot::Meta;
use crate::tensor::arg::{Buffer, TensorArg, TensorCell};
use crate::tensor::tile::Tile;
use crate::tensor::tile::{same_bytes, share_a_byte};

/// Where internal buffers sit while recording: addresses no device memory has, one span each.
const INTERNAL_BASE: u64 = 0xffff_0000_0000_0000;
/// Most bytes an internal buffer has (and the distance between two of them while recording).
const INTERNAL_SPAN: u64 = 1 << 36;

/// A graph being recorded ([`Orchestrator::record`]): add its tasks in order, then
/// [`GraphRecorder::finish`].
pub struct GraphRecorder<'o, 'r, 'p, 's, P: Platform> {
    o: &'o Orchestrator<'r, 'p, P>,
    rec: Recording<'s>,
}

/// What a recording keeps, without the orchestrator it checks its tasks with (which the C
/// layer hands it anew at each call).
pub(crate) struct Recording<'s> {
    storage: GraphStorage<'s>,
    /// Tasks, tensor arguments and words used.
    used: (usize, usize, usize),
    boundaries: heapless::Vec<Buffer, MAX_GRAPH_BOUNDARIES>,
    internals: heapless::Vec<Internal, MAX_GRAPH_INTERNALS>,
    /// The run it records for ([`Orchestrator::stamp`]).
    stamp: (u16, usize),
    /// Scalars set per replay.
    patches: heapless::Vec<Patch, MAX_GRAPH_PATCHES>,
    /// By buffer ([`BufferRef::index`]): its last recorded argument, the head of the chain
    /// of its arguments ([`GraphRecordedArg::prev`]).
    last: [u32; MAX_GRAPH_BOUNDARIES + MAX_GRAPH_INTERNALS],
    max_deps: u16,
}

impl<'r, 'p, P: Platform> Orchestrator<'r, 'p, P> {
    /// Starts recording a graph into `storage`, whose tasks' tensor arguments lie in the
    /// `boundaries` (what each replay binds anew, in this order) or in buffers the recording
    /// allocates ([`GraphRecorder::internal`]). Nothing is submitted.
    pub fn record<'o, 's>(
        &'o self,
        storage: GraphStorage<'s>,
        boundaries: &[Buffer],
    ) -> Result<GraphRecorder<'o, 'r, 'p, 's, P>, GraphError> {
        Ok(GraphRecorder {
            o: self,
            rec: Recording::new(self, storage, boundaries)?,
        })
    }

    /// The run a graph recorded by this orchestrator belongs to.
    pub(super) fn stamp(&self) -> (u16, usize) {
        (self.t.cfg().epoch, self.t.rings().as_ptr().addr())
    }
}

impl<'s, P: Platform> GraphRecorder<'_, '_, '_, 's, P> {
    /// A buffer of `bytes` bytes aligned to `align` that each instance of the graph gets
    /// anew from its ring's output heap, and that nothing outside the instance sees: name it
    /// in tensor arguments (and predicates) as any other buffer.
    pub fn internal(&mut self, bytes: u64, align: u64) -> Result<Buffer, GraphError> {
        self.rec.internal(bytes, align)
    }

    /// Adds a task, ordered after the earlier ones by its tensor arguments. See
    /// [`GraphRecorder::add_after`].
    pub fn add(&mut self, spec: &TaskSpec<'_>) -> Result<Node, GraphError> {
        self.rec.add_after(self.o, spec, &[])
    }

    /// Adds a task, ordered after the earlier ones by its tensor arguments and after the
    /// nodes `after`. It is checked as a submit would check it; its `deps` and `ring` must be
    /// left empty (the replay names the ring and what the instance waits for).
    pub fn add_after(&mut self, spec: &TaskSpec<'_>, after: &[Node]) -> Result<Node, GraphError> {
        self.rec.add_after(self.o, spec, after)
    }

    /// Makes scalar argument `arg` of recorded task `node` a patch: each replay sets it to
    /// its bindings' scalar `slot` ([`super::Bindings::scalars`]; a token's position, say),
    /// the recorded value being a placeholder.
    pub fn patch(&mut self, node: Node, arg: u32, slot: u32) -> Result<(), GraphError> {
        self.rec.patch(node, arg, slot)
    }

    /// The recorded graph.
    pub fn finish(self) -> Graph<'s> {
        self.rec.finish()
    }
}

impl<'s> Recording<'s> {
    /// A recording for `o`'s run into `storage`, of the `boundaries`. See
    /// [`Orchestrator::record`].
    pub(crate) fn new<P: Platform>(
        o: &Orchestrator<'_, '_, P>,
        storage: GraphStorage<'s>,
        boundaries: &[Buffer],
    ) -> Result<Self, GraphError> {
        let too_many = GraphError::TooManyBuffers {
            what: "boundary",
            max: MAX_GRAPH_BOUNDARIES,
        };
        let kept = heapless::Vec::from_slice(boundaries).map_err(|_| too_many)?;
        for (i, b) in boundaries.iter().enumerate() {
            if b.end() > INTERNAL_BASE {
                return Err(GraphError::Reserved { index: i as u32 });
            }
            let empty = (b.len == 0).then_some(i);
            if let Some(j) = empty.or_else(|| {
                boundaries[..i]
                    .iter()
                    .position(|a| a.base < b.end() && b.base < a.end())
            }) {
                return Err(GraphError::OverlappingBoundaries {
                    a: j as u32,
                    b: i as u32,
                });
            }
        }
        Ok(Recording {
            storage,
            used: (0, 0, 0),
            boundaries: kept,
            internals: heapless::Vec::new(),
            stamp: o.stamp(),
            patches: heapless::Vec::new(),
            last: [NO_ARG; MAX_GRAPH_BOUNDARIES + MAX_GRAPH_INTERNALS],
            max_deps: o.t.cfg().max_deps,
        })
    }

    /// A buffer of `bytes` bytes aligned to `align` that each instance of the graph gets
    /// anew from its ring's output heap, and that nothing outside the instance sees: name it
    /// in tensor arguments (and predicates) as any other buffer.
    pub(crate) fn internal(&mut self, bytes: u64, align: u64) -> Result<Buffer, GraphError> {
        if !align.is_power_of_two() {
            return Err(GraphError::InternalBuffer {
                error: SubmitError::BadAlignment { align },
            });
        }
        if bytes > INTERNAL_SPAN {
            return Err(GraphError::InternalBuffer {
                error: SubmitError::HeapTooSmall {
                    bytes,
                    heap: INTERNAL_SPAN,
                },
            });
        }
        let j = self.internals.len() as u64;
        let at = Buffer::new(INTERNAL_BASE + j * INTERNAL_SPAN, bytes);
        self.internals
            .push(Internal {
                at,
                align,
                offset: 0,
            })
            .map_err(|_| GraphError::TooManyBuffers {
                what: "internal",
                max: MAX_GRAPH_INTERNALS,
            })?;
        Ok(at)
    }

    /// See [`GraphRecorder::add_after`]; `o` checks the task, and must be the orchestrator
    /// of the run the recording began in (else [`GraphError::OtherRun`]).
    pub(crate) fn add_after<P: Platform>(
        &mut self,
        o: &Orchestrator<'_, '_, P>,
        spec: &TaskSpec<'_>,
        after: &[Node],
    ) -> Result<Node, GraphError> {
        if o.stamp() != self.stamp {
            return Err(GraphError::OtherRun);
        }
        let (n, nargs, nwords) = self.used;
        let task = n as u32;
        let refused = |error| GraphError::Refused { task, error };
        if n == self.storage.tasks.len() {
            return Err(full("tasks", n));
        }
        if !spec.deps.is_empty() || spec.ring != 0 {
            return Err(GraphError::NotInGraph { task });
        }
        let predicate = spec.predicate.map(|p| (p, self.locate(p.addr, p.width)));
        // An element in one of the graph's buffers is read where each replay puts it: its
        // predicate is checked for all but being readable (a replay's unreadable one fails
        // its task at dispatch, naming the address).
        let moves = matches!(predicate, Some((_, Some(_))));
        let checked = TaskSpec {
            predicate: if moves { None } else { spec.predicate },
            ..*spec
        };
        o.validate(&checked, spec.tensors).map_err(refused)?;
        if let (true, Some((p, _))) = (moves, predicate) {
            p.check()
                .map_err(|error| refused(SubmitError::BadPredicate { error }))?;
        }
        validate::check_tiles(spec.tensors).map_err(refused)?;
        if nargs + spec.tensors.len() > self.storage.args.len() {
            return Err(full("tensor arguments", self.storage.args.len()));
        }
        // Each argument's graph buffer, and the argument relative to it (its buffer's and its
        // tile's bases as offsets into it): how it is kept, compared and moved.
        let mut refs = heapless::Vec::<BufferRef, { MAX_TENSORS as usize }>::new();
        let mut rel = heapless::Vec::<TensorArg, { MAX_TENSORS as usize }>::new();
        for (k, a) in spec.tensors.iter().enumerate() {
            let r = self.resolve(a.buffer).ok_or(GraphError::UnknownBuffer {
                task,
                arg: k as u32,
                base: a.buffer.base,
            })?;
            // At most max_tensors (checked): fit.
            let _ = refs.push(r);
            let _ = rel.push(relative(a, self.buffer(r).base));
        }
        let preds = self.preds(task, &rel, &refs, after)?;
        let nw = spec.args.len() + preds.len();
        if nwords + nw > self.storage.words.len() {
            return Err(full("words", self.storage.words.len()));
        }
        self.cover(&rel, &refs);
        let (mut touches, mut writes) = (0u32, 0u32);
        for (a, &r) in spec.tensors.iter().zip(&refs) {
            if let BufferRef::Boundary(i) = r {
                touches |= 1 << i;
                if a.access.writes() {
                    writes |= 1 << i;
                }
            }
        }
        // The boundaries the tasks before this one touch and write (while recording, a
        // task's `below_*` hold what it and the tasks before it touch and write).
        let (above, above_writing) = preds.iter().fold((0u32, 0u32), |(t, w), &p| {
            let p = &self.storage.tasks[p as usize];
            (t | p.below_touch, w | p.below_write)
        });
        for (k, (a, &r)) in rel.iter().zip(&refs).enumerate() {
            // A whole boundary stays where it is bound; a view moves with its tiles.
            let whole = a.buffer.base == 0 && a.buffer.len == self.buffer(r).len;
            let at_buffer = match r {
                BufferRef::Boundary(i) if whole => UNSHIFTED + i as usize,
                _ => r.index(),
            };
            let last = &mut self.last[r.index()];
            self.storage.args[nargs + k] = GraphRecordedArg {
                arg: *a,
                packed: TensorCell::packed(a),
                buffer: r,
                at: [r.index() as u16, at_buffer as u16],
                task,
                prev: *last,
                live: true,
            };
            *last = (nargs + k) as u32;
        }
        let words = &mut self.storage.words[nwords..nwords + nw];
        words[..spec.args.len()].copy_from_slice(spec.args);
        for (w, &p) in words[spec.args.len()..].iter_mut().zip(&preds) {
            *w = p as u64;
        }
        self.storage.tasks[n] = GraphRecordedTask {
            kernel: spec.kernel,
            class: spec.class,
            blocks: spec.blocks,
            sync_start: spec.sync_start,
            aiv_kernels: spec.aiv_kernels,
            predicate: predicate.map(|(p, at)| match at {
                Some(r) => (
                    crate::predicate::Predicate {
                        addr: p.addr - self.buffer(r).base,
                        ..p
                    },
                    at,
                ),
                None => (p, None),
            }),
            args: span(nwords, spec.args.len()),
            tensors: span(nargs, spec.tensors.len()),
            preds: span(nwords + spec.args.len(), preds.len()),
            touches,
            writes,
            enters: touches & !above,
            enters_writing: writes & !above_writing,
            // Until the graph is complete (when its exits are worked out): what it and the
            // tasks before it touch and write.
            below_touch: above | touches,
            below_write: above_writing | writes,
            patched: false,
            plain: spec.is_plain(),
            exit_args: 0,
            meta: Meta::plain(
                (spec.kernel, spec.class),
                (spec.args.len(), spec.tensors.len()),
                0,
            )
            .pack(),
        };
        self.used = (n + 1, nargs + spec.tensors.len(), nwords + nw);
        Ok(Node(task))
    }

    /// See [`GraphRecorder::patch`].
    pub(crate) fn patch(&mut self, node: Node, arg: u32, slot: u32) -> Result<(), GraphError> {
        let task = self.storage.tasks[..self.used.0]
            .get(node.0 as usize)
            .ok_or(GraphError::BadNode {
                task: self.used.0 as u32,
                node: node.0,
            })?;
        let args = task.args.len;
        if arg >= args || slot as usize >= MAX_GRAPH_SCALARS {
            return Err(GraphError::BadPatch {
                task: node.0,
                arg,
                args,
                slot,
            });
        }
        let p = Patch {
            task: node.0,
            arg: arg as u8,
            slot: slot as u8,
        };
        // One slot per argument: a second patch of it replaces the first.
        if let Some(q) = self
            .patches
            .iter_mut()
            .find(|q| (q.task, q.arg) == (p.task, p.arg))
        {
            *q = p;
            return Ok(());
        }
        self.patches.push(p).map_err(|_| GraphError::StorageFull {
            what: "scalar patches",
            capacity: MAX_GRAPH_PATCHES,
        })
    }

    /// See [`GraphRecorder::finish`].
    pub(crate) fn finish(self) -> Graph<'s> {
        let (n, nargs, nwords) = self.used;
        let GraphStorage { tasks, args, words } = self.storage;
        // What later tasks touch and write after each one: from the last task back, each
        // tells the tasks it waits for.
        for t in tasks[..n].iter_mut() {
            (t.below_touch, t.below_write) = (0, 0);
        }
        for i in (0..n).rev() {
            let t = tasks[i];
            let (touch, write) = (t.touches | t.below_touch, t.writes | t.below_write);
            for &p in t.preds.of(words) {
                let p = &mut tasks[p as usize];
                p.below_touch |= touch;
                p.below_write |= write;
            }
        }
        // Which argument of each task stands for it in the tensor map, for each boundary.
        for t in tasks[..n].iter_mut() {
            let mut left = t.exit();
            t.exit_args = 0;
            for (k, a) in t.tensors.of(args).iter().enumerate() {
                if let BufferRef::Boundary(b) = a.buffer
                    && left & 1 << b != 0
                {
                    left &= !(1 << b);
                    t.exit_args |= 1 << k;
                }
            }
        }
        let mut patches = self.patches;
        // In task order: a replay meets them as it goes.
        patches.sort_unstable_by_key(|p| (p.task, p.arg));
        for p in &patches {
            tasks[p.task as usize].patched = true;
        }
        let (tasks, args, words): (&'s [_], &'s [_], &'s [_]) = (tasks, args, words);
        let spans = spans(self.boundaries.len(), &tasks[..n], &args[..nargs]);
        let mut internals = self.internals;
        let block = Block::lay_out(&mut internals);
        let scalars = patches
            .iter()
            .map(|p| p.slot as usize + 1)
            .max()
            .unwrap_or(0);
        Graph {
            tasks: &tasks[..n],
            args: &args[..nargs],
            words: &words[..nwords],
            stamp: self.stamp,
            boundaries: self.boundaries,
            spans,
            internals,
            block,
            patches,
            scalars,
        }
    }

    /// The earlier tasks task `task` (its arguments `rel`, relative to their buffers `refs`)
    /// waits for: the nodes
    /// `after`, and every task whose live access to a buffer conflicts with one of its own,
    /// each once.
    fn preds(
        &self,
        task: u32,
        rel: &[TensorArg],
        refs: &[BufferRef],
        after: &[Node],
    ) -> Result<heapless::Vec<u32, { MAX_DEPS as usize }>, GraphError> {
        let max = self.max_deps;
        let too_many = |given| GraphError::Refused {
            task,
            error: SubmitError::TooManyDeps { given, max },
        };
        let mut preds = heapless::Vec::<u32, { MAX_DEPS as usize }>::new();
        let mut add = |p: u32| {
            if preds.contains(&p) {
                Ok(())
            } else if preds.len() < max as usize {
                preds.push(p).map_err(|_| too_many(preds.len() + 1))
            } else {
                Err(too_many(preds.len() + 1))
            }
        };
        for node in after {
            if node.0 >= task {
                return Err(GraphError::BadNode { task, node: node.0 });
            }
            add(node.0)?;
        }
        for (a, &r) in rel.iter().zip(refs) {
            for e in self.chain(r).filter(|e| e.live) {
                if (a.access.writes() || e.arg.access.writes())
                    && share_a_byte(&a.tile, &e.arg.tile)
                {
                    add(e.task)?;
                }
            }
        }
        Ok(preds)
    }

    /// Retires the recorded accesses that the writes of the same bytes among `rel` (a task's
    /// arguments, relative to their buffers `refs`) stand in for (later tasks wait for the
    /// task, which waits for them).
    fn cover(&mut self, rel: &[TensorArg], refs: &[BufferRef]) {
        for (a, &r) in rel.iter().zip(refs) {
            if !a.access.writes() {
                continue;
            }
            let mut at = self.last[r.index()];
            while let Some(e) = self.storage.args.get_mut(at as usize) {
                if e.live && same_bytes(&a.tile, &e.arg.tile) {
                    e.live = false;
                }
                at = e.prev;
            }
        }
    }

    /// The arguments recorded on buffer `r`, the latest first.
    fn chain(&self, r: BufferRef) -> impl Iterator<Item = &GraphRecordedArg> {
        let args = &*self.storage.args;
        let mut at = self.last[r.index()];
        core::iter::from_fn(move || {
            let e = args.get(at as usize)?;
            at = e.prev;
            Some(e)
        })
    }

    /// Which of the graph's buffers `b` is, or lies in (a view of part of it).
    fn resolve(&self, b: Buffer) -> Option<BufferRef> {
        let inside = |x: &Buffer| x.base <= b.base && b.end() <= x.end();
        if let Some(i) = self.boundaries.iter().position(inside) {
            return Some(BufferRef::Boundary(i as u8));
        }
        let j = self.internals.iter().position(|x| inside(&x.at))?;
        Some(BufferRef::Internal(j as u8))
    }

    /// The graph's buffer holding the `width` bytes at `addr`, if one does.
    fn locate(&self, addr: u64, width: u8) -> Option<BufferRef> {
        let end = addr.checked_add(width as u64)?;
        let inside = |b: &Buffer| b.holds(addr, end);
        if let Some(i) = self.boundaries.iter().position(inside) {
            return Some(BufferRef::Boundary(i as u8));
        }
        let j = self.internals.iter().position(|x| inside(&x.at))?;
        Some(BufferRef::Internal(j as u8))
    }

    /// The buffer `r` names, as recorded.
    fn buffer(&self, r: BufferRef) -> Buffer {
        match r {
            BufferRef::Boundary(i) => self.boundaries[i as usize],
            BufferRef::Internal(j) => self.internals[j as usize].at,
        }
    }
}

/// By boundary (of `boundaries`): the bytes the recorded `tasks` (with tensor arguments
/// `args`) touch in it, from its start: their tiles, their views of part of it and their
/// predicates' elements; `(0, 0)` for none.
fn spans(
    boundaries: usize,
    tasks: &[GraphRecordedTask],
    args: &[GraphRecordedArg],
) -> heapless::Vec<(u64, u64), MAX_GRAPH_BOUNDARIES> {
    let mut spans: heapless::Vec<Option<(u64, u64)>, MAX_GRAPH_BOUNDARIES> =
        core::iter::repeat_n(None, boundaries).collect();
    let mut cover = |b: u8, lo: u64, hi: u64| {
        if let Some(s) = spans.get_mut(b as usize) {
            *s = Some(s.map_or((lo, hi), |(l, h)| (l.min(lo), h.max(hi))));
        }
    };
    for a in args {
        let BufferRef::Boundary(b) = a.buffer else {
            continue;
        };
        // Checked valid at record.
        if let Some(fp) = a.arg.tile.valid_footprint() {
            cover(b, fp.lo, fp.hi);
        }
        if a.at[1] as usize != UNSHIFTED + b as usize {
            cover(b, a.arg.buffer.base, a.arg.buffer.end());
        }
    }
    for t in tasks {
        if let Some((p, Some(BufferRef::Boundary(b)))) = t.predicate {
            cover(b, p.addr, p.addr + p.width as u64);
        }
    }
    spans.iter().map(|s| s.unwrap_or((0, 0))).collect()
}

/// `a` with its buffer's and its tile's bases made offsets from `base` (its graph buffer's).
fn relative(a: &TensorArg, base: u64) -> TensorArg {
    TensorArg {
        buffer: Buffer::new(a.buffer.base - base, a.buffer.len),
        tile: Tile {
            base: a.tile.base - base,
            ..a.tile
        },
        ..*a
    }
}

/// `len` items from `start`.
fn span(start: usize, len: usize) -> Span {
    Span {
        start: start as u32,
        len: len as u32,
    }
}

/// The storage has no room for more `what`.
fn full(what: &'static str, capacity: usize) -> GraphError {
    GraphError::StorageFull { what, capacity }
}
