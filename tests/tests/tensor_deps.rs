//! Dependencies found through tensor arguments, end to end: random programs of tasks that read
//! one tile and write another of two small matrices, run by kernels that really compute, must
//! leave memory exactly as running the program one task at a time does.

use proptest::prelude::*;
use pto_runtime_core::{Config, KernelId, TaskSpec, TensorArg, Tile, WorkerClass};
use pto_sim::{KernelTable, SimOptions, run};

const N: u64 = 8; // each matrix is N x N u64, row-major
const STEP: KernelId = KernelId(0);

/// A block of a matrix: top-left corner and size.
#[derive(Clone, Copy, Debug)]
struct Block {
    matrix: usize,
    row: u64,
    col: u64,
    rows: u64,
    cols: u64,
}

/// One task: reads `src`, writes `dst` (reading it first if `inout`).
#[derive(Clone, Copy, Debug)]
struct Op {
    src: Block,
    dst: Block,
    inout: bool,
    class: WorkerClass,
}

fn block() -> impl Strategy<Value = Block> {
    (0usize..2, 0..N, 0..N).prop_flat_map(|(matrix, row, col)| {
        (1..=N - row, 1..=N - col).prop_map(move |(rows, cols)| Block {
            matrix,
            row,
            col,
            rows,
            cols,
        })
    })
}

fn op() -> impl Strategy<Value = Op> {
    (
        block(),
        block(),
        any::<bool>(),
        prop::sample::select(vec![WorkerClass::Aic, WorkerClass::Aiv]),
    )
        .prop_map(|(src, dst, inout, class)| Op {
            src,
            dst,
            inout,
            class,
        })
}

/// What every task computes, on the host or in a kernel: each element of the destination
/// becomes a mix of the source block's sum, the task's salt and (in-out) its old value.
fn step(src_sum: u64, salt: u64, old: u64, inout: bool, i: u64) -> u64 {
    let keep = if inout { old.rotate_left(7) } else { 0 };
    (src_sum ^ keep ^ salt.wrapping_mul(0x9e37_79b9_7f4a_7c15)).wrapping_add(i)
}

fn sequential(ops: &[Op]) -> [[u64; (N * N) as usize]; 2] {
    let mut m = [[0u64; (N * N) as usize]; 2];
    for (k, o) in ops.iter().enumerate() {
        let s = o.src;
        let mut sum = 0u64;
        for r in s.row..s.row + s.rows {
            for c in s.col..s.col + s.cols {
                sum = sum.wrapping_add(m[s.matrix][(r * N + c) as usize]);
            }
        }
        let d = o.dst;
        let mut i = 0;
        for r in d.row..d.row + d.rows {
            for c in d.col..d.col + d.cols {
                let cell = &mut m[d.matrix][(r * N + c) as usize];
                *cell = step(sum, k as u64 + 1, *cell, o.inout, i);
                i += 1;
            }
        }
    }
    m
}

fn kernels() -> KernelTable {
    // args: [src addr, src rows, src cols, dst addr, dst rows, dst cols, salt, inout]
    KernelTable::new().with(STEP, "step", |ctx| {
        let a = ctx.args;
        let mem = ctx.memory();
        let mut row = vec![0u64; N as usize];
        let mut sum = 0u64;
        for r in 0..a[1] {
            let w = &mut row[..a[2] as usize];
            mem.read(a[0] + r * N * 8, w)?;
            sum = w.iter().fold(sum, |x, &v| x.wrapping_add(v));
        }
        let mut i = 0;
        for r in 0..a[4] {
            let at = a[3] + r * N * 8;
            let w = &mut row[..a[5] as usize];
            mem.read(at, w)?;
            for v in w.iter_mut() {
                *v = step(sum, a[6], *v, a[7] == 1, i);
                i += 1;
            }
            mem.write(at, w)?;
        }
        Ok(())
    })
}

fn parallel(
    ops: &[Op],
    schedulers: u8,
    window: u32,
    clusters: u16,
) -> [[u64; (N * N) as usize]; 2] {
    let cfg = Config {
        task_window: window,
        max_args: 8,
        max_tensors: 2,
        max_deps: 32,
        schedulers,
        aic_cores: clusters,
        aiv_cores: 2 * clusters,
        ..Config::tiny()
    };
    let out = run(cfg, kernels(), SimOptions::default(), |o| {
        let mem = o.platform().memory();
        let base = [
            mem.alloc_buffer((N * N * 8) as usize, 64).unwrap(),
            mem.alloc_buffer((N * N * 8) as usize, 64).unwrap(),
        ];
        let addr = |b: Block| base[b.matrix].base + (b.row * N + b.col) * 8;
        let tile = |b: Block| Tile::block(addr(b), 8, b.rows as u32, b.cols as u32, N);
        for (k, op) in ops.iter().enumerate() {
            let (s, d) = (op.src, op.dst);
            let args = [
                addr(s),
                s.rows,
                s.cols,
                addr(d),
                d.rows,
                d.cols,
                k as u64 + 1,
                op.inout as u64,
            ];
            let dst = if op.inout {
                TensorArg::inout(base[d.matrix], tile(d))
            } else {
                TensorArg::output(base[d.matrix], tile(d))
            };
            let tensors = [TensorArg::input(base[s.matrix], tile(s)), dst];
            o.submit(&TaskSpec::new(STEP, op.class).args(&args).tensors(&tensors))
                .unwrap();
        }
        base
    })
    .unwrap();
    let mut m = [[0u64; (N * N) as usize]; 2];
    for (dst, base) in m.iter_mut().zip(out.value) {
        out.memory.read(base.base, dst).unwrap();
    }
    m
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(if cfg!(miri) { 2 } else { 40 }))]

    #[test]
    fn any_program_computes_what_running_it_in_order_computes(
        ops in prop::collection::vec(op(), 1..24),
        schedulers in 1u8..=2,
        window in prop::sample::select(vec![4u32, 8, 32]),
        clusters in 1u16..=3,
    ) {
        let want = sequential(&ops);
        let got = parallel(&ops, schedulers, window, clusters);
        prop_assert_eq!(got, want);
    }
}
