//! paged_attention: the decode-phase DAG of attention over a paged KV cache, in f32.
//!
//! One query token per head attends to a sequence of `BLOCKS * BLOCK` cached tokens whose
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

use pto_runtime_core::{
    Access, Buffer, Config, KernelId, ProfileLevel, TaskSpec, TensorArg, Tile, WorkerClass,
};
use pto_sim::{DepGraph, KernelCtx, KernelError, KernelTable, SimOptions, SimOrchestrator};

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
const QK: KernelId = KernelId(0);
/// Tensors `[scores (BLOCK), p (BLOCK), stats (2)]`: stats = [max, sum of p],
/// p[t] = exp(scores[t] - max).
const SOFTMAX: KernelId = KernelId(1);
/// Tensors `[p (BLOCK), v (BLOCK x D), o (D)]`: o = sum of p[t] v[t].
const PV: KernelId = KernelId(2);
/// Tensors `[state (2 + D), stats (2), o (D)]`: merges the block into the head's running
/// state `[max, sum, out...]` (an output for the first block: the state starts there).
const MERGE: KernelId = KernelId(3);
/// Tensors `[state (2 + D), out (D)]`: out = state.out / state.sum.
const NORMALIZE: KernelId = KernelId(4);

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
}

/// Device buffers of one layer's inputs and output.
#[derive(Clone, Copy)]
struct Layer {
    k: Buffer,
    v: Buffer,
    out: Buffer,
}

/// Submits one layer: queries from `q`, output to `layer.out`, intermediates from the heap.
fn submit_layer(
    o: &mut SimOrchestrator<'_, '_>,
    g: &mut DepGraph,
    l: usize,
    q: Buffer,
    layer: Layer,
) -> Result<(), Error> {
    let scale = (1.0 / (D as f32).sqrt()).to_bits() as u64;
    let vec_of =
        |b: Buffer, at: usize, n: usize| Tile::contiguous(b.at((at * 4) as u64), F32, n as u32);
    let whole = |b: Buffer| Tile::contiguous(b.base, F32, (b.len / 4) as u32);
    let task = |k: KernelId, class: WorkerClass| TaskSpec::new(k, class);
    for h in 0..HEADS {
        let q_h = TensorArg::input(q, vec_of(q, h * D, D));
        let mut state = None;
        for j in 0..BLOCKS {
            let p = block_table(l, j);
            let kv =
                |b: Buffer| TensorArg::input(b, vec_of(b, (p * HEADS + h) * BLOCK * D, BLOCK * D));
            // Each output buffer belongs to the next task submitted: allocate, then submit.
            let s = o.alloc_buffer(0, (BLOCK * 4) as u64, 64)?;
            let t = [q_h, kv(layer.k), TensorArg::output(s, whole(s))];
            g.submit(o, &task(QK, WorkerClass::Aic).tensors(&t).args(&[scale]))?;
            let (pb, stats) = (
                o.alloc_buffer(0, (BLOCK * 4) as u64, 64)?,
                o.alloc_buffer(0, 8, 64)?,
            );
            let t = [
                TensorArg::input(s, whole(s)),
                TensorArg::output(pb, whole(pb)),
                TensorArg::output(stats, whole(stats)),
            ];
            g.submit(o, &task(SOFTMAX, WorkerClass::Aiv).tensors(&t))?;
            let ob = o.alloc_buffer(0, (D * 4) as u64, 64)?;
            let t = [
                TensorArg::input(pb, whole(pb)),
                kv(layer.v),
                TensorArg::output(ob, whole(ob)),
            ];
            g.submit(o, &task(PV, WorkerClass::Aic).tensors(&t))?;
            // The running state: written first by the first block's merge, then read and
            // written by each next one (so they follow each other).
            let st = match state {
                None => {
                    let b = o.alloc_buffer(0, ((2 + D) * 4) as u64, 64)?;
                    state = Some(b);
                    TensorArg::output(b, whole(b))
                }
                Some(b) => TensorArg::inout(b, whole(b)),
            };
            let t = [
                st,
                TensorArg::input(stats, whole(stats)),
                TensorArg::input(ob, whole(ob)),
            ];
            g.submit(o, &task(MERGE, WorkerClass::Aiv).tensors(&t))?;
        }
        let st = state.ok_or("no KV block")?;
        let t = [
            TensorArg::input(st, whole(st)),
            TensorArg::output(layer.out, vec_of(layer.out, h * D, D)),
        ];
        g.submit(o, &task(NORMALIZE, WorkerClass::Aiv).tensors(&t))?;
    }
    Ok(())
}

/// Runs the decode step on the simulator and checks the last layer's output against
/// [`reference`]; with `trace`, profiles every task.
fn paged_attention(trace: bool) -> Result<Attention, Error> {
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
        let mut layers = Vec::new();
        for l in 0..LAYERS {
            let layer = Layer {
                k: mem.alloc_buffer(pool, 64)?,
                v: mem.alloc_buffer(pool, 64)?,
                out: mem.alloc_buffer(HEADS * D * 4, 64)?,
            };
            mem.write_f32s(layer.k.base, &inp.k[l])?;
            mem.write_f32s(layer.v.base, &inp.v[l])?;
            layers.push(layer);
        }
        let mut g = DepGraph::new();
        let mut query = q;
        for (l, &layer) in layers.iter().enumerate() {
            // One scope per layer: its heap buffers live until its last task retired.
            o.scope(|o| submit_layer(o, &mut g, l, query, layer))??;
            query = layer.out;
        }
        Ok::<_, Error>((query, g))
    })?;
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
        tasks: out.report.finished,
        wall: out.wall,
        max_error,
        deps,
        kernels,
        records: out.records,
        ticks_per_us: out.ticks_per_us,
    })
}

fn main() -> Result<(), Error> {
    let trace = pto_examples::trace_arg();
    let deps = pto_examples::deps_arg();
    let a = paged_attention(trace.is_some())?;
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
        let a = paged_attention(false).unwrap();
        assert_eq!(a.tasks as usize, LAYERS * HEADS * PER_HEAD);
    }

    #[test]
    fn dependencies_follow_the_decode_dag() {
        let a = paged_attention(false).unwrap();
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
        let a = paged_attention(true).unwrap();
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
