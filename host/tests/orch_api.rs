//! Programs written in the C++ runtime's orchestration and kernel API
//! (`include/orch_api/`, `include/kernel_api/`, `docs/orchestration-api.md`), built with the
//! host's C++ compiler and run through `pto-launch run` on the simulator with
//! `--check-accesses`, each result checked against a golden value computed here:
//! `examples/orch_api/` vector (views, a 5-D reshape, runtime-allocated outputs, scopes), bgemm
//! (reshape, strided views, a tile written then accumulated), paged_attention (SPMD blocks
//! on both classes, one per head), mix (a kernel per lane of a MIX task, sync start), and
//! data_dependent (get_tensor_data steering how many tasks follow, set_tensor_data,
//! alloc_tensors, a dummy task, rt_report_fatal, a kernel checking its tensor's dtype). A missing dependency, a wrong block or sub-block index changes
//! the outputs, and the access check names tasks that touch a tile without an order. The
//! same programs but paged attention (its softmax calls libm's expf, and a kernel image has
//! no library) run on the fake NPU through `libpto_aicpu.so` too.

mod npu_util;
mod orch_api_util;

use orch_api_util::programs::{self, CLUSTERS};
use orch_api_util::{
    Arg, Dtype, Run, assert_golden, f32s, i64s, orchestration_compiler, root, scratch, text,
};

#[test]
fn vector_example_runs_views_and_runtime_allocated_outputs() {
    let run = programs::vector();
    let o = run.launch(&scratch("vector"));
    assert_golden(&o, 1);
    assert!(text(&o).contains("finished 5 tasks"), "{}", text(&o));
}

#[test]
fn batched_gemm_orders_each_tiles_two_halves_through_strided_views() {
    let run = programs::bgemm();
    let o = run.launch(&scratch("bgemm"));
    assert_golden(&o, 1);
    assert!(text(&o).contains("finished 8 tasks"), "{}", text(&o));
}

#[test]
fn paged_attention_runs_a_block_per_head_on_both_classes() {
    let run = programs::paged_attention();
    let o = run.launch(&scratch("paged-attention"));
    assert_golden(&o, 1);
    // Two sequences hold tokens: a QK and a softmax-PV task each, of a block per head.
    assert!(text(&o).contains("finished 4 tasks"), "{}", text(&o));
}

#[test]
fn a_mix_task_runs_a_kernel_per_lane_and_its_consumer_waits_for_every_lane() {
    let run = programs::mix();
    let o = run.launch(&scratch("mix"));
    assert_golden(&o, 3);
}

/// The data-dependent program's run with `limit` on the simulator, and its count.
fn data_dependent(limit: i64, name: &str) -> (std::process::Output, i64) {
    let (run, k) = programs::data_dependent(limit);
    (run.launch(&scratch(name)), k)
}

#[test]
fn a_value_a_kernel_computed_steers_how_many_tasks_follow() {
    let (o, k) = data_dependent(100, "data-dependent");
    assert_golden(&o, 1);
    assert_eq!(k, 21, "the count is neither 0 nor every element");
    // count, alloc_tensors' dummy, k bumps, the fence, store.
    let finished = format!("finished {} tasks", k + 4);
    assert!(text(&o).contains(&finished), "{}", text(&o));
}

#[test]
fn a_false_dispatch_predicate_skips_its_task_and_a_true_one_runs_it() {
    // data_dependent's tensors and kernels, its threshold (6) and base (500); no limit.
    let (mut run, k) = programs::data_dependent(100);
    run.args.remove(3);
    run.expect = vec![(1, i64s(&[500 + 101, k]))];
    run.orchestration = Some((root().join("host/tests/orch_api/predicated.cpp"), &[]));
    let o = run.launch(&scratch("predicated"));
    assert_golden(&o, 1);
    // count, alloc_tensors' dummy, four bumps, store.
    assert!(
        text(&o).contains("finished 7 tasks (2 skipped by their predicate)"),
        "{}",
        text(&o)
    );
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
        orchestration: Some((root().join("host/tests/orch_api/refusals.cpp"), &[])),
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
        "a TensorCreateInfo of 1 dimensions and 0 bytes",
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
fn explicit_dependencies_fail_to_compile_saying_why() {
    let dir = scratch("compile");
    for (call, sentence) in [
        (
            "a.set_dependencies(nullptr, 0u);",
            "finds dependencies through tensors only",
        ),
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
fn a_named_entry_without_a_config_runs_when_the_build_names_it() {
    let (x, y) = ([1.5f32, -2.0, 4.0, 8.0], [0.5f32, 2.0, -1.0, 0.25]);
    let sum: Vec<f32> = x.iter().zip(&y).map(|(a, b)| a + b).collect();
    let run = Run {
        program: "vector",
        kernels: &["add"],
        buffers: vec![f32s(&x), f32s(&y), vec![0; 16]],
        args: (0..3)
            .map(|b| Arg::Tensor(b, Dtype::F32, vec![4]))
            .collect(),
        expect: vec![(2, f32s(&sum))],
        dtype: "f32",
        clusters: CLUSTERS,
        orchestration: Some((
            root().join("host/tests/orch_api/named_entry.cpp"),
            &["-DPTO_ORCHESTRATION_ENTRY=build_sum"],
        )),
    };
    assert_golden(&run.launch(&scratch("named")), 1);
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

#[test]
fn a_graph_function_is_recorded_once_per_layer_and_replayed_for_the_next_token() {
    let check = |o: &std::process::Output| {
        assert_golden(o, 1);
        let all = text(o);
        // Each layer's first call records (and replays once); the second token replays.
        assert!(
            all.contains("graphs: 3 recorded, 6 calls replayed"),
            "{all}"
        );
        assert!(!all.contains("runs as ordinary tasks"), "{all}");
        // 5 activations allocated, then two tasks per layer per token.
        assert!(all.contains("finished 17 tasks"), "{all}");
    };
    check(&programs::layers().launch(&scratch("layers")));
    check(&programs::layers().launch_npu(&scratch("npu-layers"), &npu_util::fake_npu_flags()));
}

#[test]
fn a_scalar_a_graph_function_reads_as_a_number_is_part_of_its_identity() {
    // The layer reads its scale as a number before passing it on: the second token's scale
    // is a new identity, recorded again, and the answer is the same.
    let o = programs::layers_with(&["-DLAYERS_SCALE_AS_NUMBER"]).launch(&scratch("layers-f"));
    assert_golden(&o, 1);
    let all = text(&o);
    assert!(
        all.contains("graphs: 6 recorded, 6 calls replayed"),
        "{all}"
    );
}

#[test]
fn a_graph_function_that_reads_data_runs_as_ordinary_tasks_saying_so() {
    let o = programs::layers_with(&["-DLAYERS_READ_DATA"]).launch(&scratch("layers-reads"));
    assert_golden(&o, 1);
    let all = text(&o);
    assert!(
        all.contains("graphs: 0 recorded, 0 calls replayed"),
        "{all}"
    );
    // Once per identity (three layers), not per call.
    assert_eq!(
        all.matches("runs as ordinary tasks, not recorded: it reads a tensor's data")
            .count(),
        3,
        "{all}"
    );
    assert!(all.contains("finished 17 tasks"), "{all}");
}

#[test]
fn the_vector_example_runs_on_the_fake_npu() {
    let o = programs::vector().launch_npu(&scratch("npu-vector"), &npu_util::fake_npu_flags());
    assert_golden(&o, 1);
}

#[test]
fn the_batched_gemm_runs_on_the_fake_npu() {
    let o = programs::bgemm().launch_npu(&scratch("npu-bgemm"), &npu_util::fake_npu_flags());
    assert_golden(&o, 1);
}

#[test]
fn the_mix_task_runs_on_the_fake_npu() {
    let o = programs::mix().launch_npu(&scratch("npu-mix"), &npu_util::fake_npu_flags());
    assert_golden(&o, 3);
}

#[test]
fn the_data_dependent_orchestration_runs_on_the_fake_npu() {
    let (run, _) = programs::data_dependent(100);
    let o = run.launch_npu(&scratch("npu-data-dependent"), &npu_util::fake_npu_flags());
    assert_golden(&o, 1);
}
