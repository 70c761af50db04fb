//! The orchestrator's own reads and writes of tiles (`Orchestrator::settle`), against the
//! scripted machine: it waits for exactly the tasks a task with the same argument would.

use crate::error::SubmitError;
use crate::ids::{KernelId, WorkerClass};
use crate::orchestrator::TaskSpec;
use crate::region::config::Config;
use crate::sync::Ordering;
use crate::tensor::arg::{Buffer, TensorArg};
use crate::tensor::tile::Tile;
use crate::testing::rig::{Rig, steps};

const X: Buffer = Buffer::new(0x4000, 256);

fn tile() -> Tile {
    Tile::contiguous(X.base, 8, 32)
}

/// A machine of two AIV cores whose orchestrator gives up on a tile after 100 clock ticks
/// (the scripted clock moves 10 per read).
fn machine() -> Config {
    Config {
        aic_cores: 0,
        aiv_cores: 2,
        submit_timeout_us: 100,
        ..Config::tiny()
    }
}

fn task(arg: &[TensorArg]) -> TaskSpec<'_> {
    TaskSpec::new(KernelId(0), WorkerClass::Aiv).tensors(arg)
}

#[test]
fn a_read_waits_for_the_writer_and_names_it_when_it_does_not_finish() {
    let rig = Rig::new(machine(), 10);
    let (_, p, mut o, mut s) = rig.start();
    let w = [TensorArg::output(X, tile())];
    let writer = o.submit(&task(&w)).unwrap();
    s.step();
    match o.settle(&TensorArg::input(X, tile())) {
        Err(SubmitError::TileBusy { task, waited_us }) => {
            assert_eq!(task, writer);
            assert!(waited_us > 100, "{waited_us}");
        }
        other => panic!("{other:?}"),
    }
    p.fin(0, 1);
    steps(&mut s, 3);
    o.settle(&TensorArg::input(X, tile())).unwrap();
    assert!(
        p.invalidated.lock().unwrap().contains(&X.base),
        "the tile's bytes are invalidated for the reader"
    );
}

#[test]
fn a_read_does_not_wait_for_readers_and_a_write_does() {
    let rig = Rig::new(machine(), 10);
    let (_, p, mut o, mut s) = rig.start();
    let r = [TensorArg::input(X, tile())];
    let reader = o.submit(&task(&r)).unwrap();
    s.step();
    o.settle(&TensorArg::input(X, tile()))
        .expect("readers leave the bytes as they are");
    let half = Tile::contiguous(X.base + 128, 8, 16);
    match o.settle(&TensorArg::output(X, half)) {
        Err(SubmitError::TileBusy { task, .. }) => assert_eq!(task, reader),
        other => panic!("a write waits for the reader: {other:?}"),
    }
    let elsewhere = Buffer::new(0x8000, 64);
    o.settle(&TensorArg::output(
        elsewhere,
        Tile::contiguous(0x8000, 8, 8),
    ))
    .expect("another buffer waits for nobody");
    p.fin(0, 1);
    steps(&mut s, 3);
    o.settle(&TensorArg::output(X, half)).unwrap();
    o.wrote(&TensorArg::output(X, half)).unwrap();
}

#[test]
fn a_tile_whose_writer_was_cancelled_is_refused_and_a_bad_tile_too() {
    let rig = Rig::new(machine(), 10);
    let (t, p, mut o, mut s) = rig.start();
    let w = [TensorArg::output(X, tile())];
    let writer = o.submit(&task(&w)).unwrap();
    s.step();
    // As its scheduler does when a transfer it waited on failed.
    t.slot(t.gslot(writer)).failed.store(1, Ordering::Relaxed);
    p.fin(0, 1);
    steps(&mut s, 3);
    assert_eq!(
        o.settle(&TensorArg::input(X, tile())),
        Err(SubmitError::TileCancelled { task: writer })
    );
    let outside = TensorArg::input(X, Tile::contiguous(X.base + 200, 8, 32));
    assert!(matches!(
        o.settle(&outside),
        Err(SubmitError::BadTensor { index: 0, .. })
    ));
    assert!(matches!(
        o.wrote(&outside),
        Err(SubmitError::BadTensor { .. })
    ));
}
