//! half_precision: fp16 and bf16 through tensor views. `C = A B` on f16 matrices, tile by
//! tile on cube cores, each kernel reading its f16 tiles, accumulating in f32 and writing
//! f16; then a softmax of each row of `C` on vector cores, computed in f32 and stored as
//! bf16. Both are checked against plain Rust in f32 with `expect_close`, within the default
//! tolerance of the type stored:
//!
//! - `C` (f16): rtol 1e-3, atol 1e-3. Accumulating in f32 in the reference's order, the only
//!   error is the final rounding to f16, at most 2^-11 (4.9e-4) of the value.
//! - `P` (bf16): rtol 1e-2, atol 1e-2. Rounding to bf16 costs at most 2^-8 (3.9e-3) of the
//!   value, and the logits' f16 rounding (about 4e-3 at most here) moves each probability
//!   by about as much again, relatively.
//!
//! Accumulating in f16 instead would not pass (a test below shows it).
//!
//! ```sh
//! cargo run --example half_precision                      # run, check, print the errors
//! cargo run --example half_precision -- --trace half.json # also write a trace for Perfetto
//! ```

use pto_runtime_core::{
    Buffer, Config, KernelId, ProfileLevel, TaskSpec, TensorArg, Tile, WorkerClass,
};
use pto_sim::half::{bf16, f16};
use pto_sim::{
    Comparison, KernelCtx, KernelError, KernelTable, SimOptions, Tolerance, expect_close,
};

/// Any error: the simulator's, a submit's, memory's, or a result outside its tolerance.
type Error = Box<dyn std::error::Error + Send + Sync>;

/// `A` is `M x K`, `B` is `K x N`, `C` and `P` are `M x N`; row-major.
const M: usize = 32;
const K: usize = 64;
const N: usize = 32;
/// Rows and columns of a `C` tile: one matmul task each.
const TM: usize = 16;
const TN: usize = 16;
/// Bytes of an f16 or a bf16.
const HALF: u32 = 2;

/// `C` against the f32 reference: f16's default tolerance.
const C_TOLERANCE: Tolerance = Tolerance::for_type::<f16>();
/// `P` against the f32 reference: bf16's default tolerance.
const P_TOLERANCE: Tolerance = Tolerance::for_type::<bf16>();

const MATMUL: KernelId = KernelId(0);
const SOFTMAX: KernelId = KernelId(1);

/// Tensors `[a, b, c]`, f16: `c = a b` for an `m x k` block of `A` and a `k x n` block of
/// `B`, accumulated in f32 and rounded to f16 once.
fn matmul(ctx: &KernelCtx<'_>) -> Result<(), KernelError> {
    let (a, b, c) = (ctx.tensor(0)?, ctx.tensor(1)?, ctx.tensor(2)?);
    let ([m, k], [k2, n], [m2, n2]) = (dims(a.shape())?, dims(b.shape())?, dims(c.shape())?);
    if (k, m, n) != (k2, m2, n2) {
        return Err(KernelError::msg(format!(
            "shapes {m}x{k} by {k2}x{n} into {m2}x{n2} do not multiply"
        )));
    }
    let (xs, ys) = (widen(&a.read_f16s()?), widen(&b.read_f16s()?));
    let product = matmul_f32(&xs, &ys, m, k, n);
    c.write_f16s(
        &product
            .iter()
            .map(|&v| f16::from_f32(v))
            .collect::<Vec<_>>(),
    )?;
    Ok(())
}

/// Tensors `[c, p]`: each row of `c` (f16) through a softmax computed in f32, into `p`
/// (bf16, same shape).
fn softmax(ctx: &KernelCtx<'_>) -> Result<(), KernelError> {
    let (c, p) = (ctx.tensor(0)?, ctx.tensor(1)?);
    let [_, n] = dims(c.shape())?;
    let probabilities = softmax_rows(&widen(&c.read_f16s()?), n);
    p.write_bf16s(
        &probabilities
            .iter()
            .map(|&v| bf16::from_f32(v))
            .collect::<Vec<_>>(),
    )?;
    Ok(())
}

/// The two dimensions of a matrix tile, or an error naming its shape.
fn dims(shape: &[u32]) -> Result<[usize; 2], KernelError> {
    match shape {
        &[rows, cols] => Ok([rows as usize, cols as usize]),
        other => Err(KernelError::msg(format!("a matrix tile, not {other:?}"))),
    }
}

fn widen(v: &[f16]) -> Vec<f32> {
    v.iter().map(|x| x.to_f32()).collect()
}

/// `x y` for row-major `x` (`m x k`) and `y` (`k x n`), summed in f32 in order of `k`: the
/// kernel and the reference share it.
fn matmul_f32(x: &[f32], y: &[f32], m: usize, k: usize, n: usize) -> Vec<f32> {
    let mut out = vec![0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            out[i * n + j] = (0..k).map(|t| x[i * k + t] * y[t * n + j]).sum();
        }
    }
    out
}

/// The softmax of each row (of `n` values) of `x`, in f32.
fn softmax_rows(x: &[f32], n: usize) -> Vec<f32> {
    x.chunks(n)
        .flat_map(|row| {
            let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let exps: Vec<f32> = row.iter().map(|v| (v - max).exp()).collect();
            let sum: f32 = exps.iter().sum();
            exps.into_iter().map(move |e| e / sum)
        })
        .collect()
}

/// The inputs, rounded to f16 once: values in [-1, 1] from a fixed sequence.
fn input(len: usize, seed: u32) -> Vec<f16> {
    (0..len as u32)
        .map(|i| {
            let h = (i.wrapping_mul(2_654_435_761) ^ seed).wrapping_mul(2_246_822_519);
            f16::from_f32((h >> 8) as f32 / (1 << 23) as f32 - 1.0)
        })
        .collect()
}

/// What the run did, and how close it came.
#[derive(Debug)]
pub struct Summary {
    /// Tasks that finished.
    pub tasks: u64,
    /// Wall time of the run.
    pub wall: std::time::Duration,
    /// `C` (f16) against plain Rust in f32.
    pub c: Comparison,
    /// `P` (bf16) against plain Rust in f32.
    pub p: Comparison,
}

/// Runs the workload on the simulator and checks `C` and `P` against plain Rust in f32;
/// with `trace`, writes the run's Chrome trace there.
fn half_precision(trace: Option<&std::path::Path>) -> Result<Summary, Error> {
    let (a, b) = (input(M * K, 1), input(K * N, 2));
    let kernels = KernelTable::new().with(MATMUL, "matmul_f16", matmul).with(
        SOFTMAX,
        "softmax_bf16",
        softmax,
    );
    let cfg = Config {
        max_tensors: 3,
        profile: if trace.is_some() {
            ProfileLevel::Tasks
        } else {
            ProfileLevel::Off
        },
        ..Config::tiny()
    };
    let out = pto_sim::run(cfg, kernels, SimOptions::default(), |o| {
        let mem = o.platform().memory();
        let half = HALF as usize;
        let (da, db) = (
            mem.alloc_buffer(M * K * half, 64)?,
            mem.alloc_buffer(K * N * half, 64)?,
        );
        let (dc, dp) = (
            mem.alloc_buffer(M * N * half, 64)?,
            mem.alloc_buffer(M * N * half, 64)?,
        );
        mem.write_f16s(da.base, &a)?;
        mem.write_f16s(db.base, &b)?;
        // A block of `rows x cols` 2-byte elements of a row-major matrix `width` wide.
        let block = |buf: Buffer, row: usize, col: usize, rows: usize, cols: usize, width| {
            let at = buf.at(((row * width + col) * half) as u64);
            Tile::block(at, HALF, rows as u32, cols as u32, width as u64)
        };
        for i in (0..M).step_by(TM) {
            for j in (0..N).step_by(TN) {
                o.submit(&TaskSpec::new(MATMUL, WorkerClass::Aic).tensors(&[
                    TensorArg::input(da, block(da, i, 0, TM, K, K)),
                    TensorArg::input(db, block(db, 0, j, K, TN, N)),
                    TensorArg::output(dc, block(dc, i, j, TM, TN, N)),
                ]))?;
            }
            // Whole rows of C: waits for the matmuls of this row band.
            o.submit(&TaskSpec::new(SOFTMAX, WorkerClass::Aiv).tensors(&[
                TensorArg::input(dc, block(dc, i, 0, TM, N, N)),
                TensorArg::output(dp, block(dp, i, 0, TM, N, N)),
            ]))?;
        }
        Ok::<_, Error>((dc, dp))
    })?;
    // The trace first: it helps most when the check below fails.
    if let Some(path) = trace {
        pto_sim::write_chrome_trace(path, &out.records, out.ticks_per_us, &out.kernels)?;
        if let Some(missing) = out.missing_records() {
            eprintln!("warning: {missing}");
        }
    }
    let (dc, dp) = out.value?;

    let mut c = vec![f16::ZERO; M * N];
    out.memory.read_f16s(dc.base, &mut c)?;
    let mut p = vec![bf16::ZERO; M * N];
    out.memory.read_bf16s(dp.base, &mut p)?;
    let want_c = matmul_f32(&widen(&a), &widen(&b), M, K, N);
    let want_p = softmax_rows(&want_c, N);
    let got_p: Vec<f32> = p.iter().map(|x| x.to_f32()).collect();
    Ok(Summary {
        tasks: out.report.finished,
        wall: out.wall,
        c: expect_close(&widen(&c), &want_c, C_TOLERANCE).map_err(|e| format!("C: {e}"))?,
        p: expect_close(&got_p, &want_p, P_TOLERANCE).map_err(|e| format!("P: {e}"))?,
    })
}

fn main() -> std::process::ExitCode {
    pto_examples::finish(run_from_command_line())
}

/// Runs the example as the command line says and prints what it did.
fn run_from_command_line() -> Result<(), Error> {
    let trace = pto_examples::trace_arg();
    let s = half_precision(trace.as_deref())?;
    println!(
        "half_precision: {M}x{K} by {K}x{N} in f16 (f32 accumulation), softmax into bf16: {} \
         tasks in {:.1?}",
        s.tasks, s.wall
    );
    println!("C: {}", s.c);
    println!("P: {}", s.p);
    if let Some(path) = trace {
        println!("trace: {} (open in Perfetto)", path.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_precision_is_within_tolerance_of_plain_rust_in_f32() {
        let s = half_precision(None).unwrap();
        let bands = M / TM;
        assert_eq!(s.tasks as usize, bands * (N / TN) + bands);
        assert_eq!((s.c.elements, s.p.elements), (M * N, M * N));
        let c_err = s.c.max_abs_error.unwrap().error;
        assert!(c_err > 0.0, "f16 rounding shows: {}", s.c);
    }

    #[test]
    fn accumulating_in_f16_would_be_outside_the_tolerance() {
        // The same product summed in f16, rounding after every step: the tolerance that the
        // kernels meet catches it.
        let (a, b) = (input(M * K, 1), input(K * N, 2));
        let want = matmul_f32(&widen(&a), &widen(&b), M, K, N);
        let mut in_f16 = vec![0f32; M * N];
        for i in 0..M {
            for j in 0..N {
                let sum = (0..K).fold(f16::ZERO, |s, t| s + a[i * K + t] * b[t * N + j]);
                in_f16[i * N + j] = sum.to_f32();
            }
        }
        let e = expect_close(&in_f16, &want, C_TOLERANCE).unwrap_err();
        eprintln!("{e}");
        assert!(
            e.to_string().contains("f32 elements outside rtol 1e-3"),
            "{e}"
        );
    }
}
