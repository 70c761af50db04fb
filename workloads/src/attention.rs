//! Paged attention, decode phase: one query (or a group of queries sharing a KV head) per
//! head attends to a sequence of `blocks * block` cached tokens whose keys and values live in
//! fixed-size blocks scattered over a pool (a block table maps each logical block to a
//! physical one).
//!
//! For each head and block: a cube task computes the block's scores (QK), a vector task its
//! softmax statistics and probabilities, a cube task their weighted sum of values (PV), and a
//! vector task merges that into the head's running online-softmax state; a last vector task
//! per head normalizes the state into the head's slice of the output. Every dependency comes
//! from the tensor arguments; every intermediate (scores, probabilities, statistics, partial
//! outputs, the running state) comes from the output heap, reclaimed as the scope holding it
//! retires: a scope per layer, or per head ([`ScopeLayout`]).

use pto_runtime_core::{
    Buffer, KernelId, Orchestrator, Platform, TaskSpec, TensorArg, WorkerClass,
};

use crate::{BuildError, Submitter, span, whole};

/// The kernels of the attention DAG.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AttentionKernels {
    /// Tensors `[q (group x d), k block (block x d), scores (group x block)]`, `args =
    /// [scale]` (f32 bits).
    pub qk: KernelId,
    /// Tensors `[scores, p (group x block), stats (group x 2: max, sum of p)]`.
    pub softmax: KernelId,
    /// Tensors `[p, v block (block x d), o (group x d)]`.
    pub pv: KernelId,
    /// Tensors `[state (group x (2 + d)), stats, o]`: the state is an output for a head's
    /// first block, read and written after.
    pub merge: KernelId,
    /// Tensors `[state, out (group x d)]`.
    pub normalize: KernelId,
}

impl AttentionKernels {
    /// The example's ids, 0 to 4.
    pub const EXAMPLE: AttentionKernels = AttentionKernels {
        qk: KernelId(0),
        softmax: KernelId(1),
        pv: KernelId(2),
        merge: KernelId(3),
        normalize: KernelId(4),
    };
}

/// Sizes, in elements of `elem` bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AttentionShape {
    /// KV heads.
    pub heads: usize,
    /// Query heads per KV head (1: plain multi-head attention; more: grouped queries, each
    /// group handled by one task per block).
    pub group: usize,
    /// Head dimension.
    pub d: usize,
    /// Tokens per KV block.
    pub block: usize,
    /// Blocks of the sequence.
    pub blocks: usize,
    /// Bytes per element.
    pub elem: u32,
}

impl AttentionShape {
    /// Tasks per head: four per block and a normalize.
    pub fn tasks_per_head(&self) -> usize {
        4 * self.blocks + 1
    }

    /// Elements of one KV head's block in a pool laid out `[physical block][head][token][d]`,
    /// and where block `p` of head `h` starts.
    pub fn kv_at(&self, p: usize, h: usize) -> usize {
        (p * self.heads + h) * self.block * self.d
    }
}

/// One layer's buffers: the queries (`heads x group x d`), the key and value pools, the
/// output (like the queries), and the block table (physical block of each logical block).
#[derive(Clone, Copy, Debug)]
pub struct AttentionLayer<'a> {
    /// Queries.
    pub q: Buffer,
    /// Key pool.
    pub k: Buffer,
    /// Value pool.
    pub v: Buffer,
    /// Output.
    pub out: Buffer,
    /// `blocks` physical block numbers.
    pub table: &'a [usize],
}

/// Where the scopes go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScopeLayout {
    /// None here: the caller's scope holds the intermediates.
    Caller,
    /// A scope per layer.
    PerLayer,
    /// A scope per head.
    PerHead,
}

/// Submits `layers` one after the other, each layer's queries its own `q` (a layer after the
/// first would normally name the previous layer's `out`, as the example does), in scopes as
/// `layout` says.
pub fn submit_paged_attention<P: Platform>(
    s: &mut Submitter,
    o: &mut Orchestrator<'_, '_, P>,
    shape: &AttentionShape,
    kernels: &AttentionKernels,
    layers: &[AttentionLayer<'_>],
    layout: ScopeLayout,
) -> Result<(), BuildError> {
    for layer in layers {
        match layout {
            ScopeLayout::PerLayer => {
                o.scope(|o| submit_layer(s, o, shape, kernels, layer, false))??
            }
            ScopeLayout::PerHead => submit_layer(s, o, shape, kernels, layer, true)?,
            ScopeLayout::Caller => submit_layer(s, o, shape, kernels, layer, false)?,
        }
    }
    Ok(())
}

/// Submits one layer, each head in a scope of its own if `scope_per_head`.
pub fn submit_layer<P: Platform>(
    s: &mut Submitter,
    o: &mut Orchestrator<'_, '_, P>,
    shape: &AttentionShape,
    kernels: &AttentionKernels,
    layer: &AttentionLayer<'_>,
    scope_per_head: bool,
) -> Result<(), BuildError> {
    if shape.heads == 0 || shape.group == 0 || shape.d == 0 || shape.block == 0 {
        return Err(BuildError::Shape(format!("{shape:?}: a zero dimension")));
    }
    if layer.table.len() != shape.blocks || shape.blocks == 0 {
        return Err(BuildError::Shape(format!(
            "a block table of {} blocks for a sequence of {}",
            layer.table.len(),
            shape.blocks
        )));
    }
    for h in 0..shape.heads {
        if scope_per_head {
            o.scope(|o| submit_head(s, o, shape, kernels, layer, h))??;
        } else {
            submit_head(s, o, shape, kernels, layer, h)?;
        }
    }
    Ok(())
}

/// The tasks of head `h`: per block QK, softmax, PV, merge; then normalize.
fn submit_head<P: Platform>(
    s: &mut Submitter,
    o: &mut Orchestrator<'_, '_, P>,
    shape: &AttentionShape,
    kernels: &AttentionKernels,
    layer: &AttentionLayer<'_>,
    h: usize,
) -> Result<(), BuildError> {
    let AttentionShape {
        group,
        d,
        block,
        elem,
        ..
    } = *shape;
    let bytes = |n: usize| (n * elem as usize) as u64;
    let all = |b: Buffer| whole(b, elem);
    let scale = (1.0 / (d as f32).sqrt()).to_bits() as u64;
    let q_h = TensorArg::input(layer.q, span(layer.q, elem, h * group * d, group * d));
    let mut state = None;
    for &p in layer.table {
        let kv = |b: Buffer| TensorArg::input(b, span(b, elem, shape.kv_at(p, h), block * d));
        // Each output buffer belongs to the next task submitted: allocate, then submit.
        let sc = o.alloc_buffer(0, bytes(group * block), 64)?;
        let t = [q_h, kv(layer.k), TensorArg::output(sc, all(sc))];
        let qk = TaskSpec::new(kernels.qk, WorkerClass::Aic).tensors(&t);
        s.submit(o, &qk.args(&[scale]))?;
        let pb = o.alloc_buffer(0, bytes(group * block), 64)?;
        let stats = o.alloc_buffer(0, bytes(2 * group), 64)?;
        let t = [
            TensorArg::input(sc, all(sc)),
            TensorArg::output(pb, all(pb)),
            TensorArg::output(stats, all(stats)),
        ];
        s.submit(
            o,
            &TaskSpec::new(kernels.softmax, WorkerClass::Aiv).tensors(&t),
        )?;
        let ob = o.alloc_buffer(0, bytes(group * d), 64)?;
        let t = [
            TensorArg::input(pb, all(pb)),
            kv(layer.v),
            TensorArg::output(ob, all(ob)),
        ];
        s.submit(o, &TaskSpec::new(kernels.pv, WorkerClass::Aic).tensors(&t))?;
        // The running state: written first by the first block's merge, then read and written
        // by each next one (so they follow each other).
        let st = match state {
            None => {
                let b = o.alloc_buffer(0, bytes(group * (2 + d)), 64)?;
                state = Some(b);
                TensorArg::output(b, all(b))
            }
            Some(b) => TensorArg::inout(b, all(b)),
        };
        let t = [
            st,
            TensorArg::input(stats, all(stats)),
            TensorArg::input(ob, all(ob)),
        ];
        s.submit(
            o,
            &TaskSpec::new(kernels.merge, WorkerClass::Aiv).tensors(&t),
        )?;
    }
    let st = state.ok_or_else(|| BuildError::Shape("no KV block".into()))?;
    let t = [
        TensorArg::input(st, all(st)),
        TensorArg::output(layer.out, span(layer.out, elem, h * group * d, group * d)),
    ];
    s.submit(
        o,
        &TaskSpec::new(kernels.normalize, WorkerClass::Aiv).tensors(&t),
    )?;
    Ok(())
}
