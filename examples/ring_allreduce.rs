//! ring_allreduce: a sum over `RANKS` ranks, each a process with its own simulated chip,
//! talking only through communication windows (POSIX shared memory).
//!
//! Each rank's vector is cut into one chunk per rank. In `RANKS - 1` reduce-scatter steps
//! every rank puts a chunk into its right neighbour's window (a simulated RDMA put that then
//! bumps a counter there) and adds the chunk its left neighbour put into its own; after them
//! each rank holds one chunk fully summed, and `RANKS - 1` allgather steps pass those around.
//! A step's receive is a deferred task (it completes once the step's counter in this rank's
//! window says the data landed); it "writes" the window slot, so the add or copy reading the
//! slot waits for it, and the next put, reading the chunk the add wrote, waits for the add:
//! every dependency comes from tensor arguments. Each rank checks its sum against plain Rust.
//!
//! ```sh
//! cargo run --example ring_allreduce                       # 4 rank processes
//! cargo run --example ring_allreduce -- --ranks 3 --trace ring.json   # ring.rank0.json, ...
//! ```
//!
//! Without `--rank` the program is the launcher: it starts one process of itself per rank
//! (`--rank R`), waits for them and reports. Its tests run the ranks both ways: as processes
//! (the test binary started once per rank) and as threads of one process, each rank with its
//! own simulator and communicator either way.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use pto_host::comm::{ShmComm, ShmConfig};
use pto_runtime_core::{
    Buffer, Config, KernelId, PoisonReason, ProfileLevel, TaskSpec, TensorArg, Tile, WorkerClass,
};
use pto_sim::{KernelCtx, KernelError, KernelTable, Signal, SimOptions, Transfer};

/// Any error: the communicator's, the simulator's, a submit's, or a wrong sum.
type Error = Box<dyn std::error::Error + Send + Sync>;

/// Ranks when `--ranks` is not given.
const DEFAULT_RANKS: u32 = 4;
/// Elements (u64) of each rank's chunk.
const CHUNK: usize = 512;
/// Bound of every wait (barrier, deferred condition).
const TIMEOUT: Duration = Duration::from_secs(20);

/// Tensors `[chunk (in)]`, `args = [dst, counter]`: puts the chunk at `dst` in the right
/// neighbour's window, then adds 1 to `counter` there; completes once the engine landed it.
const PUT: KernelId = KernelId(0);
/// Tensors `[slot (out)]`, `args = [counter]`: completes once this rank's `counter` is 1,
/// i.e. the left neighbour's put into `slot` landed.
const RECV: KernelId = KernelId(1);
/// Tensors `[slot (in), chunk (inout)]`: chunk += slot.
const ADD: KernelId = KernelId(2);
/// Tensors `[slot (in), chunk (out)]`: chunk = slot.
const COPY: KernelId = KernelId(3);

fn put(ctx: &KernelCtx<'_>) -> Result<(), KernelError> {
    let [dst, counter] = ctx.args_array()?;
    let src = ctx.tensor(0)?;
    let t = Transfer::copy(src.base(), dst, src.len()).signal(Signal::Add64 {
        addr: counter,
        delta: 1,
    });
    let cookie = ctx.post(0, t)?;
    ctx.defer_engine(0, cookie)?;
    Ok(())
}

fn recv(ctx: &KernelCtx<'_>) -> Result<(), KernelError> {
    let [counter] = ctx.args_array()?;
    ctx.defer_counter64(counter, 1)?;
    Ok(())
}

fn add(ctx: &KernelCtx<'_>) -> Result<(), KernelError> {
    let (slot, chunk) = (ctx.tensor(0)?, ctx.tensor(1)?);
    let mut acc = chunk.read_u64s()?;
    for (a, s) in acc.iter_mut().zip(slot.read_u64s()?) {
        *a = a.wrapping_add(s);
    }
    chunk.write_u64s(&acc)?;
    Ok(())
}

fn copy(ctx: &KernelCtx<'_>) -> Result<(), KernelError> {
    let (slot, chunk) = (ctx.tensor(0)?, ctx.tensor(1)?);
    chunk.write_u64s(&slot.read_u64s()?)?;
    Ok(())
}

/// Rank `r`'s input element `i`.
fn input(r: u32, i: usize) -> u64 {
    (i as u64 + 1) * (r as u64 + 1) + 1000 * r as u64
}

/// What one rank did.
#[derive(Debug)]
pub struct RankOutcome {
    /// Tasks that finished.
    pub tasks: u64,
    /// Wall time of the rank's run.
    pub wall: Duration,
}

/// One rank of the job `run_id`: joins the communicator, runs its share of the ring on its
/// own simulator, checks the sum against plain Rust; with `trace`, writes its trace there.
fn run_rank(
    rank: u32,
    ranks: u32,
    run_id: &str,
    trace: Option<&Path>,
) -> Result<RankOutcome, Error> {
    let n = ranks as usize;
    if n < 2 {
        return Err("a ring needs at least 2 ranks".into());
    }
    let steps = 2 * (n - 1);
    let chunk_bytes = (CHUNK * 8) as u64;
    // The window: a counter per step (each on its own 64 bytes), then a slot per step.
    let counters = (steps * 64) as u64;
    let comm = Arc::new(ShmComm::init(&ShmConfig {
        rank,
        ranks,
        run_id: run_id.into(),
        window_bytes: counters + steps as u64 * chunk_bytes,
        timeout: TIMEOUT,
    })?);
    let result = rank_job(&comm, rank, n, trace);
    match &result {
        // Nobody leaves before every rank has its sum (and no put is still on its way).
        Ok(_) => comm.barrier()?,
        // Every peer stops at once instead of at its timeout.
        Err(_) => comm.poison(PoisonReason::Aborted),
    }
    result
}

fn rank_job(
    comm: &Arc<ShmComm>,
    rank: u32,
    n: usize,
    trace: Option<&Path>,
) -> Result<RankOutcome, Error> {
    let steps = 2 * (n - 1);
    let chunk_bytes = (CHUNK * 8) as u64;
    let ctx = comm.context()?;
    let right = (rank + 1) % n as u32;
    let window = Buffer::new(ctx.local_window(), comm.window_size());
    let counter = |k: usize| window.at((k * 64) as u64);
    let slot_at = |k: usize| window.at((steps * 64) as u64 + k as u64 * chunk_bytes);
    let kernels = KernelTable::new()
        .with(PUT, "put", put)
        .with(RECV, "recv", recv)
        .with(ADD, "add", add)
        .with(COPY, "copy", copy);
    let cfg = Config {
        task_window: (3 * steps as u32 + 4).next_power_of_two(),
        deferred_capacity: 4 * steps as u32,
        max_args: 2,
        max_tensors: 2,
        deferred_timeout_us: TIMEOUT.as_micros() as u64,
        profile: if trace.is_some() {
            ProfileLevel::Tasks
        } else {
            ProfileLevel::Off
        },
        ..Config::tiny()
    };
    let ranges = comm.window_ranges()?;
    let out = pto_sim::run_with(cfg, kernels.clone(), SimOptions::default(), ranges, |o| {
        let mem = o.platform().memory();
        let acc = mem.alloc_buffer(n * CHUNK * 8, 64)?;
        let data: Vec<u64> = (0..n * CHUNK).map(|i| input(rank, i)).collect();
        mem.write_u64s(acc.base, &data)?;
        let chunk = |c: usize| Tile::contiguous(acc.at(c as u64 * chunk_bytes), 8, CHUNK as u32);
        let slot = |k: usize| Tile::contiguous(slot_at(k), 8, CHUNK as u32);
        let r = rank as usize;
        for k in 0..steps {
            // Reduce-scatter (k < n - 1): send chunk r - k, add chunk r - k - 1. Allgather:
            // send the summed chunk r + 1 - s, take chunk r - s (s = k - (n - 1)).
            let s = k % (n - 1);
            let (send, take) = if k < n - 1 {
                ((r + n - s) % n, (r + 2 * n - s - 1) % n)
            } else {
                ((r + 1 + n - s) % n, (r + n - s) % n)
            };
            let dst = ctx.peer_address(right, slot_at(k), chunk_bytes)?;
            let their_counter = ctx.peer_address(right, counter(k), 8)?;
            o.submit(
                &TaskSpec::new(PUT, WorkerClass::Aiv)
                    .tensors(&[TensorArg::input(acc, chunk(send))])
                    .args(&[dst, their_counter]),
            )?;
            o.submit(
                &TaskSpec::new(RECV, WorkerClass::Aiv)
                    .tensors(&[TensorArg::output(window, slot(k))])
                    .args(&[counter(k)]),
            )?;
            let (kernel, dst) = if k < n - 1 {
                (ADD, TensorArg::inout(acc, chunk(take)))
            } else {
                (COPY, TensorArg::output(acc, chunk(take)))
            };
            let t = [TensorArg::input(window, slot(k)), dst];
            o.submit(&TaskSpec::new(kernel, WorkerClass::Aiv).tensors(&t))?;
        }
        Ok::<_, Error>(acc)
    })?;
    // The trace first: it helps most when the check below fails.
    if let Some(path) = trace {
        pto_sim::write_chrome_trace(path, &out.records, out.ticks_per_us, &out.kernels)?;
        if let Some(missing) = out.missing_records() {
            eprintln!("warning: {missing}");
        }
    }
    let acc = out.value?;
    let mut got = vec![0u64; n * CHUNK];
    out.memory.read_u64s(acc.base, &mut got)?;
    for (i, &g) in got.iter().enumerate() {
        let want = (0..n as u32)
            .map(|r| input(r, i))
            .fold(0u64, u64::wrapping_add);
        if g != want {
            return Err(
                format!("rank {rank}: element {i} is {g} but plain Rust says {want}").into(),
            );
        }
    }
    Ok(RankOutcome {
        tasks: out.report.finished,
        wall: out.wall,
    })
}

/// Rank `rank`'s trace file: `FILE.json` becomes `FILE.rank<rank>.json`.
fn rank_trace(trace: &Path, rank: u32) -> PathBuf {
    let stem = trace.file_stem().unwrap_or_default().to_string_lossy();
    trace.with_file_name(format!("{stem}.rank{rank}.json"))
}

/// The value after `flag` on the command line, parsed.
fn flag<T: std::str::FromStr>(flag: &str) -> Result<Option<T>, Error> {
    let mut args = std::env::args().skip_while(|a| a != flag);
    if args.next().is_none() {
        return Ok(None);
    }
    let v = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
    v.parse()
        .map(Some)
        .map_err(|_| format!("{flag} {v}: not a valid value").into())
}

fn main() -> std::process::ExitCode {
    pto_examples::finish(run_from_command_line())
}

/// Runs the example as the command line says and prints what it did.
fn run_from_command_line() -> Result<(), Error> {
    let trace = pto_examples::trace_arg();
    let ranks = flag::<u32>("--ranks")?.unwrap_or(DEFAULT_RANKS);
    if !(2..=16).contains(&ranks) {
        return Err(format!("--ranks {ranks}: use 2 to 16 ranks").into());
    }
    if let Some(rank) = flag::<u32>("--rank")? {
        // A rank process, started by the launcher below.
        let run_id: String = flag("--run-id")?.ok_or("--rank needs --run-id")?;
        let trace = trace.map(|t| rank_trace(&t, rank));
        let r = run_rank(rank, ranks, &run_id, trace.as_deref())?;
        println!(
            "rank {rank}: {} tasks in {:.1?}; sum matches plain Rust",
            r.tasks, r.wall
        );
        return Ok(());
    }
    // The launcher: one process per rank, each this program with `--rank`.
    let exe = std::env::current_exe()?;
    let run_id = format!("ring{}", std::process::id());
    let mut children = Vec::new();
    for rank in 0..ranks {
        let mut c = std::process::Command::new(&exe);
        c.args(["--rank", &rank.to_string(), "--ranks", &ranks.to_string()])
            .args(["--run-id", &run_id]);
        if let Some(t) = &trace {
            c.arg("--trace").arg(t);
        }
        children.push(c.spawn()?);
    }
    let mut failed = Vec::new();
    for (rank, mut child) in children.into_iter().enumerate() {
        if !child.wait()?.success() {
            failed.push(rank);
        }
    }
    if !failed.is_empty() {
        let _ = ShmComm::remove_job(&run_id);
        return Err(format!("ranks {failed:?} failed (their errors are above)").into());
    }
    println!(
        "ring_allreduce: {ranks} rank processes, {} u64s each: every rank's sum matches plain Rust",
        ranks as usize * CHUNK
    );
    if let Some(t) = trace {
        println!("traces: {} (open in Perfetto)", rank_trace(&t, 0).display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs every rank as a thread of this process; returns each rank's outcome.
    fn ring(ranks: u32, trace: Option<&Path>) -> Vec<Result<RankOutcome, String>> {
        // A job of its own for every call: tests run at the same time.
        static JOBS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let job = JOBS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let run_id = format!("ringtest{}x{job}", std::process::id());
        let handles: Vec<_> = (0..ranks)
            .map(|r| {
                let (id, trace) = (run_id.clone(), trace.map(|t| rank_trace(t, r)));
                std::thread::spawn(move || {
                    run_rank(r, ranks, &id, trace.as_deref()).map_err(|e| e.to_string())
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    }

    #[test]
    fn every_rank_gets_the_sum_plain_rust_computes() {
        for ranks in [2, 3] {
            for (r, out) in ring(ranks, None).into_iter().enumerate() {
                let out = out.unwrap_or_else(|e| panic!("{ranks} ranks, rank {r}: {e}"));
                assert_eq!(out.tasks as usize, 3 * 2 * (ranks as usize - 1));
            }
        }
    }

    #[test]
    fn each_rank_writes_a_trace_perfetto_can_draw() {
        let dir = std::env::temp_dir().join(format!("ring-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let trace = dir.join("ring.json");
        for out in ring(2, Some(&trace)) {
            out.unwrap();
        }
        for r in 0..2 {
            let text = std::fs::read_to_string(rank_trace(&trace, r)).unwrap();
            let v: serde_json::Value = serde_json::from_str(&text).unwrap();
            pto_sim::check_chrome_trace(&v).expect("Perfetto can draw every track");
            assert_eq!(text.matches("\"name\":\"recv\"").count(), 2, "two receives");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// One rank as a process of its own: started by
    /// `rank_processes_sum_through_their_windows` (the job in `RING_JOB`).
    #[test]
    #[ignore = "a rank process of rank_processes_sum_through_their_windows"]
    fn rank_process() {
        let job = std::env::var("RING_JOB").expect("RING_JOB=rank,ranks,run_id");
        let [rank, ranks, run_id] = job.split(',').collect::<Vec<_>>()[..] else {
            panic!("RING_JOB={job}: want rank,ranks,run_id");
        };
        run_rank(rank.parse().unwrap(), ranks.parse().unwrap(), run_id, None).unwrap();
    }

    #[test]
    fn rank_processes_sum_through_their_windows() {
        // What `main` does, with this test binary as the rank program.
        let (ranks, run_id) = (3, format!("ringproc{}", std::process::id()));
        let exe = std::env::current_exe().unwrap();
        let children: Vec<_> = (0..ranks)
            .map(|r| {
                std::process::Command::new(&exe)
                    .args(["--exact", "tests::rank_process", "--ignored", "--quiet"])
                    .env("RING_JOB", format!("{r},{ranks},{run_id}"))
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for (r, c) in children.into_iter().enumerate() {
            let out = c.wait_with_output().unwrap();
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success() && text.contains("1 passed"),
                "rank {r}: {text}{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}
