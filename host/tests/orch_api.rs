//! Programs written in the C++ runtime's orchestration and kernel API
//! (`include/orch_api/`, `include/kernel_api/`, `docs/orchestration-api.md`), built with the
//! host's C++ compiler and run through `pto-launch run` on the simulator with
//! `--check-accesses`, each result checked against a golden value computed here:
//! `examples/orch_api/` vector (views, runtime-allocated outputs, nested scopes), bgemm
//! (reshape, strided views, a tile written then accumulated), paged_attention (SPMD blocks
//! on both classes, one per head), mix (a kernel per lane of a MIX task, sync start), and
//! data_dependent (get_tensor_data steering how many tasks follow, set_tensor_data, a dummy
//! task, rt_report_fatal). A missing dependency, a wrong block or sub-block index changes
//! the outputs, and the access check names tasks that touch a tile without an order.

mod orch_api_util;

use orch_api_util::{Arg, Dtype, Run, assert_golden, f32s, scratch, text};

/// Clusters of every run: 4 AIC and 8 AIV cores, so a task of 4 blocks fits either class.
const CLUSTERS: u32 = 4;

#[test]
fn vector_example_runs_views_and_runtime_allocated_outputs() {
    let n = 64usize;
    let x: Vec<f32> = (0..n).map(|i| (i % 7) as f32 - 3.0).collect();
    let y: Vec<f32> = (0..n).map(|i| (i % 5) as f32).collect();
    let out: Vec<f32> = x
        .iter()
        .zip(&y)
        .map(|(a, b)| 3.0 * (a + b) * (a + b) + a)
        .collect();
    let shape = vec![n as u32];
    let run = Run {
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
    };
    let o = run.launch(&scratch("vector"));
    assert_golden(&o, 1);
    assert!(text(&o).contains("finished 5 tasks"), "{}", text(&o));
}

/// A small integer-valued matrix (exact in f32), varying with `seed`.
fn matrix(rows: usize, cols: usize, seed: usize) -> Vec<f32> {
    (0..rows * cols)
        .map(|i| ((i * (3 + seed) + seed) % 7) as f32 - 3.0)
        .collect()
}

#[test]
fn batched_gemm_orders_each_tiles_two_halves_through_strided_views() {
    let (batch, m, k, n, tm) = (2usize, 8usize, 16usize, 8usize, 4usize);
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
    let run = Run {
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
    };
    let o = run.launch(&scratch("bgemm"));
    assert_golden(&o, 1);
    assert!(text(&o).contains("finished 8 tasks"), "{}", text(&o));
}
