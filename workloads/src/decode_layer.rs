//! A transformer decode layer, one token, shaped like qwen3-14b's ([`DecodeShape::QWEN3_14B`]:
//! 546 tasks): RMSNorm, the fused QKV projection, RoPE, the KV-cache write, grouped-query
//! paged attention, the output projection and the residual add; RMSNorm again, the fused
//! gate/up projection, SwiGLU, the down projection and the residual add.
//!
//! The projections are [`crate::gemm`]'s tiled GEMM with one row (a GEMV: per output tile a
//! chain of K steps), the attention is [`crate::attention`]'s. Every dependency comes from the
//! tensor arguments, so the fan-in is what the data says: a projection's first K step waits
//! for the norm chunks its input block spans, RoPE for the last K step of its tile, the
//! attention of a KV-head group for the RoPE tiles of its queries and (for the last block
//! only) the write of the current token into the cache, a residual chunk for the output
//! tiles it adds, and so on. The layer runs in one scope (the attention's intermediates come
//! from the output heap). Its activations, weights and KV pools are addresses in an arena
//! from `base` the kernels never touch: the scene's kernels are timed, not computed.

use pto_runtime_core::{
    Buffer, Graph, KernelId, Orchestrator, Platform, TaskSpec, TensorArg, WorkerClass,
};

use crate::attention::{AttentionKernels, AttentionLayer, AttentionShape, submit_layer};
use crate::gemm::{GemmBuffers, GemmShape, submit_tiled_gemm};
use crate::graph::{GraphVecs, record_captured};
use crate::{BuildError, Submitter, span, whole};

/// The layer's kernel ids.
pub mod kernel {
    use pto_runtime_core::KernelId;

    /// RMS statistics of a whole vector: tensors `[x, rstd]`.
    pub const RMS_STATS: KernelId = KernelId(0);
    /// Normalizes a chunk: tensors `[x chunk, rstd, gamma chunk, out chunk]`.
    pub const RMS_APPLY: KernelId = KernelId(1);
    /// A K step of the fused QKV projection (the GEMM's matmul).
    pub const QKV: KernelId = KernelId(2);
    /// Rotary embedding of a projection tile: tensors `[tile, rotated tile]`.
    pub const ROPE: KernelId = KernelId(3);
    /// Writes the token's key and value of one KV head into the cache: tensors `[k, v, k
    /// row, v row]`.
    pub const KV_WRITE: KernelId = KernelId(4);
    /// The attention's QK (then softmax, PV, merge, normalize: 6 to 9).
    pub const QK: KernelId = KernelId(5);
    /// The attention's softmax.
    pub const SOFTMAX: KernelId = KernelId(6);
    /// The attention's PV.
    pub const PV: KernelId = KernelId(7);
    /// The attention's online-softmax merge.
    pub const MERGE: KernelId = KernelId(8);
    /// The attention's normalize.
    pub const NORMALIZE: KernelId = KernelId(9);
    /// A K step of the output projection.
    pub const O_PROJ: KernelId = KernelId(10);
    /// Adds two chunks: tensors `[a chunk, b chunk, sum chunk]`.
    pub const RESIDUAL: KernelId = KernelId(11);
    /// A K step of the fused gate/up projection.
    pub const GATE_UP: KernelId = KernelId(12);
    /// `silu(gate) * up` on a chunk: tensors `[gate chunk, up chunk, out chunk]`.
    pub const SWIGLU: KernelId = KernelId(13);
    /// A K step of the down projection.
    pub const DOWN: KernelId = KernelId(14);
}

/// The attention's kernels within the layer.
pub const ATTENTION: AttentionKernels = AttentionKernels {
    qk: kernel::QK,
    softmax: kernel::SOFTMAX,
    pv: kernel::PV,
    merge: kernel::MERGE,
    normalize: kernel::NORMALIZE,
};

/// The layer's sizes (elements of `elem` bytes) and how it is cut into tasks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DecodeShape {
    /// The model dimension.
    pub hidden: usize,
    /// Query heads.
    pub q_heads: usize,
    /// KV heads.
    pub kv_heads: usize,
    /// Head dimension.
    pub head_dim: usize,
    /// The MLP's intermediate dimension.
    pub inter: usize,
    /// Tokens per KV block, and blocks of the sequence.
    pub kv_block: usize,
    /// See `kv_block`.
    pub kv_blocks: usize,
    /// Chunks of a norm's apply step, and of a residual add.
    pub norm_chunks: usize,
    /// See `norm_chunks`.
    pub residual_chunks: usize,
    /// QKV and output projections: output tile and K block.
    pub proj_tn: usize,
    /// See `proj_tn`.
    pub proj_tk: usize,
    /// Gate/up projection: output tile (also the SwiGLU chunk) and K block.
    pub gate_up_tn: usize,
    /// See `gate_up_tn`.
    pub gate_up_tk: usize,
    /// Down projection: output tile and K block.
    pub down_tn: usize,
    /// See `down_tn`.
    pub down_tk: usize,
    /// Bytes per element.
    pub elem: u32,
}

impl DecodeShape {
    /// qwen3-14b: hidden 5120, 40 query heads and 8 KV heads of 128, MLP 17 408, bf16, a
    /// 512-token context in 4 blocks: 546 tasks.
    pub const QWEN3_14B: DecodeShape = DecodeShape {
        hidden: 5120,
        q_heads: 40,
        kv_heads: 8,
        head_dim: 128,
        inter: 17408,
        kv_block: 128,
        kv_blocks: 4,
        norm_chunks: 8,
        residual_chunks: 4,
        proj_tn: 256,
        proj_tk: 1280,
        gate_up_tn: 1088,
        gate_up_tk: 2560,
        down_tn: 256,
        down_tk: 4352,
        elem: 2,
    };

    /// A small layer of the same structure, for tests (87 tasks).
    pub const SMALL: DecodeShape = DecodeShape {
        hidden: 512,
        q_heads: 8,
        kv_heads: 2,
        head_dim: 64,
        inter: 1024,
        kv_block: 16,
        kv_blocks: 2,
        norm_chunks: 4,
        residual_chunks: 2,
        proj_tn: 128,
        proj_tk: 256,
        gate_up_tn: 256,
        gate_up_tk: 256,
        down_tn: 128,
        down_tk: 512,
        elem: 2,
    };

    fn q_dim(&self) -> usize {
        self.q_heads * self.head_dim
    }

    fn kv_dim(&self) -> usize {
        self.kv_heads * self.head_dim
    }

    fn attention(&self) -> AttentionShape {
        AttentionShape {
            heads: self.kv_heads,
            group: self.q_heads / self.kv_heads.max(1),
            d: self.head_dim,
            block: self.kv_block,
            blocks: self.kv_blocks,
            elem: self.elem,
        }
    }

    fn gemv(&self, n: usize, k: usize, tn: usize, tk: usize) -> GemmShape {
        GemmShape {
            m: 1,
            n,
            k,
            tm: 1,
            tn,
            tk,
            elem: self.elem,
        }
    }

    /// The four projections: QKV, output, gate/up, down.
    fn projections(&self) -> [GemmShape; 4] {
        let (h, i) = (self.hidden, self.inter);
        let qkv = self.q_dim() + 2 * self.kv_dim();
        [
            self.gemv(qkv, h, self.proj_tn, self.proj_tk),
            self.gemv(h, self.q_dim(), self.proj_tn, self.proj_tk),
            self.gemv(2 * i, h, self.gate_up_tn, self.gate_up_tk),
            self.gemv(h, i, self.down_tn, self.down_tk),
        ]
    }

    /// Tasks of one layer.
    pub fn tasks(&self) -> u64 {
        let gemm: usize = self
            .projections()
            .iter()
            .map(|g| g.tiles().0 * g.tiles().1)
            .sum();
        let a = self.attention();
        let n = 2 * (1 + self.norm_chunks)
            + gemm
            + (self.q_dim() + self.kv_dim()) / self.proj_tn.max(1)
            + self.kv_heads
            + a.heads * a.tasks_per_head()
            + 2 * self.residual_chunks
            + self.inter / self.gate_up_tn.max(1);
        n as u64
    }

    /// Bytes of weights one K step of each projection reads: QKV, output, gate/up, down.
    pub fn step_weight_bytes(&self) -> [u64; 4] {
        self.projections()
            .map(|g| (g.tk * g.tn) as u64 * u64::from(self.elem))
    }

    fn check(&self) -> Result<(), BuildError> {
        let divides = |d: usize, t: usize| t != 0 && d != 0 && d.is_multiple_of(t);
        let ok = divides(self.q_heads, self.kv_heads)
            && divides(self.hidden, self.norm_chunks)
            && divides(self.hidden, self.residual_chunks)
            && divides(self.q_dim() + self.kv_dim(), self.proj_tn)
            && divides(self.q_dim(), self.proj_tn)
            && divides(self.inter, self.gate_up_tn)
            && self.kv_block > 0
            && self.kv_blocks > 0
            && self.elem > 0;
        if ok {
            Ok(())
        } else {
            Err(BuildError::Shape(format!(
                "{self:?}: the heads, norm and residual chunks, RoPE tiles and SwiGLU chunks \
                 must divide their dimensions"
            )))
        }
    }
}

/// A vector task of `k` on tensors `t`.
fn aiv<'a>(k: KernelId, t: &'a [TensorArg]) -> TaskSpec<'a> {
    TaskSpec::new(k, WorkerClass::Aiv).tensors(t)
}

/// Hands out buffers at increasing addresses from a base, 4 KiB apart.
struct Arena(u64);

impl Arena {
    fn take(&mut self, elems: usize, elem: u32) -> Buffer {
        let len = (elems * elem as usize) as u64;
        let b = Buffer::new(self.0, len);
        self.0 += len.div_ceil(4096).max(1) * 4096;
        b
    }
}

/// The buffers of one decode layer, at addresses in an arena from a base.
#[derive(Clone, Copy, Debug)]
pub struct DecodeBuffers {
    /// The layer's input activations.
    pub x: Buffer,
    /// The first norm's output.
    pub xn: Buffer,
    /// The fused QKV projection's output.
    pub qkv: Buffer,
    /// Queries and keys after RoPE.
    pub rot: Buffer,
    /// The attention's output.
    pub attn: Buffer,
    /// The output projection's.
    pub proj: Buffer,
    /// After the first residual add.
    pub h1: Buffer,
    /// The second norm's output.
    pub xn2: Buffer,
    /// The fused gate/up projection's output.
    pub gu: Buffer,
    /// SwiGLU's output.
    pub act: Buffer,
    /// The down projection's output.
    pub down: Buffer,
    /// The layer's output activations.
    pub out: Buffer,
    /// Each norm's reciprocal RMS.
    pub rstd: [Buffer; 2],
    /// Each norm's weights.
    pub gamma: [Buffer; 2],
    /// The QKV, output, gate/up and down projections' weights.
    pub weights: [Buffer; 4],
    /// The KV cache's key blocks.
    pub k_pool: Buffer,
    /// Its value blocks.
    pub v_pool: Buffer,
}

impl DecodeBuffers {
    /// The buffers of a layer of `sh`, in an arena from `base`.
    pub fn new(sh: &DecodeShape, base: u64) -> Self {
        let e = sh.elem;
        let (h, i) = (sh.hidden, sh.inter);
        let (q_dim, kv_dim) = (sh.q_dim(), sh.kv_dim());
        let qkv_n = sh.projections()[0].n;
        let mut arena = Arena(base);
        let x = arena.take(h, e);
        let xn = arena.take(h, e);
        let qkv = arena.take(qkv_n, e);
        let rot = arena.take(q_dim + kv_dim, e);
        let attn = arena.take(q_dim, e);
        let proj = arena.take(h, e);
        let h1 = arena.take(h, e);
        let xn2 = arena.take(h, e);
        let gu = arena.take(2 * i, e);
        let act = arena.take(i, e);
        let down = arena.take(h, e);
        let out = arena.take(h, e);
        let rstd = [arena.take(1, 4), arena.take(1, 4)];
        let gamma = [arena.take(h, e), arena.take(h, e)];
        let weights = [
            arena.take(h * qkv_n, e),
            arena.take(q_dim * h, e),
            arena.take(h * 2 * i, e),
            arena.take(i * h, e),
        ];
        let a = sh.attention();
        let pool = sh.kv_blocks * a.heads * a.block * a.d;
        let (k_pool, v_pool) = (arena.take(pool, e), arena.take(pool, e));
        DecodeBuffers {
            x,
            xn,
            qkv,
            rot,
            attn,
            proj,
            h1,
            xn2,
            gu,
            act,
            down,
            out,
            rstd,
            gamma,
            weights,
            k_pool,
            v_pool,
        }
    }

    /// What lives beyond one layer's run: the input and output activations, the norms' and
    /// projections' weights and the KV cache, in that order (a graph of the layer's
    /// boundaries; the rest are its internal buffers).
    pub fn boundaries(&self) -> [Buffer; 10] {
        let [g0, g1] = self.gamma;
        let [w0, w1, w2, w3] = self.weights;
        [
            self.x,
            self.out,
            g0,
            g1,
            w0,
            w1,
            w2,
            w3,
            self.k_pool,
            self.v_pool,
        ]
    }
}

/// Records one decode layer of `shape` as a graph on `o` into `vecs` (boundaries as
/// [`DecodeBuffers::boundaries`] of the arena from `base`; its other buffers internal):
/// each replay binds a layer's input, output, weights and cache.
pub fn record_decode_layer<'s, P: Platform>(
    o: &mut Orchestrator<'_, '_, P>,
    vecs: &'s mut Option<GraphVecs>,
    shape: &DecodeShape,
    base: u64,
) -> Result<Graph<'s>, BuildError> {
    shape.check()?;
    let mut s = Submitter::capturing();
    submit_body(&mut s, o, shape, DecodeBuffers::new(shape, base))?;
    let tasks = s.take_captured();
    let vecs = vecs.insert(GraphVecs::for_tasks(&tasks));
    let boundaries = DecodeBuffers::new(shape, base).boundaries();
    Ok(record_captured(o, vecs, &boundaries, &tasks)?)
}

/// Submits one decode layer of `shape` in a scope, its buffers in an arena from `base` (a
/// device address range no kernel touches and no allocation overlaps).
pub fn submit_decode_layer<P: Platform>(
    s: &mut Submitter,
    o: &mut Orchestrator<'_, '_, P>,
    shape: &DecodeShape,
    base: u64,
) -> Result<(), BuildError> {
    submit_decode_layer_on(s, o, shape, DecodeBuffers::new(shape, base))
}

/// Submits one decode layer of `shape` in a scope, on `buffers` (a layer that reads another
/// one's output, say: [`DecodeBuffers::new`] with its `x` replaced).
pub fn submit_decode_layer_on<P: Platform>(
    s: &mut Submitter,
    o: &mut Orchestrator<'_, '_, P>,
    shape: &DecodeShape,
    buffers: DecodeBuffers,
) -> Result<(), BuildError> {
    shape.check()?;
    o.scope(|o| submit_body(s, o, shape, buffers))?
}

fn submit_body<P: Platform>(
    s: &mut Submitter,
    o: &mut Orchestrator<'_, '_, P>,
    sh: &DecodeShape,
    buffers: DecodeBuffers,
) -> Result<(), BuildError> {
    let e = sh.elem;
    let (h, i) = (sh.hidden, sh.inter);
    let (q_dim, kv_dim) = (sh.q_dim(), sh.kv_dim());
    let [qkv_g, o_g, gu_g, down_g] = sh.projections();
    let DecodeBuffers {
        x,
        xn,
        qkv,
        rot,
        attn,
        proj,
        h1,
        xn2,
        gu,
        act,
        down,
        out,
        rstd,
        gamma,
        weights,
        k_pool,
        v_pool,
    } = buffers;
    let a = sh.attention();
    // The sequence's blocks, scattered over the pool; the token goes in the last row of the
    // last one.
    let table: Vec<usize> = (0..sh.kv_blocks)
        .map(|j| (j * 3 + 1) % sh.kv_blocks)
        .collect();
    let last = table[sh.kv_blocks - 1];

    let norm =
        |s: &mut Submitter, o: &mut Orchestrator<'_, '_, P>, n: usize, src: Buffer, dst: Buffer| {
            let t = [
                TensorArg::input(src, whole(src, e)),
                TensorArg::output(rstd[n], whole(rstd[n], 4)),
            ];
            s.submit(o, &aiv(kernel::RMS_STATS, &t))?;
            let c = h / sh.norm_chunks;
            for j in 0..sh.norm_chunks {
                let t = [
                    TensorArg::input(src, span(src, e, j * c, c)),
                    TensorArg::input(rstd[n], whole(rstd[n], 4)),
                    TensorArg::input(gamma[n], span(gamma[n], e, j * c, c)),
                    TensorArg::output(dst, span(dst, e, j * c, c)),
                ];
                s.submit(o, &aiv(kernel::RMS_APPLY, &t))?;
            }
            Ok::<_, BuildError>(())
        };
    let residual =
        |s: &mut Submitter, o: &mut Orchestrator<'_, '_, P>, a: Buffer, b: Buffer, dst: Buffer| {
            let c = h / sh.residual_chunks;
            for j in 0..sh.residual_chunks {
                let t = [
                    TensorArg::input(a, span(a, e, j * c, c)),
                    TensorArg::input(b, span(b, e, j * c, c)),
                    TensorArg::output(dst, span(dst, e, j * c, c)),
                ];
                s.submit(o, &aiv(kernel::RESIDUAL, &t))?;
            }
            Ok::<_, BuildError>(())
        };
    let gemv = |a, b, acc| GemmBuffers { a, b, acc };

    // Attention block.
    norm(s, o, 0, x, xn)?;
    submit_tiled_gemm(s, o, &qkv_g, gemv(xn, weights[0], qkv), kernel::QKV, None)?;
    let tn = sh.proj_tn;
    for j in 0..(q_dim + kv_dim) / tn {
        let t = [
            TensorArg::input(qkv, span(qkv, e, j * tn, tn)),
            TensorArg::output(rot, span(rot, e, j * tn, tn)),
        ];
        s.submit(o, &aiv(kernel::ROPE, &t))?;
    }
    let d = sh.head_dim;
    let row = |g: usize| a.kv_at(last, g) + (a.block - 1) * d;
    for g in 0..sh.kv_heads {
        let t = [
            TensorArg::input(rot, span(rot, e, q_dim + g * d, d)),
            TensorArg::input(qkv, span(qkv, e, q_dim + kv_dim + g * d, d)),
            TensorArg::output(k_pool, span(k_pool, e, row(g), d)),
            TensorArg::output(v_pool, span(v_pool, e, row(g), d)),
        ];
        s.submit(o, &aiv(kernel::KV_WRITE, &t))?;
    }
    let layer = AttentionLayer {
        q: Buffer::new(rot.base, (q_dim * e as usize) as u64),
        k: k_pool,
        v: v_pool,
        out: attn,
        table: &table,
    };
    submit_layer(s, o, &a, &ATTENTION, &layer, false)?;
    submit_tiled_gemm(
        s,
        o,
        &o_g,
        gemv(attn, weights[1], proj),
        kernel::O_PROJ,
        None,
    )?;
    residual(s, o, x, proj, h1)?;

    // MLP block.
    norm(s, o, 1, h1, xn2)?;
    submit_tiled_gemm(
        s,
        o,
        &gu_g,
        gemv(xn2, weights[2], gu),
        kernel::GATE_UP,
        None,
    )?;
    let c = sh.gate_up_tn;
    for j in 0..i / c {
        let t = [
            TensorArg::input(gu, span(gu, e, j * c, c)),
            TensorArg::input(gu, span(gu, e, i + j * c, c)),
            TensorArg::output(act, span(act, e, j * c, c)),
        ];
        s.submit(o, &aiv(kernel::SWIGLU, &t))?;
    }
    submit_tiled_gemm(
        s,
        o,
        &down_g,
        gemv(act, weights[3], down),
        kernel::DOWN,
        None,
    )?;
    residual(s, o, h1, down, out)?;
    Ok(())
}
