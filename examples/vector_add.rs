//! vector_add: the minimal workload. Two kernels, eight tasks: `z = x + y` on four chunks of
//! a vector (vector cores), then each chunk scaled by 0.5 once its sum is there. Each task
//! names the tiles it reads and writes; the kernels get them (`ctx.tensor(i)`) and the
//! runtime orders the tasks by them. The result is checked against plain Rust.
//!
//! ```sh
//! cargo run --example vector_add                      # run, check, print a summary
//! cargo run --example vector_add -- --trace add.json  # also write a trace for Perfetto
//! ```

use pto_runtime_core::{Config, KernelId, ProfileLevel, TaskSpec, TensorArg, Tile, WorkerClass};
use pto_sim::{KernelCtx, KernelError, KernelTable, SimOptions};

/// Any error: the simulator's, a submit's, memory's, or a wrong result.
type Error = Box<dyn std::error::Error + Send + Sync>;

/// Elements of each vector.
const N: usize = 4096;
/// Elements one task handles.
const CHUNK: usize = 1024;

/// Kernel ids: the payload names a kernel by id; the table maps ids to functions.
const ADD: KernelId = KernelId(0);
const SCALE: KernelId = KernelId(1);

/// Tensors `[x, y, z]`: z = x + y, elementwise, f32.
fn add(ctx: &KernelCtx<'_>) -> Result<(), KernelError> {
    let (x, y, z) = (ctx.tensor(0)?, ctx.tensor(1)?, ctx.tensor(2)?);
    let (xs, ys) = (x.read_f32s()?, y.read_f32s()?);
    let zs: Vec<f32> = xs.iter().zip(&ys).map(|(a, b)| a + b).collect();
    z.write_f32s(&zs)?;
    Ok(())
}

/// Tensor `[z]` (read and written), `args = [factor]`: z *= factor (the f32's bits).
fn scale(ctx: &KernelCtx<'_>) -> Result<(), KernelError> {
    let [factor] = ctx.args_array()?;
    let factor = f32::from_bits(factor as u32);
    let z = ctx.tensor(0)?;
    let zs: Vec<f32> = z.read_f32s()?.iter().map(|v| v * factor).collect();
    z.write_f32s(&zs)?;
    Ok(())
}

/// What the run did, for the summary.
#[derive(Debug)]
pub struct Summary {
    /// Tasks that finished.
    pub tasks: u64,
    /// Wall time of the run.
    pub wall: std::time::Duration,
}

/// Runs the workload on the simulator, checks `z` against plain Rust and, with `trace`,
/// writes the run's Chrome trace there.
fn vector_add(trace: Option<&std::path::Path>) -> Result<Summary, Error> {
    let x: Vec<f32> = (0..N).map(|i| i as f32).collect();
    let y: Vec<f32> = (0..N).map(|i| (N - i) as f32 * 0.25).collect();

    let kernels = KernelTable::new()
        .with(ADD, "add", add)
        .with(SCALE, "scale", scale);
    let cfg = Config {
        profile: if trace.is_some() {
            ProfileLevel::Tasks
        } else {
            ProfileLevel::Off
        },
        ..Config::tiny()
    };
    let out = pto_sim::run(cfg, kernels, SimOptions::default(), |o| {
        // Device memory: allocate the three vectors and copy the inputs in.
        let mem = o.platform().memory();
        let bytes = N * 4;
        let (x_buf, y_buf, z_buf) = (
            mem.alloc_buffer(bytes, 64)?,
            mem.alloc_buffer(bytes, 64)?,
            mem.alloc_buffer(bytes, 64)?,
        );
        mem.write_f32s(x_buf.base, &x)?;
        mem.write_f32s(y_buf.base, &y)?;
        for c in 0..N / CHUNK {
            // Chunk c of a vector: CHUNK f32s (4 bytes each) from element c * CHUNK.
            let chunk = |buf: pto_runtime_core::Buffer| {
                Tile::contiguous(buf.at((c * CHUNK * 4) as u64), 4, CHUNK as u32)
            };
            let z = chunk(z_buf);
            o.submit(&TaskSpec::new(ADD, WorkerClass::Aiv).tensors(&[
                TensorArg::input(x_buf, chunk(x_buf)),
                TensorArg::input(y_buf, chunk(y_buf)),
                TensorArg::output(z_buf, z),
            ]))?;
            // Reads the chunk of z the add wrote: it waits for that add, found by the
            // runtime from the tensor arguments.
            o.submit(
                &TaskSpec::new(SCALE, WorkerClass::Aiv)
                    .tensors(&[TensorArg::inout(z_buf, z)])
                    .args(&[0.5f32.to_bits() as u64]),
            )?;
        }
        Ok::<_, Error>(z_buf)
    })?;
    // The trace first: it helps most when the check below fails.
    if let Some(path) = trace {
        pto_sim::write_chrome_trace(path, &out.records, out.ticks_per_us, &out.kernels)?;
        if let Some(missing) = out.missing_records() {
            eprintln!("warning: {missing}");
        }
    }
    let z_buf = out.value?;

    let mut z = vec![0f32; N];
    out.memory.read_f32s(z_buf.base, &mut z)?;
    let want: Vec<f32> = x.iter().zip(&y).map(|(a, b)| (a + b) * 0.5).collect();
    if let Some(i) = (0..N).find(|&i| z[i] != want[i]) {
        return Err(format!("z[{i}] is {} but plain Rust says {}", z[i], want[i]).into());
    }
    Ok(Summary {
        tasks: out.report.finished,
        wall: out.wall,
    })
}

fn main() -> std::process::ExitCode {
    pto_examples::finish(run_from_command_line())
}

/// Runs the example as the command line says and prints what it did.
fn run_from_command_line() -> Result<(), Error> {
    let trace = pto_examples::trace_arg();
    let s = vector_add(trace.as_deref())?;
    println!(
        "vector_add: {N} elements, {} tasks in {:.1?}; matches plain Rust",
        s.tasks, s.wall
    );
    if let Some(path) = trace {
        println!("trace: {} (open in Perfetto)", path.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vector_add_matches_plain_rust() {
        let s = vector_add(None).unwrap();
        assert_eq!(s.tasks, 8);
    }

    #[test]
    fn vector_add_writes_a_trace_with_every_kernel() {
        let path = std::env::temp_dir().join(format!("vector_add-{}.json", std::process::id()));
        vector_add(Some(&path)).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        let kernels = text.matches("\"ph\":\"X\"").count();
        let spans = text.matches("\"ph\":\"b\"").count();
        assert_eq!(
            (kernels, spans),
            (8, 8),
            "a kernel slice and a task span per task"
        );
        for name in ["\"name\":\"add\"", "\"name\":\"scale\""] {
            assert_eq!(text.matches(name).count(), 4, "four {name} slices");
        }
        let trace: serde_json::Value = serde_json::from_str(&text).unwrap();
        pto_sim::check_chrome_trace(&trace).expect("Perfetto can draw every track");
    }
}
