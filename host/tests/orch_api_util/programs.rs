//! The programs of `examples/orch_api/` as runs: their inputs, arguments and golden outputs,
//! computed here in the order the kernels compute them (so f32 results match exactly).

use super::{Arg, Dtype, Run, f32s, i32s, i64s};

/// Clusters of every run: 4 AIC and 8 AIV cores, so a task of 4 blocks fits either class.
pub const CLUSTERS: u32 = 4;

/// out = 3 (x + y)^2 + x over 2^14 f32 elements.
pub fn vector() -> Run<'static> {
    // Long enough that a kernel runs for longer than a dispatch takes: a consumer started
    // before its producer finished would read a partial result.
    let n = 1usize << 14;
    let x: Vec<f32> = (0..n).map(|i| (i % 7) as f32 - 3.0).collect();
    let y: Vec<f32> = (0..n).map(|i| (i % 5) as f32).collect();
    let out: Vec<f32> = x
        .iter()
        .zip(&y)
        .map(|(a, b)| 3.0 * (a + b) * (a + b) + a)
        .collect();
    let shape = vec![n as u32];
    Run {
        program: "vector",
        kernels: &["add", "scale", "mul"],
        buffers: vec![f32s(&x), f32s(&y), vec![0; 4 * n]],
        args: vec![
            Arg::Tensor(0, Dtype::F32, shape.clone()),
            Arg::Tensor(1, Dtype::F32, shape.clone()),
            Arg::Tensor(2, Dtype::F32, shape),
        ],
        expect: vec![(2, f32s(&out))],
        dtype: "f32",
        clusters: CLUSTERS,
        orchestration: None,
    }
}

/// `examples/orch_api/layers`: two tokens through three layers (`a = 0.5 (a + w_l)`), each
/// layer a graph function (`rt_submit_graph`) over the vector example's kernels.
pub fn layers() -> Run<'static> {
    layers_with(&[])
}

/// [`layers`], its orchestration compiled with `flags`.
pub fn layers_with(flags: &'static [&'static str]) -> Run<'static> {
    let (n, layers, tokens) = (1usize << 12, 3usize, 2usize);
    let x = values(n, 3);
    let w = values(layers * n, 4);
    let mut a = x.clone();
    for t in 0..tokens {
        // The layer's scale: a scalar of each call (0.5 for token 0, 0.25 for token 1).
        let f = [0.5, 0.25][t];
        for l in 0..layers {
            for (i, v) in a.iter_mut().enumerate() {
                *v = (*v + w[l * n + i]) * f;
            }
        }
    }
    Run {
        program: "vector",
        kernels: &["add", "scale", "mul"],
        buffers: vec![f32s(&x), f32s(&w), vec![0; 4 * n]],
        args: vec![
            Arg::Tensor(0, Dtype::F32, vec![n as u32]),
            Arg::Tensor(1, Dtype::F32, vec![layers as u32, n as u32]),
            Arg::Tensor(2, Dtype::F32, vec![n as u32]),
        ],
        expect: vec![(2, f32s(&a))],
        dtype: "f32",
        clusters: CLUSTERS,
        orchestration: Some((super::source("layers").join("orchestration.cpp"), flags)),
    }
}

/// Two batches of a 32 x 512 by 512 x 64 product, tiles of 16 rows.
pub fn bgemm() -> Run<'static> {
    // Each task multiplies 16 x 256 by 256 x 64: long enough that a second half started
    // before its first finished would be overwritten.
    let (batch, m, k, n, tm) = (2usize, 32usize, 512usize, 64usize, 16usize);
    let a = matrix(batch * m, k, 1);
    let b = matrix(batch * k, n, 2);
    let mut c = vec![0f32; batch * m * n];
    for z in 0..batch {
        for i in 0..m {
            for j in 0..n {
                let mut s = 0f32;
                for x in 0..k {
                    s += a[(z * m + i) * k + x] * b[(z * k + x) * n + j];
                }
                c[(z * m + i) * n + j] = s;
            }
        }
    }
    Run {
        program: "bgemm",
        kernels: &["gemm"],
        buffers: vec![f32s(&a), f32s(&b), vec![0; 4 * c.len()]],
        args: vec![
            Arg::Tensor(0, Dtype::F32, vec![(batch * m) as u32, k as u32]),
            Arg::Tensor(1, Dtype::F32, vec![batch as u32, k as u32, n as u32]),
            Arg::Tensor(2, Dtype::F32, vec![batch as u32, m as u32, n as u32]),
            Arg::Scalar(tm as i64),
        ],
        expect: vec![(2, f32s(&c))],
        dtype: "f32",
        clusters: CLUSTERS,
        orchestration: None,
    }
}

/// Three sequences (7, 0 and 12 tokens) of 4 heads of 8 over pages of 4 tokens.
pub fn paged_attention() -> Run<'static> {
    let (heads, dim, page_size, max_pages, pages) = (4usize, 8usize, 4usize, 3usize, 8usize);
    let lens: [i32; 3] = [7, 0, 12];
    let table: [i32; 9] = [5, 2, 7, 0, 0, 0, 1, 6, 3];
    let batch = lens.len();
    let q = values(batch * heads * dim, 1);
    let key = values(pages * page_size * heads * dim, 2);
    let value = values(pages * page_size * heads * dim, 3);
    let scale = 1.0 / (dim as f32).sqrt();
    // Token t of sequence b, head h: its key (or value) row.
    let row = |cache: &[f32], b: usize, t: usize, h: usize| -> Vec<f32> {
        let page = table[b * max_pages + t / page_size] as usize;
        let at = ((page * page_size + t % page_size) * heads + h) * dim;
        cache[at..at + dim].to_vec()
    };
    let mut out = vec![0f32; batch * heads * dim];
    for b in 0..batch {
        let len = lens[b] as usize;
        for h in 0..heads {
            let qh = &q[(b * heads + h) * dim..][..dim];
            let s: Vec<f32> = (0..len)
                .map(|t| {
                    let k = row(&key, b, t, h);
                    let mut dot = 0f32;
                    for d in 0..dim {
                        dot += qh[d] * k[d];
                    }
                    scale * dot
                })
                .collect();
            let top = s.iter().copied().fold(f32::MIN, f32::max);
            let sum: f32 = s.iter().map(|v| (v - top).exp()).sum();
            let o = &mut out[(b * heads + h) * dim..][..dim];
            for (t, v) in s.iter().enumerate() {
                let p = (v - top).exp() / sum;
                let vr = row(&value, b, t, h);
                for d in 0..dim {
                    o[d] += p * vr[d];
                }
            }
        }
    }
    let cache = vec![pages as u32, page_size as u32, heads as u32, dim as u32];
    let qshape = vec![batch as u32, heads as u32, dim as u32];
    Run {
        program: "paged_attention",
        kernels: &["qk", "softmax_pv"],
        buffers: vec![
            f32s(&q),
            f32s(&key),
            f32s(&value),
            i32s(&table),
            i32s(&lens),
            vec![0; 4 * out.len()],
        ],
        args: vec![
            Arg::Tensor(0, Dtype::F32, qshape.clone()),
            Arg::Tensor(1, Dtype::F32, cache.clone()),
            Arg::Tensor(2, Dtype::F32, cache),
            Arg::Tensor(3, Dtype::I32, vec![batch as u32, max_pages as u32]),
            Arg::Tensor(4, Dtype::I32, vec![batch as u32]),
            Arg::Tensor(5, Dtype::F32, qshape),
            Arg::Scalar(i64::from(scale.to_bits())),
        ],
        expect: vec![(5, f32s(&out))],
        dtype: "f32",
        clusters: CLUSTERS,
        orchestration: None,
    }
}

/// A MIX task of 2 blocks over 8 x 4 f32, and its consumer.
pub fn mix() -> Run<'static> {
    let (rows, cols, blocks) = (8usize, 4usize, 2usize);
    let x = matrix(rows, cols, 4);
    let w = matrix(cols, cols, 5);
    let mut y = vec![0f32; rows * cols];
    for i in 0..rows {
        for j in 0..cols {
            let mut s = 0f32;
            for k in 0..cols {
                s += x[i * cols + k] * w[k * cols + j];
            }
            y[i * cols + j] = s;
        }
    }
    let mut parts = vec![0f32; 2 * blocks];
    for b in 0..blocks {
        for i in b * rows / blocks..(b + 1) * rows / blocks {
            for j in 0..cols {
                let v = x[i * cols + j];
                if j < cols / 2 {
                    parts[2 * b] += v;
                } else {
                    parts[2 * b + 1] += v * v;
                }
            }
        }
    }
    let mut total = 0f32;
    for v in y.iter().chain(&parts) {
        total += v;
    }
    Run {
        program: "mix",
        kernels: &["mix_matmul", "mix_sum", "mix_sumsq", "total"],
        buffers: vec![
            f32s(&x),
            f32s(&w),
            vec![0; 4 * y.len()],
            vec![0; 4 * parts.len()],
            vec![0; 4],
        ],
        args: vec![
            Arg::Tensor(0, Dtype::F32, vec![rows as u32, cols as u32]),
            Arg::Tensor(1, Dtype::F32, vec![cols as u32, cols as u32]),
            Arg::Tensor(2, Dtype::F32, vec![rows as u32, cols as u32]),
            Arg::Tensor(3, Dtype::F32, vec![parts.len() as u32]),
            Arg::Tensor(4, Dtype::F32, vec![1]),
            Arg::Scalar(blocks as i64),
        ],
        expect: vec![(2, f32s(&y)), (3, f32s(&parts)), (4, f32s(&[total]))],
        dtype: "f32",
        clusters: CLUSTERS,
        orchestration: None,
    }
}

/// A small integer-valued matrix (exact in f32), varying with `seed`.
fn matrix(rows: usize, cols: usize, seed: usize) -> Vec<f32> {
    (0..rows * cols)
        .map(|i| ((i * (3 + seed) + seed) % 7) as f32 - 3.0)
        .collect()
}

/// Small fractional values (multiples of 1/8), varying with `seed`.
fn values(len: usize, seed: usize) -> Vec<f32> {
    (0..len)
        .map(|i| ((i * 37 + seed * 11) % 17) as f32 / 8.0 - 1.0)
        .collect()
}

/// x of the data-dependent program, and how many of its elements reach `threshold`.
fn counted(n: usize, threshold: i64) -> (Vec<i64>, i64) {
    let x: Vec<i64> = (0..n as i64).map(|i| (i * 7) % 23 - 5).collect();
    let k = x.iter().filter(|&&v| v >= threshold).count() as i64;
    (x, k)
}

/// The data-dependent program over 40 elements with `limit`, and the count it will find.
pub fn data_dependent(limit: i64) -> (Run<'static>, i64) {
    let (threshold, base) = (6, 500);
    let (x, k) = counted(40, threshold);
    let run = Run {
        program: "data_dependent",
        kernels: &["count", "bump", "store"],
        buffers: vec![i64s(&x), vec![0; 16]],
        args: vec![
            Arg::Tensor(0, Dtype::I64, vec![x.len() as u32]),
            Arg::Tensor(1, Dtype::I64, vec![2]),
            Arg::Scalar(threshold),
            Arg::Scalar(limit),
            Arg::Scalar(base),
        ],
        expect: vec![(1, i64s(&[base + k * (k + 1) / 2, k]))],
        dtype: "i64",
        clusters: CLUSTERS,
        orchestration: None,
    };
    (run, k)
}
