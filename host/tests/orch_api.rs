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

use orch_api_util::{
    Arg, Dtype, Run, assert_golden, f32s, i32s, i64s, orchestration_compiler, root, scratch, text,
};

/// Clusters of every run: 4 AIC and 8 AIV cores, so a task of 4 blocks fits either class.
const CLUSTERS: u32 = 4;

#[test]
fn vector_example_runs_views_and_runtime_allocated_outputs() {
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
        orchestration: None,
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
        orchestration: None,
    };
    let o = run.launch(&scratch("bgemm"));
    assert_golden(&o, 1);
    assert!(text(&o).contains("finished 8 tasks"), "{}", text(&o));
}

/// Small fractional values (multiples of 1/8), varying with `seed`.
fn values(len: usize, seed: usize) -> Vec<f32> {
    (0..len)
        .map(|i| ((i * 37 + seed * 11) % 17) as f32 / 8.0 - 1.0)
        .collect()
}

#[test]
fn paged_attention_runs_a_block_per_head_on_both_classes() {
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
    let run = Run {
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
    };
    let o = run.launch(&scratch("paged-attention"));
    assert_golden(&o, 1);
    // Two sequences hold tokens: a QK and a softmax-PV task each, of a block per head.
    assert!(text(&o).contains("finished 4 tasks"), "{}", text(&o));
}

#[test]
fn a_mix_task_runs_a_kernel_per_lane_and_its_consumer_waits_for_every_lane() {
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
    let run = Run {
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
    };
    let o = run.launch(&scratch("mix"));
    assert_golden(&o, 3);
}

/// x of the data-dependent program, and how many of its elements reach `threshold`.
fn counted(n: usize, threshold: i64) -> (Vec<i64>, i64) {
    let x: Vec<i64> = (0..n as i64).map(|i| (i * 7) % 23 - 5).collect();
    let k = x.iter().filter(|&&v| v >= threshold).count() as i64;
    (x, k)
}

/// The data-dependent program's run over 40 elements with `limit`.
fn data_dependent(limit: i64, name: &str) -> (std::process::Output, i64) {
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
    (run.launch(&scratch(name)), k)
}

#[test]
fn a_value_a_kernel_computed_steers_how_many_tasks_follow() {
    let (o, k) = data_dependent(100, "data-dependent");
    assert_golden(&o, 1);
    assert_eq!(k, 21, "the count is neither 0 nor every element");
    // count, the dummy, k bumps, store.
    let finished = format!("finished {} tasks", k + 3);
    assert!(text(&o).contains(&finished), "{}", text(&o));
}

#[test]
fn rt_report_fatal_fails_the_run_with_its_message_and_code() {
    let (o, k) = data_dependent(3, "fatal");
    let all = text(&o);
    assert!(!o.status.success(), "{all}");
    assert!(
        all.contains(&format!("count {k} is past the limit 3")),
        "{all}"
    );
    assert!(all.contains("returned 9"), "the code it gave: {all}");
}

/// The refusal orchestration (`host/tests/orch_api/refusals.cpp`) in `mode`: what it printed.
fn refused(mode: i64) -> String {
    let run = Run {
        program: "vector",
        kernels: &["add"],
        buffers: vec![vec![0; 4 * 243]],
        args: vec![Arg::Tensor(0, Dtype::F32, vec![3; 5]), Arg::Scalar(mode)],
        expect: vec![],
        dtype: "f32",
        clusters: CLUSTERS,
        orchestration: Some(root().join("host/tests/orch_api/refusals.cpp")),
    };
    let o = run.launch(&scratch(&format!("refused-{mode}")));
    let all = text(&o);
    assert!(!o.status.success(), "mode {mode} is refused: {all}");
    assert!(all.contains("returned 5"), "PTO2_ERROR_INVALID_ARGS: {all}");
    all
}

#[test]
fn what_the_runtime_cannot_express_is_refused_at_run_time_saying_why() {
    let says = [
        "this runtime runs an AIC alone, an AIV alone, or all three lanes",
        "a MANUAL scope: this runtime finds dependencies through tensors only",
        "a view or reshape that did not fit its tensor",
        "the runtime's tiles have 4 dimensions",
        "get_ref past a submit's outputs",
    ];
    for (mode, sentence) in says.iter().enumerate() {
        let all = refused(mode as i64);
        assert!(
            all.contains(sentence),
            "mode {mode} says {sentence:?}: {all}"
        );
    }
}

#[test]
fn explicit_dependencies_and_predicates_fail_to_compile_saying_why() {
    let dir = scratch("compile");
    for (call, sentence) in [
        (
            "a.set_dependencies(nullptr, 0u);",
            "finds dependencies through tensors only",
        ),
        ("a.set_predicate(0);", "dispatches every task it is given"),
        ("a.add_no_dep(t);", "tracks every tensor a task names"),
    ] {
        let src = dir.join("unmapped.cpp");
        std::fs::write(
            &src,
            format!(
                "#include \"pto_orchestration_api.h\"\n\
                 extern \"C\" void aicpu_orchestration_entry(const ChipTaskArgs &args) {{\n\
                 const ChipTensor &t = args.tensor(0).ref(); CoreTaskArgs a; {call}\n}}\n"
            ),
        )
        .unwrap();
        let o = orchestration_compiler(&["-fsyntax-only"])
            .arg(&src)
            .output()
            .expect("the compiler runs");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{call} does not compile");
        assert!(err.contains(sentence), "{call} says {sentence:?}: {err}");
    }
}

#[test]
fn an_argument_count_other_than_the_configs_is_refused() {
    let shape = vec![8];
    let run = Run {
        program: "vector",
        kernels: &["add", "scale", "mul"],
        buffers: vec![vec![0; 32], vec![0; 32]],
        args: vec![
            Arg::Tensor(0, Dtype::F32, shape.clone()),
            Arg::Tensor(1, Dtype::F32, shape),
        ],
        expect: vec![],
        dtype: "f32",
        clusters: CLUSTERS,
        orchestration: None,
    };
    let o = run.launch(&scratch("count"));
    let all = text(&o);
    assert!(!o.status.success(), "{all}");
    assert!(
        all.contains("2 arguments (2 tensors, 0 scalars); aicpu_orchestration_config expects 3"),
        "{all}"
    );
}
