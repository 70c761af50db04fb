//! An allreduce (sum) across ranks on the simulator: every rank puts its input into a slot of
//! every peer's window (a simulated RDMA put that bumps a counter there), waits on its own
//! counter through deferred completion, then reduces the slots and checks the result.

mod error;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use pto_runtime_core::{Config, KernelId, PoisonReason, TaskSpec, WorkerClass};
use pto_sim::{KernelError, KernelTable, Signal, SimOptions, Transfer, run_with};

use crate::comm::{ShmComm, ShmConfig, sweep_stale};
use crate::progress::Progress;

pub use crate::comm::poison_reason;
pub use crate::launch::RankJob;
pub use error::AllreduceError;

/// `[src, dst, words, counter]`: puts `words` words into a peer's window, then adds 1 to the
/// peer's counter; completes once the engine landed it.
const PUT: KernelId = KernelId(0);
/// `[counter, expected]`: completes once this rank's counter reached `expected`.
const RECV: KernelId = KernelId(1);
/// `[input, slots, ranks, elements, out, me]`: `out = input + every peer's slot`, then
/// checks `out[i] == ranks * i + 100 * ranks * (ranks - 1) / 2`.
const REDUCE: KernelId = KernelId(2);

/// Error code of a wrong sum.
pub const WRONG_SUM: u32 = 90;
/// Words per read or write chunk of the reduce kernel.
const CHUNK: usize = 256;
/// Elements written between two updates of the progress bar (a multiple of `CHUNK`).
const PROGRESS_EVERY: u64 = 1 << 16;

/// What one rank's windows and memory take, computed without overflow: the window (a
/// counter, then one slot of `elements` words per rank) and the simulator's memory (input
/// and output, plus room for the runtime).
fn sizes(ranks: u64, elements: u64) -> Option<(u64, u64, usize)> {
    let bytes = elements.checked_mul(8)?;
    let window = ranks.checked_mul(bytes)?.checked_add(64)?;
    let memory = bytes.checked_mul(2)?.checked_add(4 << 20)?;
    Some((bytes, window, usize::try_from(memory).ok()?))
}

/// Rank `r`'s input.
pub fn input(rank: u64, i: u64) -> u64 {
    i + 100 * rank
}

/// The sum every rank must get.
pub fn expected(ranks: u64, i: u64) -> u64 {
    ranks * i + 100 * ranks * (ranks - 1) / 2
}

/// Error code of a reduce cut short because the job was given up.
const STOPPED: u32 = 91;

/// What the kernels and the rank's watch loop share.
#[derive(Default)]
struct Shared {
    /// Set by the reduce once the sum is checked.
    done: AtomicBool,
    /// Set by the watch loop once the job is given up, so that a reduce in progress returns
    /// at its next chunk instead of finishing a sum nobody will use.
    stop: AtomicBool,
    /// Elements the reduce has summed and checked (for the progress bar).
    reduced: AtomicU64,
}

fn kernels(shared: Arc<Shared>) -> KernelTable {
    KernelTable::new()
        .with(PUT, "put", |ctx| {
            let [src, dst, words, counter] = ctx.args_array()?;
            let t = Transfer::copy(src, dst, words as usize).signal(Signal::Add64 {
                addr: counter,
                delta: 1,
            });
            let cookie = ctx.post(0, t)?;
            ctx.defer_engine(0, cookie).map_err(Into::into)
        })
        .with(RECV, "recv", |ctx| {
            ctx.defer_counter64(ctx.args[0], ctx.args[1])
                .map_err(Into::into)
        })
        .with(REDUCE, "reduce", move |ctx| {
            let [input, slots, ranks, elements, out, me] = ctx.args_array()?;
            let mem = ctx.memory();
            let (mut acc, mut part) = (vec![0u64; CHUNK], vec![0u64; CHUNK]);
            let mut at = 0u64;
            while at < elements {
                if shared.stop.load(Ordering::Acquire) {
                    return Err(KernelError::new(STOPPED, "the job was given up"));
                }
                let n = (elements - at).min(CHUNK as u64) as usize;
                mem.read(input + at * 8, &mut acc[..n])?;
                for peer in (0..ranks).filter(|&p| p != me) {
                    let slot = slots + (peer * elements + at) * 8;
                    mem.read(slot, &mut part[..n])?;
                    for (a, p) in acc[..n].iter_mut().zip(&part[..n]) {
                        *a = a.wrapping_add(*p);
                    }
                }
                for (k, &v) in acc[..n].iter().enumerate() {
                    if v != expected(ranks, at + k as u64) {
                        return Err(KernelError::new(
                            WRONG_SUM,
                            format!("element {} of the sum is {v}", at + k as u64),
                        ));
                    }
                }
                mem.write(out + at * 8, &acc[..n])?;
                at += n as u64;
                shared.reduced.store(at, Ordering::Relaxed);
            }
            shared.done.store(true, Ordering::Release);
            Ok(())
        })
}

/// Runs this rank's part of the allreduce; returns how long it took. `progress` follows
/// the elements of the input written, then those reduced.
pub fn run_rank(job: &RankJob, progress: &Progress) -> Result<Duration, AllreduceError> {
    let start = Instant::now();
    let (n, e) = (job.ranks as u64, job.elements);
    if e == 0 {
        return Err(AllreduceError::NoElements);
    }
    let (bytes, window, memory) = sizes(n, e).ok_or(AllreduceError::TooLarge {
        ranks: n,
        elements: e,
    })?;
    let cfg = ShmConfig {
        rank: job.rank,
        ranks: job.ranks,
        run_id: job.run_id.clone(),
        window_bytes: window,
        timeout: job.timeout,
    };
    let comm = if job.watched {
        ShmComm::init_watched(&cfg)
    } else {
        // Under another launcher, rank 0 clears what earlier jobs killed whole left.
        if job.rank == 0 {
            sweep_stale();
        }
        ShmComm::init(&cfg)
    };
    let comm = Arc::new(comm?);
    let result = run_joined(job, &comm, bytes, memory, start, progress);
    if result.is_err() {
        // Every failure gives the job up in this rank's name (unless a culprit was named
        // already), so peers stop now, with or without a launcher watching.
        comm.poison(PoisonReason::Aborted);
    }
    result
}

/// The allreduce of a rank that joined the communicator `comm`.
fn run_joined(
    job: &RankJob,
    comm: &Arc<ShmComm>,
    bytes: u64,
    memory: usize,
    start: Instant,
    progress: &Progress,
) -> Result<Duration, AllreduceError> {
    let (n, e) = (job.ranks as u64, job.elements);
    let ctx = comm.context()?;
    let ranges = comm.window_ranges()?;
    let (me, counter, slots) = (job.rank as u64, ctx.local_window(), ctx.local_window() + 64);
    // Room for every task of the rank (a put per peer, the receive, the reduce) and every
    // deferred one: submit never waits for reclaim, so the rank reaches its watch loop (and
    // sees a poison) as soon as its tasks are submitted, not once the engine landed its puts.
    let tasks = job.ranks.saturating_add(2);
    let timeout_us = u64::try_from(job.timeout.as_micros()).unwrap_or(u64::MAX);
    let cfg = Config {
        task_window: tasks.next_power_of_two().max(4),
        deferred_capacity: tasks.max(Config::tiny().deferred_capacity),
        max_args: 8,
        // The job's bound (`--timeout-s`) is every wait's: on a loaded machine a rank's
        // reduce can take longer than the core's default 10 s.
        task_timeout_us: timeout_us,
        submit_timeout_us: timeout_us,
        deferred_timeout_us: timeout_us,
        ..Config::tiny()
    };
    let opts = SimOptions {
        memory_bytes: memory,
        ..SimOptions::default()
    };
    let shared = Arc::new(Shared::default());
    let out = run_with(
        cfg,
        kernels(shared.clone()),
        opts,
        ranges,
        |o| -> Result<(), AllreduceError> {
            let mem = o.platform().memory();
            // `sizes` checked that twice `bytes` fits a usize.
            let src = mem.alloc(bytes as usize, 64)?;
            let dst = mem.alloc(bytes as usize, 64)?;
            // The input, a chunk at a time (no second copy of a large vector on the heap).
            progress.set_message(format!("rank {me}: writing the input"));
            progress.set_length(e);
            let mut data = Vec::with_capacity(CHUNK);
            let mut at = 0u64;
            while at < e {
                data.clear();
                data.extend((at..e.min(at + CHUNK as u64)).map(|i| input(me, i)));
                mem.write(src + at * 8, &data)?;
                at += data.len() as u64;
                if at.is_multiple_of(PROGRESS_EVERY) {
                    progress.set_position(at);
                }
            }
            progress.set_message(format!("rank {me}: putting, waiting, reducing"));
            progress.set_position(0);
            let my_slot = slots + me * bytes;
            for peer in (0..job.ranks).filter(|&p| p as u64 != me) {
                let at = ctx.peer_address(peer, my_slot, bytes)?;
                let their_counter = ctx.peer_address(peer, counter, 8)?;
                o.submit(&TaskSpec::new(PUT, WorkerClass::Aiv).args(&[src, at, e, their_counter]))?;
            }
            let recv = o.submit(&TaskSpec::new(RECV, WorkerClass::Aiv).args(&[counter, n - 1]))?;
            o.submit(
                &TaskSpec::new(REDUCE, WorkerClass::Aic)
                    .args(&[src, slots, n, e, dst, me])
                    .deps(&[recv]),
            )?;
            // Watch the job while the tasks run: say this rank is alive, and stop now, not at
            // the deferred timeout, once the job is poisoned (the launcher does it in the
            // name of a rank that died) or a peer is found dead or unresponsive.
            while !shared.done.load(Ordering::Acquire) && o.error().is_none() {
                comm.heartbeat();
                progress.set_position(shared.reduced.load(Ordering::Relaxed));
                if let Some((rank, _)) = comm.check_peers() {
                    shared.stop.store(true, Ordering::Release);
                    o.abort(rank as u64);
                    break;
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            Ok(())
        },
    );
    let out = match out {
        Ok(out) => out,
        Err(failed @ pto_sim::SimError::Run { .. }) => {
            if let Some((rank, reason)) = comm.poisoned() {
                return Err(AllreduceError::Poisoned { rank, reason });
            }
            comm.poison(PoisonReason::Aborted);
            // The run's error, with what a failed kernel said.
            return Err(failed.into());
        }
        Err(e) => return Err(e.into()),
    };
    out.value?;
    progress.set_position(e);
    // Nobody leaves before every rank has its sum (and no put is still on its way).
    comm.barrier()?;
    Ok(start.elapsed())
}
