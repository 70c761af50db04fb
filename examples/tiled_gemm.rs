//! tiled_gemm: a blocked matrix multiply `C = relu(alpha * A B + bias)` in f32.
//!
//! The DAG comes from `pto_workloads::gemm` (the bench's batched-GEMM scene uses it too).
//! Each output tile `(i, j)` is accumulated over the K dimension by cube (AIC) tasks, one per
//! K block, into an accumulator tile; a vector (AIV) task then applies the epilogue (scale,
//! bias, ReLU) and writes the tile of `C`. No task names another: every dependency comes from
//! the tensor arguments (the tiles each task reads and writes), found by the runtime's tensor
//! map: the K steps of one tile follow each other (each reads and writes the accumulator
//! tile), and the epilogue waits for the last of them. The result is checked against a plain
//! Rust matmul.
//!
//! ```sh
//! cargo run --example tiled_gemm
//! cargo run --example tiled_gemm -- --trace gemm.json
//! ```

use pto_runtime_core::{Access, Config, ProfileLevel};
use pto_sim::{KernelCtx, KernelError, KernelTable, SimOptions};
use pto_workloads::Submitter;
use pto_workloads::gemm::{
    EPILOGUE, Epilogue, GemmBuffers, GemmShape, GemmTile, MATMUL, submit_tiled_gemm,
};

/// Any error: the simulator's, a submit's, memory's, or a wrong result.
type Error = Box<dyn std::error::Error + Send + Sync>;

/// `A` is M x K, `B` is K x N, `C` is M x N (row-major f32).
const M: usize = 64;
const N: usize = 96;
const K: usize = 128;
/// Tile sizes: output tiles TM x TN, K blocks of TK.
const TM: usize = 32;
const TN: usize = 32;
const TK: usize = 32;
/// The epilogue's scale.
const ALPHA: f32 = 0.5;
/// Bytes per element.
const F32: u32 = 4;

// `MATMUL`: `acc (+)= A[i-block, k-block] x B[k-block, j-block]`; tensors `[a, b, acc]`. The
// first K step only writes `acc` (an output: it starts from zero); later ones read it too.
// `EPILOGUE`: `C = relu(alpha * acc + bias)` on one tile; tensors `[acc, bias, c]` (bias: the
// tile's TN columns), `args = [alpha]` (the f32's bits). The DAG is `pto_workloads::gemm`'s.

fn matmul(ctx: &KernelCtx<'_>) -> Result<(), KernelError> {
    let (a, b, acc) = (ctx.tensor(0)?, ctx.tensor(1)?, ctx.tensor(2)?);
    let (at, bt) = (a.read_f32s()?, b.read_f32s()?);
    let mut ct = if acc.access() == Access::Out {
        vec![0f32; TM * TN]
    } else {
        acc.read_f32s()?
    };
    for r in 0..TM {
        for kk in 0..TK {
            let x = at[r * TK + kk];
            for c in 0..TN {
                ct[r * TN + c] += x * bt[kk * TN + c];
            }
        }
    }
    acc.write_f32s(&ct)?;
    Ok(())
}

fn epilogue(ctx: &KernelCtx<'_>) -> Result<(), KernelError> {
    let [alpha] = ctx.args_array()?;
    let alpha = f32::from_bits(alpha as u32);
    let (acc, bias, c) = (ctx.tensor(0)?, ctx.tensor(1)?, ctx.tensor(2)?);
    let mut t = acc.read_f32s()?;
    let b = bias.read_f32s()?;
    for row in t.chunks_mut(TN) {
        for (v, bias) in row.iter_mut().zip(&b) {
            *v = (alpha * *v + bias).max(0.0);
        }
    }
    c.write_f32s(&t)?;
    Ok(())
}

/// The plain Rust answer.
fn reference(a: &[f32], b: &[f32], bias: &[f32]) -> Vec<f32> {
    let mut c = vec![0f32; M * N];
    for i in 0..M {
        for j in 0..N {
            let dot: f32 = (0..K).map(|k| a[i * K + k] * b[k * N + j]).sum();
            c[i * N + j] = (ALPHA * dot + bias[j]).max(0.0);
        }
    }
    c
}

/// What the run did.
#[derive(Debug)]
pub struct Gemm {
    /// Tasks that finished.
    pub tasks: u64,
    /// Wall time of the run.
    pub wall: std::time::Duration,
    /// Per output tile: its K-step tasks in order, then its epilogue task.
    pub tiles: Vec<GemmTile>,
    /// The task records (profiling at `Tasks`).
    pub records: Vec<pto_runtime_core::TaskRecord>,
}

/// Runs the GEMM on the simulator and checks `C` against [`reference`]; with `trace`, writes
/// the run's Chrome trace there.
fn tiled_gemm(profile: ProfileLevel, trace: Option<&std::path::Path>) -> Result<Gemm, Error> {
    // Small integers, so every sum is exact in f32 whatever the order.
    let a: Vec<f32> = (0..M * K).map(|i| ((i * 7 + 3) % 7) as f32 - 3.0).collect();
    let b: Vec<f32> = (0..K * N).map(|i| ((i * 5 + 1) % 5) as f32 - 2.0).collect();
    let bias: Vec<f32> = (0..N).map(|j| (j % 4) as f32 - 1.0).collect();

    let kernels = KernelTable::new()
        .with(MATMUL, "matmul", matmul)
        .with(EPILOGUE, "epilogue", epilogue);
    let cfg = Config {
        rings: 1,
        task_window: 32,
        aic_cores: 2,
        aiv_cores: 4,
        schedulers: 1,
        max_tensors: 4,
        max_args: 4,
        profile: if trace.is_some() {
            ProfileLevel::Tasks
        } else {
            profile
        },
        ..Config::tiny()
    };
    let out = pto_sim::run(cfg, kernels, SimOptions::default(), |o| {
        let mem = o.platform().memory();
        let da = mem.alloc_buffer(M * K * 4, 64)?;
        let db = mem.alloc_buffer(K * N * 4, 64)?;
        let dacc = mem.alloc_buffer(M * N * 4, 64)?;
        let dbias = mem.alloc_buffer(N * 4, 64)?;
        let dc = mem.alloc_buffer(M * N * 4, 64)?;
        mem.write_f32s(da.base, &a)?;
        mem.write_f32s(db.base, &b)?;
        mem.write_f32s(dbias.base, &bias)?;
        let shape = GemmShape {
            m: M,
            n: N,
            k: K,
            tm: TM,
            tn: TN,
            tk: TK,
            elem: F32,
        };
        let bufs = GemmBuffers {
            a: da,
            b: db,
            acc: dacc,
        };
        let epilogue = Epilogue {
            kernel: EPILOGUE,
            bias: dbias,
            c: dc,
            args: &[ALPHA.to_bits() as u64],
        };
        let tiles = submit_tiled_gemm(
            &mut Submitter::new(),
            o,
            &shape,
            bufs,
            MATMUL,
            Some(&epilogue),
        )?;
        Ok::<_, Error>((dc, tiles))
    })?;
    // The trace first: it helps most when the check below fails.
    if let Some(path) = trace {
        pto_sim::write_chrome_trace(path, &out.records, out.ticks_per_us, &out.kernels)?;
        if let Some(missing) = out.missing_records() {
            eprintln!("warning: {missing}");
        }
    }
    let (dc, tiles) = out.value?;

    let mut c = vec![0f32; M * N];
    out.memory.read_f32s(dc.base, &mut c)?;
    let want = reference(&a, &b, &bias);
    if let Some(i) = (0..M * N).find(|&i| c[i] != want[i]) {
        return Err(format!(
            "C[{}][{}] is {} but plain Rust says {}",
            i / N,
            i % N,
            c[i],
            want[i]
        )
        .into());
    }
    Ok(Gemm {
        tasks: out.report.finished,
        wall: out.wall,
        tiles,
        records: out.records,
    })
}

fn main() -> std::process::ExitCode {
    pto_examples::finish(run_from_command_line())
}

/// Runs the example as the command line says and prints what it did.
fn run_from_command_line() -> Result<(), Error> {
    let trace = pto_examples::trace_arg();
    let g = tiled_gemm(ProfileLevel::Off, trace.as_deref())?;
    println!(
        "tiled_gemm: {M}x{K} by {K}x{N} in {TM}x{TN} tiles, {} K steps each: {} tasks in {:.1?}; \
         matches plain Rust",
        K / TK,
        g.tasks,
        g.wall
    );
    if let Some(path) = trace {
        println!("trace: {} (open in Perfetto)", path.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pto_runtime_core::TaskId;

    #[test]
    fn tiled_gemm_matches_plain_rust() {
        let g = tiled_gemm(ProfileLevel::Off, None).unwrap();
        let tiles = (M / TM) * (N / TN);
        assert_eq!(g.tasks as usize, tiles * (K / TK + 1));
    }

    #[test]
    fn tiled_gemm_writes_a_trace_perfetto_can_draw() {
        let path = std::env::temp_dir().join(format!("tiled_gemm-{}.json", std::process::id()));
        tiled_gemm(ProfileLevel::Off, Some(&path)).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        let trace: serde_json::Value = serde_json::from_str(&text).unwrap();
        pto_sim::check_chrome_trace(&trace).expect("Perfetto can draw every track");
        assert_eq!(
            text.matches("\"name\":\"matmul\"").count(),
            24,
            "one slice per K step"
        );
    }

    #[test]
    fn each_tiles_tasks_run_in_k_order_and_the_epilogue_last() {
        let g = tiled_gemm(ProfileLevel::Tasks, None).unwrap();
        let rec = |t: TaskId| {
            g.records
                .iter()
                .find(|r| r.task == t)
                .unwrap_or_else(|| panic!("no record of {t}"))
        };
        for tile in &g.tiles {
            let mut after = tile.steps.iter().copied().chain(tile.epilogue);
            let mut prev = rec(after.next().unwrap());
            for t in after {
                let r = rec(t);
                assert!(
                    r.dispatch >= prev.complete,
                    "{t} was dispatched before {} completed",
                    prev.task
                );
                prev = r;
            }
        }
    }
}
