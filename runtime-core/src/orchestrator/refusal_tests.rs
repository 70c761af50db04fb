//! Which refusal a submit reports when a task has more than one problem: a bad tile comes
//! before every check after the tiles' (though the tiles are checked last, as the map adds
//! them), and is refused without waiting for a full window.

use crate::error::SubmitError;
use crate::ids::{KernelId, Seq, TaskId, WorkerClass};
use crate::orchestrator::TaskSpec;
use crate::orchestrator::tensor_map::TensorArg;
use crate::region::config::Config;
use crate::tensor::arg::Buffer;
use crate::tensor::tile::{Tile, TileError};
use crate::testing::rig::{Rig, aiv};

const BUF: Buffer = Buffer::new(0x1000, 0x1000);

/// Row `r` (64 bytes) of `BUF`.
fn row(r: u64) -> Tile {
    Tile::contiguous(0x1000 + r * 64, 4, 16)
}

/// A tile past `BUF`'s end.
fn outside() -> TensorArg {
    TensorArg::input(BUF, Tile::contiguous(0x2000, 4, 16))
}

fn is_bad_tile(e: &SubmitError, index: usize) -> bool {
    matches!(e, SubmitError::BadTensor { index: i, error: TileError::OutsideBuffer { .. } } if *i == index)
}

#[test]
fn a_bad_tile_is_reported_before_the_checks_that_follow_the_tiles() {
    // A clock of 100 µs a read: a submit that waited would give up after 1 ms.
    let cfg = Config {
        submit_timeout_us: 1_000,
        task_window: 4,
        max_deps: 2,
        aic_cores: 0,
        aiv_cores: 2,
        ..Config::tiny()
    };
    let rig = Rig::new(cfg, 100);
    let mut o = rig.orchestrator();
    let stale = [TaskId::new(cfg.epoch.wrapping_add(1), 0, Seq(0))];
    let args = [TensorArg::input(BUF, row(0)), outside()];
    let unknown = TaskSpec::new(KernelId(99), WorkerClass::Aiv);
    let no_core = TaskSpec::new(KernelId(0), WorkerClass::Aic);
    let cases: [TaskSpec<'_>; 3] = [unknown, aiv(&stale), no_core];
    for spec in cases {
        // Alone, the other problem is what is reported; with a bad tile, the tile.
        let alone = o.submit(&spec).unwrap_err();
        assert!(!matches!(alone, SubmitError::BadTensor { .. }), "{alone:?}");
        let e = o.submit(&spec.tensors(&args)).unwrap_err();
        assert!(is_bad_tile(&e, 1), "{e:?} for {spec:?}");
    }
    // Three writers of rows 0..3, then a task that would wait for all three (two allowed)
    // and has a bad tile after them: the tile.
    for r in 0..3 {
        o.submit(&aiv(&[]).tensors(&[TensorArg::output(BUF, row(r))]))
            .unwrap();
    }
    let many = [0, 1, 2].map(|r| TensorArg::input(BUF, row(r)));
    let e = o.submit(&aiv(&[]).tensors(&many)).unwrap_err();
    assert!(
        std::format!("{e}").contains("exceed the 2 a task may have: raise `max_deps`"),
        "{e}"
    );
    let mut bad = [many[0], many[1], many[2], outside()];
    let e = o.submit(&aiv(&[]).tensors(&bad)).unwrap_err();
    assert!(is_bad_tile(&e, 3), "{e:?}");
    assert_eq!(o.tensor_entries(), 3, "nothing of the refused tasks stayed");
    // A full window (4 tasks live, none retiring): a bad tile is refused at once, a good
    // task waits and gives up.
    o.submit(&aiv(&[])).unwrap();
    bad[0] = outside();
    let e = o.submit(&aiv(&[]).tensors(&bad)).unwrap_err();
    assert!(is_bad_tile(&e, 0), "{e:?}");
    let e = o.submit(&aiv(&[]).tensors(&many[..1])).unwrap_err();
    assert!(matches!(e, SubmitError::WindowFull { .. }), "{e:?}");
    assert_eq!(o.submitted(), 4);
}

#[test]
fn a_tensor_whose_dtype_is_not_its_element_size_is_refused_naming_both() {
    let rig = Rig::new(Config::tiny(), 100);
    let mut o = rig.orchestrator();
    let f16_of_4 = TensorArg::input(BUF, row(0)).typed(crate::Dtype::F16);
    let e = o.submit(&aiv(&[]).tensors(&[f16_of_4])).unwrap_err();
    assert_eq!(
        e,
        SubmitError::BadTensor {
            index: 0,
            error: TileError::DtypeSize {
                dtype: crate::Dtype::F16,
                elem: 4
            }
        }
    );
    assert!(
        std::format!("{e}").contains("a tensor of f16 (2 bytes each) with 4-byte elements"),
        "{e}"
    );
    let f32s = TensorArg::input(BUF, row(0)).typed(crate::Dtype::F32);
    o.submit(&aiv(&[]).tensors(&[f32s])).unwrap();
}
