//! The decode layer recorded once as a graph and replayed layer after layer on the simulator:
//! every task of every instance finishes, and the layers are chained by the activations they
//! share (each layer's input is the previous one's output).

use pto_runtime_core::{Bindings, Config};
use pto_sim::SimOptions;
use pto_workloads::decode_layer::{DecodeBuffers, DecodeShape, record_decode_layer};
use pto_workloads::scene::{ARENA_BASE, Scene, SceneSize};

#[test]
fn a_recorded_decode_layer_replays_layer_after_layer_and_every_task_finishes() {
    let shape = DecodeShape::SMALL;
    let layers = 3u64;
    let cfg = Config {
        rings: 1,
        task_window: 256,
        aic_cores: 2,
        aiv_cores: 4,
        max_deps: 64,
        ..Config::default()
    };
    let span = DecodeBuffers::new(&shape, 0)
        .v_pool
        .end()
        .next_multiple_of(1 << 20);
    let out = pto_sim::run(
        cfg,
        Scene::DecodeLayer.kernels(),
        SimOptions::default(),
        |o| {
            let mut vecs = None;
            let graph = record_decode_layer(o, &mut vecs, &shape, ARENA_BASE).unwrap();
            assert_eq!(graph.tasks() as u64, shape.tasks());
            assert_eq!(graph.boundaries().len(), 10);
            let mut input = DecodeBuffers::new(&shape, ARENA_BASE).x;
            let mut last = None;
            for l in 0..layers {
                let mut bound = DecodeBuffers::new(&shape, ARENA_BASE + l * span).boundaries();
                bound[0] = input; // this layer reads the last one's output
                let instance = o
                    .scope(|o| o.replay(&graph, &Bindings::new(&bound)))
                    .unwrap()
                    .unwrap();
                assert_eq!(u64::from(instance.len()), shape.tasks());
                input = bound[1];
                last = instance.last();
            }
            last
        },
    )
    .unwrap();
    assert!(out.value.is_some());
    assert_eq!(out.report.finished, layers * shape.tasks());
    assert_eq!(Scene::DecodeLayer.tasks(SceneSize::Small), shape.tasks());
}
