//! The Rust snippets of `docs/blocks-lanes-and-reads.md`, compiled and run: a task of 8 SPMD
//! blocks each scaling its eighth of a buffer, a MIX task of 4 blocks with a kernel per lane,
//! and an orchestration that submits as many tasks as a count a kernel wrote.

use pto_runtime_core::{Buffer, Config, KernelId, TaskSpec, TensorArg, Tile, WorkerClass};
use pto_sim::{KernelCtx, KernelError, KernelTable, SimOptions, SimOrchestrator};

type Result<T> = std::result::Result<T, Box<dyn std::error::Error + Send + Sync>>;

const SCALE: KernelId = KernelId(0);
const MATMUL: KernelId = KernelId(1);
const SOFTMAX_LO: KernelId = KernelId(2);
const SOFTMAX_HI: KernelId = KernelId(3);
const COUNT: KernelId = KernelId(4);
const BUMP: KernelId = KernelId(5);

/// Doubles this block's part of tensor 0's u64s.
#[rustfmt::skip]
fn scale(ctx: &KernelCtx<'_>) -> std::result::Result<(), KernelError> {
    let x = ctx.tensor(0)?;
    let mut v = x.read_u64s()?;
    let len = v.len();
// In the kernel (pto_sim::KernelCtx):
let (b, n) = (ctx.block as usize, ctx.blocks as usize);
let part = len / n;
let mine = b * part..(b + 1) * part;
    for w in &mut v[mine.clone()] {
        *w *= 2;
    }
    // Write back only this block's elements (the blocks share the buffer).
    let t = x.tile();
    let at = t.base + 8 * mine.start as u64;
    ctx.memory().write_u64s(at, &v[mine])?;
    Ok(())
}

/// Kernel `k` writes `1000 * k + 100 * lane + block` into word `4 * block + lane` of
/// tensor 0.
fn lane_mark(ctx: &KernelCtx<'_>, k: u64) -> std::result::Result<(), KernelError> {
    let x = ctx.tensor(0)?;
    let at = x.base() + 8 * (4 * ctx.block as u64 + ctx.lane as u64);
    let mark = 1000 * k + 100 * ctx.lane as u64 + ctx.block as u64;
    ctx.memory().write_u64s(at, &[mark])?;
    Ok(())
}

#[rustfmt::skip]
fn blocks(o: &mut SimOrchestrator<'_, '_>, buf: Buffer) -> Result<()> {
    let t = [TensorArg::whole_inout(buf, 8)];
// 8 blocks of the vector kernel SCALE, each scaling its eighth of the buffer.
o.submit(&TaskSpec::new(SCALE, WorkerClass::Aiv).tensors(&t).blocks(8))?;
    Ok(())
}

#[rustfmt::skip]
fn lanes(o: &mut SimOrchestrator<'_, '_>, buf: Buffer) -> Result<()> {
    let t = [TensorArg::whole_output(buf, 8)];
o.submit(&TaskSpec::mix(MATMUL, [SOFTMAX_LO, SOFTMAX_HI]).tensors(&t).blocks(4))?;
    Ok(())
}

#[rustfmt::skip]
fn reads(o: &mut SimOrchestrator<'_, '_>, (x, c, z): (Buffer, Buffer, Buffer)) -> Result<u64> {
    let all_of_x = Tile::contiguous(x.base, 8, 16);
    let one_word = Tile::contiguous(c.base, 8, 1);
    let bump = [TensorArg::whole_inout(z, 8)];
o.submit(&TaskSpec::new(COUNT, WorkerClass::Aiv).tensors(&[
    TensorArg::input(x, all_of_x),
    TensorArg::output(c, one_word),
]))?;
o.settle(&TensorArg::input(c, one_word))?; // waits for COUNT
let mut k = [0u64];
o.platform().memory().read_u64s(c.base, &mut k)?;
for _ in 0..k[0] {
    o.submit(&TaskSpec::new(BUMP, WorkerClass::Aiv).tensors(&bump))?;
}
    Ok(k[0])
}

fn kernels() -> KernelTable {
    KernelTable::new()
        .with(SCALE, "scale", scale)
        .with(MATMUL, "matmul", |ctx| lane_mark(ctx, 1))
        .with(SOFTMAX_LO, "softmax_lo", |ctx| lane_mark(ctx, 2))
        .with(SOFTMAX_HI, "softmax_hi", |ctx| lane_mark(ctx, 3))
        .with(COUNT, "count", |ctx| {
            let xs = ctx.tensor(0)?.read_u64s()?;
            let odd = xs.iter().filter(|v| *v % 2 == 1).count() as u64;
            ctx.tensor(1)?.write_u64s(&[odd])
        })
        .with(BUMP, "bump", |ctx| {
            let z = ctx.tensor(0)?;
            let v = z.read_u64s()?;
            z.write_u64s(&[v[0] + 1])
        })
}

#[test]
fn the_docs_snippets_run_and_give_what_the_doc_says() -> Result<()> {
    let cfg = Config {
        aic_cores: 4,
        aiv_cores: 8,
        ..Config::tiny()
    };
    let out = pto_sim::run(cfg, kernels(), SimOptions::default(), |o| -> Result<_> {
        let mem = o.platform().memory();
        let (buf, marks) = (mem.alloc_buffer(8 * 64, 64)?, mem.alloc_buffer(8 * 16, 64)?);
        let (x, c, z) = (
            mem.alloc_buffer(8 * 16, 64)?,
            mem.alloc_buffer(8, 64)?,
            mem.alloc_buffer(8, 64)?,
        );
        mem.write_u64s(buf.base, &(0..64).collect::<Vec<u64>>())?;
        mem.write_u64s(x.base, &(0..16).map(|i| i * 3).collect::<Vec<u64>>())?;
        blocks(o, buf)?;
        lanes(o, marks)?;
        let k = reads(o, (x, c, z))?;
        Ok((buf, marks, z, k))
    })?;
    let (buf, marks, z, k) = out.value?;
    let mut v = vec![0u64; 64];
    out.memory.read_u64s(buf.base, &mut v)?;
    assert_eq!(
        v,
        (0..64).map(|i| 2 * i).collect::<Vec<u64>>(),
        "every block scaled its part"
    );
    let mut m = vec![0u64; 16];
    out.memory.read_u64s(marks.base, &mut m)?;
    for b in 0..4u64 {
        let want = [1000 + b, 2100 + b, 3200 + b];
        assert_eq!(
            m[4 * b as usize..4 * b as usize + 3],
            want,
            "block {b}: kernel and lane"
        );
    }
    assert_eq!(k, 8, "odd multiples of 3 below 48");
    let mut zs = [0u64];
    out.memory.read_u64s(z.base, &mut zs)?;
    assert_eq!(zs, [8], "as many bumps as the count said");
    Ok(())
}
