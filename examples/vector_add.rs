//! vector_add: the minimal workload. Two kernels, eight tasks: `z = x + y` on four chunks of
//! a vector (vector cores), then each chunk scaled by 0.5 once its sum is there. The result
//! is checked against plain Rust.
//!
//! ```sh
//! cargo run --example vector_add                      # run, check, print a summary
//! cargo run --example vector_add -- --trace add.json  # also write a trace for Perfetto
//! ```

use pto_runtime_core::{Config, KernelId, ProfileLevel, TaskSpec, WorkerClass};
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

/// `args = [x, y, z, n]`: z[i] = x[i] + y[i] for the n f32s at those device addresses.
fn add(ctx: &KernelCtx<'_>) -> Result<(), KernelError> {
    let [x, y, z, n] = ctx.args_array()?;
    let mem = ctx.memory();
    let (mut xs, mut ys) = (vec![0f32; n as usize], vec![0f32; n as usize]);
    mem.read_f32s(x, &mut xs)?;
    mem.read_f32s(y, &mut ys)?;
    let zs: Vec<f32> = xs.iter().zip(&ys).map(|(a, b)| a + b).collect();
    mem.write_f32s(z, &zs)?;
    Ok(())
}

/// `args = [z, n, factor]`: z[i] *= factor (the f32's bits in the argument).
fn scale(ctx: &KernelCtx<'_>) -> Result<(), KernelError> {
    let [z, n, factor] = ctx.args_array()?;
    let factor = f32::from_bits(factor as u32);
    let mut zs = vec![0f32; n as usize];
    ctx.memory().read_f32s(z, &mut zs)?;
    zs.iter_mut().for_each(|v| *v *= factor);
    ctx.memory().write_f32s(z, &zs)?;
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
        let (dx, dy, dz) = (
            mem.alloc(bytes, 64)?,
            mem.alloc(bytes, 64)?,
            mem.alloc(bytes, 64)?,
        );
        mem.write_f32s(dx, &x)?;
        mem.write_f32s(dy, &y)?;
        for c in 0..N / CHUNK {
            let at = (c * CHUNK * 4) as u64;
            let n = CHUNK as u64;
            let args = [dx + at, dy + at, dz + at, n];
            let sum = o.submit(&TaskSpec::new(ADD, WorkerClass::Aiv).args(&args))?;
            // Runs once `sum` finished: an explicit dependency on its task id.
            o.submit(
                &TaskSpec::new(SCALE, WorkerClass::Aiv)
                    .args(&[dz + at, n, 0.5f32.to_bits() as u64])
                    .deps(&[sum]),
            )?;
        }
        Ok::<u64, Error>(dz)
    })?;
    let dz = out.value?;

    let mut z = vec![0f32; N];
    out.memory.read_f32s(dz, &mut z)?;
    let want: Vec<f32> = x.iter().zip(&y).map(|(a, b)| (a + b) * 0.5).collect();
    if let Some(i) = (0..N).find(|&i| z[i] != want[i]) {
        return Err(format!("z[{i}] is {} but plain Rust says {}", z[i], want[i]).into());
    }
    if let Some(path) = trace {
        pto_host::profile::write_chrome_trace(path, &out.records, out.ticks_per_us, &out.kernels)?;
    }
    Ok(Summary {
        tasks: out.report.finished,
        wall: out.wall,
    })
}

fn main() -> Result<(), Error> {
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
        pto_host::profile::check_chrome_trace(&trace).expect("Perfetto can draw every track");
    }
}
