//! paged_attention: the decode-phase DAG of attention over a paged KV cache, in f32.
//!
//! The DAG comes from `pto_workloads::attention` (the bench's paged-attention scenes use it
//! too). One query token per head attends to a sequence of `BLOCKS * BLOCK` cached tokens whose
//! keys and values live in fixed-size blocks scattered over a pool (a block table maps each
//! logical block to a physical one). For each layer, head and block: a cube task computes the
//! block's scores (QK), a vector task its softmax statistics and probabilities, a cube task
//! their weighted sum of values (PV), and a vector task merges that into the head's running
//! online-softmax state (max, sum, output); a last vector task per head normalizes the state
//! into the layer's output, which is the next layer's query. Every dependency comes from the
//! tensor arguments; each layer is a scope, and every intermediate (scores, probabilities,
//! statistics, partial outputs, the running state) comes from the output heap, reclaimed as
//! the layer's tasks retire. The result is checked against plain Rust attention.
//!
//! ```sh
//! cargo run --example paged_attention
//! cargo run --example paged_attention -- --trace attn.json --deps attn.dot
//! ```

use pto_runtime_core::{Access, Config, KernelId, ProfileLevel};
use pto_sim::{DepGraph, KernelCtx, KernelError, KernelTable, MissingRecords, SimOptions};
use pto_workloads::Submitter;
use pto_workloads::attention::{
    AttentionKernels, AttentionLayer, AttentionShape, ScopeLayout, submit_paged_attention,
};

/// Any error: the simulator's, a submit's, memory's, or a wrong result.
type Error = Box<dyn std::error::Error + Send + Sync>;

/// Layers, heads, head dimension.
const LAYERS: usize = 2;
const HEADS: usize = 4;
const D: usize = 16;
/// Tokens per KV block, blocks of the sequence, blocks in the pool.
const BLOCK: usize = 16;
const BLOCKS: usize = 4;
const POOL: usize = 2 * BLOCKS;
/// Bytes per element.
const F32: u32 = 4;

/// Tensors `[q (D), k (BLOCK x D), scores (BLOCK)]`, `args = [scale]` (f32 bits):
/// scores[t] = scale * q . k[t].
const QK: KernelId = AttentionKernels::EXAMPLE.qk;
/// Tensors `[scores (BLOCK), p (BLOCK), stats (2)]`: stats = [max, sum of p],
/// p[t] = exp(scores[t] - max).
const SOFTMAX: KernelId = AttentionKernels::EXAMPLE.softmax;
/// Tensors `[p (BLOCK), v (BLOCK x D), o (D)]`: o = sum of p[t] v[t].
const PV: KernelId = AttentionKernels::EXAMPLE.pv;
/// Tensors `[state (2 + D), stats (2), o (D)]`: merges the block into the head's running
/// state `[max, sum, out...]` (an output for the first block: the state starts there).
const MERGE: KernelId = AttentionKernels::EXAMPLE.merge;
/// Tensors `[state (2 + D), out (D)]`: out = state.out / state.sum.
const NORMALIZE: KernelId = AttentionKernels::EXAMPLE.normalize;

fn qk(ctx: &KernelCtx<'_>) -> Result<(), KernelError> {
    let [scale] = ctx.args_array()?;
    let scale = f32::from_bits(scale as u32);
    let (q, k, s) = (ctx.tensor(0)?, ctx.tensor(1)?, ctx.tensor(2)?);
    let (q, k) = (q.read_f32s()?, k.read_f32s()?);
    let scores: Vec<f32> = k.chunks(D).map(|row| scale * dot(&q, row)).collect();
    s.write_f32s(&scores)?;
    Ok(())
}

fn softmax(ctx: &KernelCtx<'_>) -> Result<(), KernelError> {
    let (s, p, stats) = (ctx.tensor(0)?, ctx.tensor(1)?, ctx.tensor(2)?);
    let s = s.read_f32s()?;
    let max = s.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let e: Vec<f32> = s.iter().map(|x| (x - max).exp()).collect();
    stats.write_f32s(&[max, e.iter().sum()])?;
    p.write_f32s(&e)?;
    Ok(())
}

fn pv(ctx: &KernelCtx<'_>) -> Result<(), KernelError> {
    let (p, v, o) = (ctx.tensor(0)?, ctx.tensor(1)?, ctx.tensor(2)?);
    let (p, v) = (p.read_f32s()?, v.read_f32s()?);
    let mut out = vec![0f32; D];
    for (w, row) in p.iter().zip(v.chunks(D)) {
        out.iter_mut().zip(row).for_each(|(o, x)| *o += w * x);
    }
    o.write_f32s(&out)?;
    Ok(())
}

fn merge(ctx: &KernelCtx<'_>) -> Result<(), KernelError> {
    let (state, stats, o) = (ctx.tensor(0)?, ctx.tensor(1)?, ctx.tensor(2)?);
    let (stats, o) = (stats.read_f32s()?, o.read_f32s()?);
    let (m_b, l_b) = (stats[0], stats[1]);
    let merged = if state.access() == Access::Out {
        [m_b, l_b].into_iter().chain(o).collect::<Vec<_>>()
    } else {
        let s = state.read_f32s()?;
        let (m_a, l_a) = (s[0], s[1]);
        let m = m_a.max(m_b);
        let (a, b) = ((m_a - m).exp(), (m_b - m).exp());
        let outs = s[2..].iter().zip(&o).map(|(x, y)| a * x + b * y);
        [m, a * l_a + b * l_b].into_iter().chain(outs).collect()
    };
    state.write_f32s(&merged)?;
    Ok(())
}

fn normalize(ctx: &KernelCtx<'_>) -> Result<(), KernelError> {
    let (state, out) = (ctx.tensor(0)?, ctx.tensor(1)?);
    let s = state.read_f32s()?;
    let o: Vec<f32> = s[2..].iter().map(|x| x / s[1]).collect();
    out.write_f32s(&o)?;
    Ok(())
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The physical block holding logical block `j` of layer `l`'s sequence.
fn block_table(l: usize, j: usize) -> usize {
    (j * 5 + l * 3 + 1) % POOL
}

/// The inputs: the first layer's queries (`HEADS x D`) and each layer's key and value pools
/// (`POOL x HEADS x BLOCK x D`).
struct Inputs {
    q: Vec<f32>,
    k: Vec<Vec<f32>>,
    v: Vec<Vec<f32>>,
}

impl Inputs {
    fn new() -> Self {
        // Deterministic values in [-1, 1).
        let values = |seed: usize, n: usize| -> Vec<f32> {
            (0..n)
                .map(|i| ((i * 2654435761 + seed * 40503) % 2000) as f32 / 1000.0 - 1.0)
                .collect()
        };
        let pool = POOL * HEADS * BLOCK * D;
        Inputs {
            q: values(1, HEADS * D),
            k: (0..LAYERS).map(|l| values(10 + l, pool)).collect(),
            v: (0..LAYERS).map(|l| values(20 + l, pool)).collect(),
        }
    }

    /// Row `t` (0..BLOCK) of head `h`'s block `p` of a pool.
    fn row(pool: &[f32], p: usize, h: usize, t: usize) -> &[f32] {
        let at = ((p * HEADS + h) * BLOCK + t) * D;
        &pool[at..at + D]
    }
}

/// Plain Rust attention, layer after layer: each layer's output is the next one's query.
fn reference(inp: &Inputs) -> Vec<f32> {
    let scale = 1.0 / (D as f32).sqrt();
    let mut q = inp.q.clone();
    for l in 0..LAYERS {
        let mut out = vec![0f32; HEADS * D];
        for h in 0..HEADS {
            let qh = &q[h * D..(h + 1) * D];
            let tokens: Vec<(&[f32], &[f32])> = (0..BLOCKS)
                .flat_map(|j| {
                    let p = block_table(l, j);
                    (0..BLOCK).map(move |t| (p, t))
                })
                .map(|(p, t)| {
                    (
                        Inputs::row(&inp.k[l], p, h, t),
                        Inputs::row(&inp.v[l], p, h, t),
                    )
                })
                .collect();
            let scores: Vec<f32> = tokens.iter().map(|(k, _)| scale * dot(qh, k)).collect();
            let max = scores.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let e: Vec<f32> = scores.iter().map(|s| (s - max).exp()).collect();
            let sum: f32 = e.iter().sum();
            for ((_, v), w) in tokens.iter().zip(&e) {
                for (o, x) in out[h * D..(h + 1) * D].iter_mut().zip(*v) {
                    *o += w / sum * x;
                }
            }
        }
        q = out;
    }
    q
}

/// What the run did.
#[derive(Debug)]
pub struct Attention {
    /// Tasks that finished.
    pub tasks: u64,
    /// Wall time of the run.
    pub wall: std::time::Duration,
    /// Largest difference from plain Rust.
    pub max_error: f32,
    /// The dependencies the runtime wired.
    pub deps: DepGraph,
    /// The kernel table (for names).
    pub kernels: KernelTable,
    /// The task records (profiling at `Tasks`).
    pub records: Vec<pto_runtime_core::TaskRecord>,
    /// Clock ticks per microsecond of the records.
    pub ticks_per_us: u64,
    /// Whether the records miss tasks, and why (a trace of them would).
    pub missing_records: Option<MissingRecords>,
}

/// Runs the decode step on the simulator, in scopes as `layout` says (`Caller`: one scope
/// around everything), and checks the last layer's output against [`reference`]; with
/// `trace`, profiles every task.
fn paged_attention(trace: bool, layout: ScopeLayout) -> Result<Attention, Error> {
    let inp = Inputs::new();
    let kernels = KernelTable::new()
        .with(QK, "qk", qk)
        .with(SOFTMAX, "softmax", softmax)
        .with(PV, "pv", pv)
        .with(MERGE, "merge", merge)
        .with(NORMALIZE, "normalize", normalize);
    let cfg = Config {
        rings: 1,
        // A layer's tasks stay until its scope ends: room for one layer and the next.
        task_window: 256,
        aic_cores: 2,
        aiv_cores: 4,
        schedulers: 1,
        max_tensors: 4,
        max_args: 2,
        profile: if trace {
            ProfileLevel::Tasks
        } else {
            ProfileLevel::Off
        },
        ..Config::tiny()
    };
    let out = pto_sim::run(cfg, kernels.clone(), SimOptions::default(), |o| {
        let mem = o.platform().memory();
        let pool = POOL * HEADS * BLOCK * D * 4;
        let q = mem.alloc_buffer(HEADS * D * 4, 64)?;
        mem.write_f32s(q.base, &inp.q)?;
        let mut pools = Vec::new();
        for l in 0..LAYERS {
            let (k, v) = (mem.alloc_buffer(pool, 64)?, mem.alloc_buffer(pool, 64)?);
            let out = mem.alloc_buffer(HEADS * D * 4, 64)?;
            mem.write_f32s(k.base, &inp.k[l])?;
            mem.write_f32s(v.base, &inp.v[l])?;
            pools.push((k, v, out));
        }
        let shape = AttentionShape {
            heads: HEADS,
            group: 1,
            d: D,
            block: BLOCK,
            blocks: BLOCKS,
            elem: F32,
        };
        let tables: Vec<Vec<usize>> = (0..LAYERS)
            .map(|l| (0..BLOCKS).map(|j| block_table(l, j)).collect())
            .collect();
        let mut query = q;
        let mut layers = Vec::new();
        for (l, &(k, v, out)) in pools.iter().enumerate() {
            layers.push(AttentionLayer {
                q: query,
                k,
                v,
                out,
                table: &tables[l],
            });
            // Each layer's output is the next one's query.
            query = out;
        }
        // One scope per layer: its heap buffers live until its last task retired.
        let mut s = Submitter::recording();
        let kernels = AttentionKernels::EXAMPLE;
        match layout {
            ScopeLayout::Caller => {
                o.scope(|o| submit_paged_attention(&mut s, o, &shape, &kernels, &layers, layout))??
            }
            _ => submit_paged_attention(&mut s, o, &shape, &kernels, &layers, layout)?,
        }
        let g = s.into_graph().ok_or("the submitter recorded no graph")?;
        Ok::<_, Error>((query, g))
    })?;
    let missing_records = out.missing_records();
    let (result, deps) = out.value?;
    let mut got = vec![0f32; HEADS * D];
    out.memory.read_f32s(result.base, &mut got)?;
    let want = reference(&inp);
    let mut max_error = 0f32;
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        let err = (g - w).abs();
        if err.is_nan() || err > 1e-4 * w.abs().max(1.0) {
            return Err(format!("output[{i}] is {g} but plain Rust says {w}").into());
        }
        max_error = max_error.max(err);
    }
    Ok(Attention {
        missing_records,
        tasks: out.report.finished,
        wall: out.wall,
        max_error,
        deps,
        kernels,
        records: out.records,
        ticks_per_us: out.ticks_per_us,
    })
}

fn main() -> std::process::ExitCode {
    pto_examples::finish(run_from_command_line())
}

/// Runs the example as the command line says and prints what it did.
fn run_from_command_line() -> Result<(), Error> {
    let trace = pto_examples::trace_arg();
    let deps = pto_examples::deps_arg();
    let a = paged_attention(trace.is_some(), ScopeLayout::PerLayer)?;
    println!(
        "paged_attention: {LAYERS} layers x {HEADS} heads over {} tokens in {BLOCKS} blocks of \
         {BLOCK}: {} tasks in {:.1?}; matches plain Rust (max error {:.1e})",
        BLOCKS * BLOCK,
        a.tasks,
        a.wall,
        a.max_error
    );
    if let Some(path) = trace {
        pto_sim::write_chrome_trace(&path, &a.records, a.ticks_per_us, &a.kernels)?;
        if let Some(missing) = a.missing_records {
            eprintln!("warning: {missing}");
        }
        println!("trace: {} (open in Perfetto)", path.display());
    }
    if let Some(path) = deps {
        a.deps.write(&path, &a.kernels)?;
        println!("dependencies: {}", path.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pto_runtime_core::DepReason;

    const PER_HEAD: usize = 4 * BLOCKS + 1;

    #[test]
    fn paged_attention_matches_plain_rust() {
        let a = paged_attention(false, ScopeLayout::PerLayer).unwrap();
        assert_eq!(a.tasks as usize, LAYERS * HEADS * PER_HEAD);
    }

    #[test]
    fn dependencies_follow_the_decode_dag() {
        // One scope holds every task until the end, so no producer retires before its
        // consumers are submitted and every edge below is wired whatever the timing (with a
        // scope per layer, a layer that finished before the next was submitted leaves no
        // edge to it: nothing to wait for).
        let a = paged_attention(false, ScopeLayout::Caller).unwrap();
        let tasks = a.deps.tasks();
        let name = |i: usize| a.kernels.name(tasks[i].kernel).unwrap();
        let producers = |i: usize| -> Vec<(usize, DepReason)> {
            let mut v: Vec<_> = tasks[i]
                .deps
                .iter()
                .map(|d| {
                    (
                        tasks.iter().position(|t| t.id == d.producer).unwrap(),
                        d.reason,
                    )
                })
                .collect();
            v.sort_by_key(|p| p.0);
            v
        };
        let arg = |arg| DepReason::Tensor { arg };
        for l in 0..LAYERS {
            for h in 0..HEADS {
                let head = (l * HEADS + h) * PER_HEAD;
                for j in 0..BLOCKS {
                    let [qk, sm, pv, mg] = [0, 1, 2, 3].map(|x| head + 4 * j + x);
                    assert_eq!(
                        [name(qk), name(sm), name(pv), name(mg)],
                        ["qk", "softmax", "pv", "merge"]
                    );
                    // The first layer's queries are inputs; later ones wait for the layer
                    // before's normalize of the same head.
                    let want_qk = if l == 0 {
                        vec![]
                    } else {
                        vec![((l - 1) * HEADS + h) * PER_HEAD + PER_HEAD - 1]
                    };
                    let qk_deps: Vec<usize> = producers(qk).iter().map(|p| p.0).collect();
                    assert_eq!(qk_deps, want_qk, "layer {l} head {h} block {j}: qk");
                    assert_eq!(producers(sm), [(qk, arg(0))]);
                    assert_eq!(producers(pv), [(sm, arg(0))]);
                    let mut want = vec![(sm, arg(1)), (pv, arg(2))];
                    if j > 0 {
                        want.insert(0, (mg - 4, arg(0))); // the merge before: the state
                    }
                    assert_eq!(producers(mg), want, "merge of block {j}");
                }
                let norm = head + PER_HEAD - 1;
                assert_eq!(name(norm), "normalize");
                assert_eq!(producers(norm)[0], (norm - 1, arg(0)));
            }
        }
    }

    #[test]
    fn paged_attention_writes_a_trace_perfetto_can_draw() {
        let a = paged_attention(true, ScopeLayout::PerLayer).unwrap();
        let path =
            std::env::temp_dir().join(format!("paged_attention-{}.json", std::process::id()));
        pto_sim::write_chrome_trace(&path, &a.records, a.ticks_per_us, &a.kernels).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        let trace: serde_json::Value = serde_json::from_str(&text).unwrap();
        pto_sim::check_chrome_trace(&trace).expect("Perfetto can draw every track");
        assert_eq!(
            text.matches("\"name\":\"merge\"").count(),
            LAYERS * HEADS * BLOCKS,
            "one slice per merge"
        );
    }
}
