//! The orchestrator reading and writing data its tasks produce, on the simulator's threads:
//! `settle` waits for the kernels that write a tile (and, before a write, those that read
//! it), so a value a kernel computed steers what the orchestration submits next.

use std::time::Duration;

use pto_runtime_core::{
    Buffer, Config, KernelId, SubmitError, TaskSpec, TensorArg, Tile, WorkerClass,
};
use pto_sim::{KernelTable, SimOptions, run};

/// `[threshold]`, tensors `[x (read), c (written)]`: after 20 ms, `c[0]` = how many words of
/// `x` are at least the threshold.
const COUNT: KernelId = KernelId(0);
/// Tensors `[y (read and written)]`: `y[0] += 1`.
const BUMP: KernelId = KernelId(1);
/// Tensors `[x (read), z (written)]`: after 20 ms, copies `x` to `z`.
const COPY: KernelId = KernelId(2);

const N: usize = 16;

fn kernels() -> KernelTable {
    KernelTable::new()
        .with(COUNT, "count", |ctx| {
            std::thread::sleep(Duration::from_millis(20));
            let (x, c) = (ctx.tensor(0)?, ctx.tensor(1)?);
            let threshold = ctx.arg(0)?;
            let n = x.read_u64s()?.iter().filter(|&&v| v >= threshold).count();
            c.write_u64s(&[n as u64])?;
            Ok(())
        })
        .with(BUMP, "bump", |ctx| {
            let y = ctx.tensor(0)?;
            let v = y.read_u64s()?[0];
            y.write_u64s(&[v + 1])?;
            Ok(())
        })
        .with(COPY, "copy", |ctx| {
            std::thread::sleep(Duration::from_millis(20));
            let (x, z) = (ctx.tensor(0)?, ctx.tensor(1)?);
            z.write_u64s(&x.read_u64s()?)?;
            Ok(())
        })
}

fn words(b: Buffer, n: usize) -> Tile {
    Tile::contiguous(b.base, 8, n as u32)
}

#[test]
fn a_count_a_kernel_computed_decides_how_many_tasks_follow() {
    let cfg = Config {
        aic_cores: 1,
        aiv_cores: 2,
        ..Config::tiny()
    };
    let out = run(cfg, kernels(), SimOptions::default(), |o| {
        let mem = o.platform().memory();
        let x = mem.alloc_buffer(8 * N, 64).unwrap();
        let c = mem.alloc_buffer(8, 64).unwrap();
        let y = mem.alloc_buffer(8, 64).unwrap();
        let values: Vec<u64> = (0..N as u64).map(|i| i * 10).collect();
        mem.write_u64s(x.base, &values).unwrap();
        mem.write_u64s(y.base, &[0]).unwrap();
        let t = [
            TensorArg::input(x, words(x, N)),
            TensorArg::output(c, words(c, 1)),
        ];
        o.submit(
            &TaskSpec::new(COUNT, WorkerClass::Aiv)
                .args(&[75])
                .tensors(&t),
        )
        .unwrap();
        // The count lands 20 ms from now: read too early, it would be 0.
        o.settle(&TensorArg::input(c, words(c, 1))).unwrap();
        let mut k = [0u64];
        mem.read_u64s(c.base, &mut k).unwrap();
        let bump = [TensorArg::inout(y, words(y, 1))];
        for _ in 0..k[0] {
            o.submit(&TaskSpec::new(BUMP, WorkerClass::Aiv).tensors(&bump))
                .unwrap();
        }
        o.settle(&TensorArg::input(y, words(y, 1))).unwrap();
        let mut bumped = [0u64];
        mem.read_u64s(y.base, &mut bumped).unwrap();
        (k[0], bumped[0])
    })
    .unwrap();
    assert_eq!(out.value, (8, 8), "8 of 0, 10, .., 150 are at least 75");
    assert_eq!(out.report.finished, 9);
}

#[test]
fn a_write_waits_for_the_readers_and_the_next_reader_sees_it() {
    let out = run(Config::tiny(), kernels(), SimOptions::default(), |o| {
        let mem = o.platform().memory();
        let x = mem.alloc_buffer(8 * N, 64).unwrap();
        let (z1, z2) = (
            mem.alloc_buffer(8 * N, 64).unwrap(),
            mem.alloc_buffer(8 * N, 64).unwrap(),
        );
        mem.write_u64s(x.base, &[1; N]).unwrap();
        let copy = |z: Buffer| {
            [
                TensorArg::input(x, words(x, N)),
                TensorArg::output(z, words(z, N)),
            ]
        };
        let first = copy(z1);
        o.submit(&TaskSpec::new(COPY, WorkerClass::Aiv).tensors(&first))
            .unwrap();
        // The copy reads x for 20 ms: the new values wait for it.
        let whole = TensorArg::output(x, words(x, N));
        o.settle(&whole).unwrap();
        mem.write_u64s(x.base, &[2; N]).unwrap();
        o.wrote(&whole).unwrap();
        let second = copy(z2);
        o.submit(&TaskSpec::new(COPY, WorkerClass::Aiv).tensors(&second))
            .unwrap();
        (z1, z2)
    })
    .unwrap();
    let (z1, z2) = out.value;
    let (mut a, mut b) = ([0u64; N], [0u64; N]);
    out.memory.read_u64s(z1.base, &mut a).unwrap();
    out.memory.read_u64s(z2.base, &mut b).unwrap();
    assert_eq!((a, b), ([1; N], [2; N]));
}

#[test]
fn a_tile_still_being_written_past_the_timeout_names_its_writer() {
    let cfg = Config {
        submit_timeout_us: 2_000,
        ..Config::tiny()
    };
    let out = run(cfg, kernels(), SimOptions::default(), |o| {
        let mem = o.platform().memory();
        let x = mem.alloc_buffer(8 * N, 64).unwrap();
        let c = mem.alloc_buffer(8, 64).unwrap();
        let t = [
            TensorArg::input(x, words(x, N)),
            TensorArg::output(c, words(c, 1)),
        ];
        let writer = o
            .submit(
                &TaskSpec::new(COUNT, WorkerClass::Aiv)
                    .args(&[0])
                    .tensors(&t),
            )
            .unwrap();
        (writer, o.settle(&TensorArg::input(c, words(c, 1))))
    })
    .unwrap();
    let (writer, settled) = out.value;
    match settled {
        Err(e @ SubmitError::TileBusy { task, .. }) => {
            assert_eq!(task, writer);
            assert!(e.to_string().contains("submit_timeout_us"), "{e}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        out.report.finished, 1,
        "the run went on and the writer finished"
    );
}
