//! The bench's scenes: workloads shaped like the C++ runtime's own benchmark suite (batched
//! GEMM, paged attention decode under two scope layouts, a qwen3-14b decode layer, a
//! mixture-of-experts FFN whose unchosen experts are skipped by predicates), built
//! from this crate's builders, with no-op kernels and, for the silicon cost model, a
//! plausible a2a3 duration per kernel id.
//!
//! A kernel's modelled duration is the time its core takes to stream the bytes it reads and
//! writes at 64 B/ns (the a2a3's ~1.6 TB/s of HBM shared by 24 cube cores: decode is bound
//! by memory), at least 200 ns. Buffers are addresses in an arena from [`ARENA_BASE`] that no
//! kernel touches; the attention's intermediates come from the output heap.

use std::time::Duration;

use pto_runtime_core::{Bindings, Buffer, KernelId};
use pto_sim::{KernelTable, SimOrchestrator};

use crate::attention::{
    AttentionKernels, AttentionLayer, AttentionShape, ScopeLayout, submit_paged_attention,
};
use crate::decode_layer::{
    self, DecodeBuffers, DecodeShape, kernel, record_decode_layer, submit_decode_layer,
    submit_decode_layer_on,
};
use crate::gemm::{self, Epilogue, GemmBuffers, GemmShape, submit_tiled_gemm};
use crate::moe::{self, MoeShape, submit_moe};
use crate::{BuildError, Submitter};

/// Where the scenes' buffers start (far above the simulator's memory and heap).
pub const ARENA_BASE: u64 = 0x20_0000_0000;

/// A scene.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scene {
    /// 16 independent tiled GEMMs (256 x 512 by 512 x 256, bf16, 128-square tiles: 4 K
    /// steps and an epilogue per tile): 320 tasks.
    BatchedGemm,
    /// Paged attention decode, 2 layers x 16 heads over 1 024 cached tokens in 8 blocks,
    /// head dimension 128, a scope per layer: 1 056 tasks.
    PagedAttention,
    /// The same DAG, a scope per head.
    PagedAttentionPerHead,
    /// A qwen3-14b decode layer ([`DecodeShape::QWEN3_14B`]): 546 tasks.
    DecodeLayer,
    /// Decode steps: 2 tokens through 4 such layers, each layer reading the last one's
    /// output and its own weights and KV pools, every layer of every token an instance of
    /// one recorded graph (recorded once, in the run): 4 368 tasks.
    DecodeSteps,
    /// The same steps, every task submitted one by one: the side-by-side of
    /// [`Scene::DecodeSteps`].
    DecodeStepsFresh,
    /// A mixture-of-experts FFN ([`MoeShape::FULL`]): 16 experts in 4 tiles, the tiles of
    /// the 4 no token chose skipped by their predicates: 133 tasks, 32 skipped.
    Moe,
}

/// How big a scene is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SceneSize {
    /// The sizes the bench reports.
    Full,
    /// Small sizes of the same structure, for tests.
    Small,
}

/// Bytes a core streams per ns, and the shortest modelled kernel.
const BYTES_PER_NS: u64 = 64;
const SHORTEST_NS: u64 = 200;

/// The modelled duration of a kernel that moves `bytes`.
fn streaming(bytes: u64) -> Duration {
    Duration::from_nanos((bytes / BYTES_PER_NS).max(SHORTEST_NS))
}

impl Scene {
    /// Every scene.
    pub const ALL: [Scene; 7] = [
        Scene::BatchedGemm,
        Scene::PagedAttention,
        Scene::PagedAttentionPerHead,
        Scene::DecodeLayer,
        Scene::DecodeSteps,
        Scene::DecodeStepsFresh,
        Scene::Moe,
    ];

    /// Its name (`--workload scene:NAME`).
    pub fn name(self) -> &'static str {
        match self {
            Scene::BatchedGemm => "batched-gemm",
            Scene::PagedAttention => "paged-attention",
            Scene::PagedAttentionPerHead => "paged-attention-per-head",
            Scene::DecodeLayer => "decode-layer",
            Scene::DecodeSteps => "decode-steps",
            Scene::DecodeStepsFresh => "decode-steps-fresh",
            Scene::Moe => "moe",
        }
    }

    /// The scene called `name`.
    pub fn from_name(name: &str) -> Option<Scene> {
        Scene::ALL.into_iter().find(|s| s.name() == name)
    }

    fn gemm(size: SceneSize) -> (usize, GemmShape) {
        match size {
            SceneSize::Full => (
                16,
                GemmShape {
                    m: 256,
                    n: 256,
                    k: 512,
                    tm: 128,
                    tn: 128,
                    tk: 128,
                    elem: 2,
                },
            ),
            SceneSize::Small => (
                2,
                GemmShape {
                    m: 64,
                    n: 64,
                    k: 64,
                    tm: 32,
                    tn: 32,
                    tk: 32,
                    elem: 2,
                },
            ),
        }
    }

    fn attention(size: SceneSize) -> (usize, AttentionShape) {
        match size {
            SceneSize::Full => (
                2,
                AttentionShape {
                    heads: 16,
                    group: 1,
                    d: 128,
                    block: 128,
                    blocks: 8,
                    elem: 2,
                },
            ),
            SceneSize::Small => (
                2,
                AttentionShape {
                    heads: 2,
                    group: 1,
                    d: 16,
                    block: 16,
                    blocks: 2,
                    elem: 2,
                },
            ),
        }
    }

    fn moe(size: SceneSize) -> MoeShape {
        match size {
            SceneSize::Full => MoeShape::FULL,
            SceneSize::Small => MoeShape::SMALL,
        }
    }

    /// Tokens and layers of the decode steps.
    fn steps(size: SceneSize) -> (usize, usize) {
        match size {
            SceneSize::Full => (2, 4),
            SceneSize::Small => (2, 2),
        }
    }

    fn decode(size: SceneSize) -> DecodeShape {
        match size {
            SceneSize::Full => DecodeShape::QWEN3_14B,
            SceneSize::Small => DecodeShape::SMALL,
        }
    }

    /// Tasks the scene submits.
    pub fn tasks(self, size: SceneSize) -> u64 {
        match self {
            Scene::BatchedGemm => {
                let (batch, g) = Scene::gemm(size);
                let (tiles, steps) = g.tiles();
                (batch * tiles * (steps + 1)) as u64
            }
            Scene::PagedAttention | Scene::PagedAttentionPerHead => {
                let (layers, a) = Scene::attention(size);
                (layers * a.heads * a.tasks_per_head()) as u64
            }
            Scene::DecodeLayer => Scene::decode(size).tasks(),
            Scene::DecodeSteps | Scene::DecodeStepsFresh => {
                let (tokens, layers) = Scene::steps(size);
                (tokens * layers) as u64 * Scene::decode(size).tasks()
            }
            Scene::Moe => Scene::moe(size).tasks(),
        }
    }

    /// Tasks the scene's predicates skip.
    pub fn skipped(self, size: SceneSize) -> u64 {
        match self {
            Scene::Moe => Scene::moe(size).skipped(),
            _ => 0,
        }
    }

    /// No-op kernels, named, for every kernel id the scene uses.
    pub fn kernels(self) -> KernelTable {
        let names: &[(KernelId, &str)] = match self {
            Scene::BatchedGemm => &[(gemm::MATMUL, "matmul"), (gemm::EPILOGUE, "epilogue")],
            Scene::PagedAttention | Scene::PagedAttentionPerHead => {
                let k = AttentionKernels::EXAMPLE;
                &[
                    (k.qk, "qk"),
                    (k.softmax, "softmax"),
                    (k.pv, "pv"),
                    (k.merge, "merge"),
                    (k.normalize, "normalize"),
                ]
            }
            Scene::DecodeLayer | Scene::DecodeSteps | Scene::DecodeStepsFresh => &[
                (kernel::RMS_STATS, "rms_stats"),
                (kernel::RMS_APPLY, "rms_apply"),
                (kernel::QKV, "qkv_proj"),
                (kernel::ROPE, "rope"),
                (kernel::KV_WRITE, "kv_write"),
                (kernel::QK, "qk"),
                (kernel::SOFTMAX, "softmax"),
                (kernel::PV, "pv"),
                (kernel::MERGE, "merge"),
                (kernel::NORMALIZE, "normalize"),
                (kernel::O_PROJ, "o_proj"),
                (kernel::RESIDUAL, "residual"),
                (kernel::GATE_UP, "gate_up_proj"),
                (kernel::SWIGLU, "swiglu"),
                (kernel::DOWN, "down_proj"),
            ],
            Scene::Moe => &moe::KERNELS,
        };
        names.iter().fold(KernelTable::new(), |t, &(id, name)| {
            t.with(id, name, |_| Ok(()))
        })
    }

    /// Each kernel's modelled duration on the a2a3 chip (see the module's note).
    pub fn chip_kernel_times(self, size: SceneSize) -> Vec<(KernelId, Duration)> {
        match self {
            Scene::BatchedGemm => {
                let (_, g) = Scene::gemm(size);
                let e = u64::from(g.elem);
                let tile = (g.tm * g.tn) as u64;
                // A step reads its blocks of A and B; the accumulator stays in the core.
                let step = ((g.tm * g.tk + g.tk * g.tn) as u64) * e;
                // The epilogue reads the f32 accumulator, writes the tile.
                vec![
                    (gemm::MATMUL, streaming(step)),
                    (gemm::EPILOGUE, streaming(tile * 4 + tile * e)),
                ]
            }
            Scene::PagedAttention | Scene::PagedAttentionPerHead => {
                let (_, a) = Scene::attention(size);
                attention_times(&AttentionKernels::EXAMPLE, &a)
            }
            Scene::DecodeLayer | Scene::DecodeSteps | Scene::DecodeStepsFresh => {
                let d = Scene::decode(size);
                let [qkv, o, gu, down] = d.step_weight_bytes();
                let e = u64::from(d.elem);
                let chunk = (d.hidden / d.norm_chunks.max(1)) as u64 * e;
                let a = AttentionShape {
                    heads: d.kv_heads,
                    group: d.q_heads / d.kv_heads.max(1),
                    d: d.head_dim,
                    block: d.kv_block,
                    blocks: d.kv_blocks,
                    elem: d.elem,
                };
                let mut v = vec![
                    (kernel::RMS_STATS, streaming(d.hidden as u64 * e)),
                    (kernel::RMS_APPLY, streaming(3 * chunk)),
                    (kernel::QKV, streaming(qkv)),
                    (kernel::ROPE, streaming(2 * d.proj_tn as u64 * e)),
                    (kernel::KV_WRITE, streaming(4 * d.head_dim as u64 * e)),
                    (kernel::O_PROJ, streaming(o)),
                    (
                        kernel::RESIDUAL,
                        streaming(3 * (d.hidden / d.residual_chunks.max(1)) as u64 * e),
                    ),
                    (kernel::GATE_UP, streaming(gu)),
                    (kernel::SWIGLU, streaming(3 * d.gate_up_tn as u64 * e)),
                    (kernel::DOWN, streaming(down)),
                ];
                v.extend(attention_times(&decode_layer::ATTENTION, &a));
                v
            }
            Scene::Moe => {
                let [route, up, down, combine] = Scene::moe(size).kernel_bytes();
                vec![
                    (moe::kernel::ROUTE, streaming(route)),
                    (moe::kernel::UP, streaming(up)),
                    (moe::kernel::DOWN, streaming(down)),
                    (moe::kernel::COMBINE, streaming(combine)),
                ]
            }
        }
    }

    /// Submits the scene's tasks.
    pub fn submit(
        self,
        size: SceneSize,
        s: &mut Submitter,
        o: &mut SimOrchestrator<'_, '_>,
    ) -> Result<(), BuildError> {
        let mut next = ARENA_BASE;
        let mut take = |bytes: usize| {
            let b = Buffer::new(next, bytes as u64);
            next += (bytes as u64).div_ceil(4096).max(1) * 4096;
            b
        };
        match self {
            Scene::BatchedGemm => {
                let (batch, g) = Scene::gemm(size);
                let e = g.elem as usize;
                for _ in 0..batch {
                    let bufs = GemmBuffers {
                        a: take(g.m * g.k * e),
                        b: take(g.k * g.n * e),
                        acc: take(g.m * g.n * 4),
                    };
                    let epi = Epilogue {
                        kernel: gemm::EPILOGUE,
                        bias: take(g.n * e),
                        c: take(g.m * g.n * e),
                        args: &[],
                    };
                    submit_tiled_gemm(s, o, &g, bufs, gemm::MATMUL, Some(&epi))?;
                }
                Ok(())
            }
            Scene::PagedAttention | Scene::PagedAttentionPerHead => {
                let (layers, a) = Scene::attention(size);
                let e = a.elem as usize;
                let pool = a.blocks * a.heads * a.block * a.d * e;
                let table: Vec<usize> = (0..a.blocks).map(|j| (j * 5 + 1) % a.blocks).collect();
                let mut q = take(a.heads * a.group * a.d * e);
                let mut ls = Vec::with_capacity(layers);
                for _ in 0..layers {
                    let out = take(a.heads * a.group * a.d * e);
                    ls.push(AttentionLayer {
                        q,
                        k: take(pool),
                        v: take(pool),
                        out,
                        table: &table,
                    });
                    q = out;
                }
                let layout = if self == Scene::PagedAttention {
                    ScopeLayout::PerLayer
                } else {
                    ScopeLayout::PerHead
                };
                submit_paged_attention(s, o, &a, &AttentionKernels::EXAMPLE, &ls, layout)
            }
            Scene::DecodeLayer => submit_decode_layer(s, o, &Scene::decode(size), ARENA_BASE),
            Scene::DecodeSteps => submit_decode_steps(s, o, size, true),
            Scene::DecodeStepsFresh => submit_decode_steps(s, o, size, false),
            Scene::Moe => submit_moe(s, o, &Scene::moe(size), &mut take),
        }
    }
}

/// Submits the decode steps of `size`: each token through every layer, a layer's input the
/// last one's output. Layer `l` keeps its weights and KV pools in its own arena; each
/// (token, layer) has activations of its own. `replay`: each layer an instance of one graph
/// recorded first (its intermediates the instance's own); else its tasks one by one (its
/// intermediates in an arena of its own, so the two submit the same DAG).
fn submit_decode_steps(
    s: &mut Submitter,
    o: &mut SimOrchestrator<'_, '_>,
    size: SceneSize,
    replay: bool,
) -> Result<(), BuildError> {
    let shape = Scene::decode(size);
    let (tokens, layers) = Scene::steps(size);
    // A layer's whole arena, rounded up: arenas of layers, then of (token, layer) pairs.
    let span = DecodeBuffers::new(&shape, 0)
        .v_pool
        .end()
        .next_multiple_of(1 << 20);
    let layer_base = |l: usize| ARENA_BASE + l as u64 * span;
    let step_base = |t: usize, l: usize| layer_base(layers + t * layers + l);
    let mut vecs = None;
    let graph = if replay {
        Some(record_decode_layer(o, &mut vecs, &shape, layer_base(0))?)
    } else {
        None
    };
    let mut input = DecodeBuffers::new(&shape, layer_base(0)).x;
    for t in 0..tokens {
        for l in 0..layers {
            // Weights, norms and KV pools: the layer's; activations: this step's.
            let own = DecodeBuffers::new(&shape, layer_base(l));
            let step = DecodeBuffers::new(&shape, step_base(t, l));
            let buffers = DecodeBuffers {
                x: input,
                gamma: own.gamma,
                weights: own.weights,
                k_pool: own.k_pool,
                v_pool: own.v_pool,
                ..step
            };
            input = buffers.out;
            match &graph {
                Some(g) => {
                    let bound = buffers.boundaries();
                    o.scope(|o| s.replay(o, g, &Bindings::new(&bound)))??;
                }
                None => submit_decode_layer_on(s, o, &shape, buffers)?,
            }
        }
    }
    Ok(())
}

/// The attention kernels' modelled durations for `a`.
fn attention_times(k: &AttentionKernels, a: &AttentionShape) -> Vec<(KernelId, Duration)> {
    let e = u64::from(a.elem);
    let kv = (a.block * a.d) as u64 * e;
    let scores = (a.group * a.block) as u64 * e;
    let out = (a.group * a.d) as u64 * e;
    vec![
        (k.qk, streaming(kv + out + scores)),
        (k.softmax, streaming(2 * scores)),
        (k.pv, streaming(kv + scores + out)),
        (k.merge, streaming(3 * out)),
        (k.normalize, streaming(2 * out)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_full_sizes_are_what_the_docs_say() {
        for s in Scene::ALL {
            assert_eq!(Scene::from_name(s.name()), Some(s));
        }
        assert_eq!(Scene::from_name("nope"), None);
        let full: Vec<u64> = Scene::ALL
            .iter()
            .map(|s| s.tasks(SceneSize::Full))
            .collect();
        assert_eq!(full, [320, 1056, 1056, 546, 4368, 4368, 133]);
        assert_eq!(Scene::Moe.skipped(SceneSize::Full), 32);
    }

    #[test]
    fn every_kernel_a_scene_names_has_a_duration() {
        for s in Scene::ALL {
            let times = s.chip_kernel_times(SceneSize::Full);
            let kernels = s.kernels();
            assert!(!times.is_empty());
            for (id, d) in times {
                assert!(
                    kernels.name(id).is_some(),
                    "{s:?}: kernel {id:?} has no name"
                );
                assert!(d >= Duration::from_nanos(SHORTEST_NS));
            }
        }
    }
}
