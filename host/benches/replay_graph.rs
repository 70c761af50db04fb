//! Replaying a recorded graph against submitting its tasks one by one: the orchestrator alone,
//! on one thread, over the qwen3-14b decode layer (546 tasks), eight layers a run.
//!
//! `cargo bench -p pto-host --bench replay_graph` prints ns per task of each way (medians of
//! 11 interleaved runs). `--once submit|replay` runs one way once, for callgrind (see
//! scripts/instructions). The recording itself (once per run) is left out of the replay's
//! figures: the capture and record happen before the timed loop.

use std::time::Instant;

use pto_runtime_core::{Bindings, Config, RegionLayout, Runtime};
use pto_sim::Region;
use pto_workloads::Submitter;
use pto_workloads::decode_layer::{
    DecodeBuffers, DecodeShape, record_decode_layer, submit_decode_layer,
};
use pto_workloads::scene::ARENA_BASE;

mod common;
use common::Loopback;

const LAYERS: u64 = 8;
const SHAPE: DecodeShape = DecodeShape::QWEN3_14B;

fn config() -> Config {
    Config {
        rings: 1,
        task_window: 8_192,
        aic_cores: 24,
        aiv_cores: 48,
        schedulers: 1,
        max_deps: 64,
        ..Config::default()
    }
}

/// One run: `LAYERS` decode layers submitted one by one, or replayed from one recording.
/// Returns ns per task of the part that submits.
fn run(replay: bool) -> f64 {
    let cfg = config();
    let mut region = Region::new(RegionLayout::new(&cfg).unwrap().size()).unwrap();
    let rt = Runtime::init(region.bytes(), cfg).unwrap();
    // No scheduler runs: nothing retires, so the heap holds every layer's buffers.
    let p = Loopback::new(cfg.cores()).with_heap(0x100_0000_0000, 1 << 32);
    let mut o = rt.orchestrator(&p).unwrap();
    let tasks = LAYERS * SHAPE.tasks();
    // Each layer's buffers in an arena of its own, as the layers of a model are.
    let base = |layer: u64| ARENA_BASE + layer * arena_span();
    if replay {
        let mut vecs = None;
        let graph = record_decode_layer(&mut o, &mut vecs, &SHAPE, base(0)).unwrap();
        let bound: Vec<_> = (0..LAYERS)
            .map(|l| DecodeBuffers::new(&SHAPE, base(l)).boundaries())
            .collect();
        let start = Instant::now();
        for b in &bound {
            o.scope(|o| o.replay(&graph, &Bindings::new(b)))
                .unwrap()
                .unwrap();
        }
        start.elapsed().as_nanos() as f64 / tasks as f64
    } else {
        let start = Instant::now();
        let mut s = Submitter::new();
        for l in 0..LAYERS {
            submit_decode_layer(&mut s, &mut o, &SHAPE, base(l)).unwrap();
        }
        assert_eq!(s.submitted(), tasks);
        start.elapsed().as_nanos() as f64 / tasks as f64
    }
}

/// Bytes of one layer's arena, rounded up to 1 MiB.
fn arena_span() -> u64 {
    let b = DecodeBuffers::new(&SHAPE, 0);
    b.v_pool.end().next_multiple_of(1 << 20)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(i) = args.iter().position(|a| a == "--once") {
        let replay = args.get(i + 1).map(String::as_str) == Some("replay");
        println!("{:.0} ns/task", run(replay));
        return;
    }
    let (mut one, mut rep) = (Vec::new(), Vec::new());
    for _ in 0..11 {
        one.push(run(false));
        rep.push(run(true));
    }
    let (one, rep) = (median(one), median(rep));
    println!(
        "decode layer x {LAYERS}: one by one {one:.0} ns/task, replayed {rep:.0} ns/task ({:.2}x)",
        rep / one
    );
}
