//! Every scene, at its small size, runs to completion on the simulator with the dependencies
//! its data implies.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use pto_runtime_core::{Config, KernelId, TaskId};
use pto_sim::{DepGraph, KernelError, KernelTable, SimOptions};
use pto_workloads::Submitter;
use pto_workloads::decode_layer::{DecodeShape, kernel};
use pto_workloads::gemm;
use pto_workloads::scene::{Scene, SceneSize};

/// The longest a gated kernel waits for the gate.
const GATE_WAIT: Duration = Duration::from_secs(30);

/// `scene`'s kernels, each of which first waits until `gate` opens, so no task finishes (and
/// none retires from the tensor map) before the orchestrator has submitted them all: every
/// dependency the data implies is then found, whatever the timing.
fn gated_kernels(scene: Scene, gate: &Arc<AtomicBool>) -> KernelTable {
    let names = scene.kernels();
    let mut t = KernelTable::new();
    for id in (0..256).map(KernelId) {
        let Some(name) = names.name(id) else {
            continue;
        };
        let gate = gate.clone();
        t.register(id, name, move |_| {
            let start = Instant::now();
            while !gate.load(Ordering::Acquire) {
                if start.elapsed() > GATE_WAIT {
                    return Err(KernelError::new(
                        KernelError::FIRST_USER_CODE,
                        "the gate stayed shut",
                    ));
                }
                std::thread::yield_now();
            }
            Ok(())
        });
    }
    t
}

/// Runs `scene` small, recording, its kernels held until every task is submitted; checks
/// every task submitted finished.
fn run(scene: Scene) -> DepGraph {
    let want = scene.tasks(SceneSize::Small);
    let cfg = Config {
        rings: 1,
        task_window: 512,
        aic_cores: 2,
        aiv_cores: 4,
        max_tensors: 4,
        max_args: 2,
        // A replayed layer's first tasks wait for every task of the last layer that touched
        // a boundary they enter.
        max_deps: 32,
        ..Config::tiny()
    };
    assert!(
        want < u64::from(cfg.task_window),
        "every task fits the window"
    );
    let gate = Arc::new(AtomicBool::new(false));
    let out = pto_sim::run(
        cfg,
        gated_kernels(scene, &gate),
        SimOptions::default(),
        |o| {
            let mut s = Submitter::recording();
            let r = scene.submit(SceneSize::Small, &mut s, o).map(|()| s);
            gate.store(true, Ordering::Release);
            r
        },
    )
    .unwrap();
    let s = out.value.unwrap();
    assert_eq!(s.submitted(), want, "{scene:?}: tasks submitted");
    assert_eq!(out.report.finished, want, "{scene:?}: tasks finished");
    let g = s.into_graph().unwrap();
    assert_eq!(g.tasks().len() as u64, want);
    assert!(
        g.tasks().iter().flat_map(|t| &t.deps).all(|d| d.live),
        "{scene:?}: a producer finished before the gate opened"
    );
    g
}

/// Each task's kernel and its producers' kernels, by position.
fn edges(g: &DepGraph) -> Vec<(KernelId, Vec<(usize, KernelId)>)> {
    let at: HashMap<TaskId, usize> = g
        .tasks()
        .iter()
        .enumerate()
        .map(|(i, t)| (t.id, i))
        .collect();
    g.tasks()
        .iter()
        .map(|t| {
            let mut p: Vec<(usize, KernelId)> = t
                .deps
                .iter()
                .map(|d| (at[&d.producer], g.tasks()[at[&d.producer]].kernel))
                .collect();
            p.sort_by_key(|x| x.0);
            (t.kernel, p)
        })
        .collect()
}

#[test]
fn batched_gemm_epilogues_wait_for_their_last_k_step_and_gemms_are_independent() {
    let e = edges(&run(Scene::BatchedGemm));
    // Small: 2 GEMMs of 2 x 2 tiles, 2 K steps and an epilogue each.
    for (i, (k, producers)) in e.iter().enumerate() {
        let in_tile = i % 3;
        let want: Vec<(usize, KernelId)> = match in_tile {
            0 => vec![],
            1 => vec![(i - 1, gemm::MATMUL)],
            _ => vec![(i - 1, gemm::MATMUL)],
        };
        let kernel = if in_tile == 2 {
            gemm::EPILOGUE
        } else {
            gemm::MATMUL
        };
        assert_eq!((*k, producers), (kernel, &want), "task {i}");
    }
}

#[test]
fn paged_attention_layouts_change_scopes_not_dependencies() {
    let per_layer = edges(&run(Scene::PagedAttention));
    let per_head = edges(&run(Scene::PagedAttentionPerHead));
    assert_eq!(per_layer, per_head);
    // Small: 2 layers x 2 heads x (2 blocks x 4 + 1). The second layer's QKs wait for the
    // first layer's normalize of the same head; the first layer's have no producer.
    let per_head_tasks = 9;
    for h in 0..2 {
        for j in 0..2 {
            let qk0 = h * per_head_tasks + 4 * j;
            assert!(per_layer[qk0].1.is_empty());
            let qk1 = (2 + h) * per_head_tasks + 4 * j;
            let norm = h * per_head_tasks + per_head_tasks - 1;
            assert_eq!(
                per_layer[qk1].1,
                [(norm, KernelId(4))],
                "layer 1 head {h} block {j}"
            );
        }
    }
}

#[test]
fn the_decode_layer_wires_its_fan_in_from_the_data() {
    let e = edges(&run(Scene::DecodeLayer));
    let sh = DecodeShape::SMALL;
    assert!(
        e[0].1.is_empty(),
        "the first norm reads the layer's input only"
    );
    for (i, (k, p)) in e.iter().enumerate().skip(1) {
        assert!(!p.is_empty(), "task {i} (kernel {k:?}) waits for nothing");
    }
    let of = |k: KernelId| e.iter().enumerate().filter(move |(_, t)| t.0 == k);
    // The cache write of each KV head feeds the QK of the sequence's last block only.
    let fed: Vec<usize> = of(kernel::QK)
        .filter(|(_, t)| t.1.iter().any(|p| p.1 == kernel::KV_WRITE))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(fed.len(), sh.kv_heads);
    // Each QK reads its group's queries: the RoPE tiles they span.
    let group = sh.q_heads / sh.kv_heads * sh.head_dim / sh.proj_tn;
    for (i, t) in of(kernel::QK) {
        let ropes = t.1.iter().filter(|p| p.1 == kernel::ROPE).count();
        assert_eq!(ropes, group, "QK {i}");
    }
    // Each residual chunk adds the output tiles it spans (their last K steps).
    let tiles = sh.hidden / sh.residual_chunks / sh.proj_tn;
    for (i, t) in of(kernel::RESIDUAL).take(sh.residual_chunks) {
        let o = t.1.iter().filter(|p| p.1 == kernel::O_PROJ).count();
        assert_eq!(o, tiles, "residual {i}");
    }
    // The down projection's first K steps wait for the SwiGLU chunks their block spans.
    let chunks = sh.down_tk / sh.gate_up_tn;
    for (i, t) in of(kernel::DOWN).filter(|(_, t)| t.1.iter().all(|p| p.1 != kernel::DOWN)) {
        assert_eq!(
            t.1.iter().filter(|p| p.1 == kernel::SWIGLU).count(),
            chunks,
            "down {i}"
        );
    }
}

#[test]
fn the_full_decode_layer_has_about_540_tasks() {
    assert_eq!(DecodeShape::QWEN3_14B.tasks(), 546);
}

#[test]
fn every_full_scene_runs_to_completion() {
    let cfg = Config {
        rings: 1,
        task_window: 2048,
        aic_cores: 2,
        aiv_cores: 4,
        max_tensors: 4,
        max_args: 2,
        // The moe's combine waits for every expert's tile: 16 producers.
        max_deps: 16,
        ..Config::tiny()
    };
    for scene in Scene::ALL {
        let out = pto_sim::run(cfg, scene.kernels(), SimOptions::default(), |o| {
            let mut s = Submitter::new();
            scene
                .submit(SceneSize::Full, &mut s, o)
                .map(|()| s.submitted())
        })
        .unwrap();
        let want = scene.tasks(SceneSize::Full);
        assert_eq!(out.value.unwrap(), want, "{scene:?}");
        assert_eq!(out.report.finished, want, "{scene:?}");
    }
}

/// Whether task `to` comes after task `from` in `e` (directly or through others).
fn after(e: &[(KernelId, Vec<(usize, KernelId)>)], from: usize, to: usize) -> bool {
    let mut stack = vec![to];
    let mut seen = vec![false; e.len()];
    while let Some(t) = stack.pop() {
        for &(p, _) in &e[t].1 {
            if p == from {
                return true;
            }
            if p > from && !seen[p] {
                seen[p] = true;
                stack.push(p);
            }
        }
    }
    false
}

#[test]
fn replayed_decode_steps_keep_every_order_of_the_same_steps_submitted_one_by_one() {
    let replayed = edges(&run(Scene::DecodeSteps));
    let fresh = edges(&run(Scene::DecodeStepsFresh));
    assert_eq!(replayed.len(), fresh.len());
    let layer = DecodeShape::SMALL.tasks() as usize;
    for (i, ((k, rp), (kf, fp))) in replayed.iter().zip(&fresh).enumerate() {
        assert_eq!(k, kf, "task {i}: the same kernel in the same place");
        // Every order of the one-by-one submit, directly or through other tasks.
        for &(p, _) in fp {
            assert!(
                after(&replayed, p, i),
                "task {i} no longer comes after {p}: {rp:?}"
            );
        }
        // A replay sees a boundary whole: its only further orders are between layers.
        for &(p, _) in rp {
            assert!(
                p / layer != i / layer || after(&fresh, p, i),
                "task {i}: an order after {p} inside its own layer"
            );
        }
    }
    // Layers chain through the activations: the second token's first layer comes after the
    // first token's last.
    assert!(after(&replayed, 2 * layer - 1, 2 * layer + 1));
}
