//! An allreduce (sum) across ranks on the simulator: every rank puts its input into a slot of
//! every peer's window (a simulated RDMA put that bumps a counter there), waits on its own
//! counter through deferred completion, then reduces the slots and checks the result.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use pto_runtime_core::{Config, KernelId, TaskSpec, WorkerClass};
use pto_sim::{KernelError, KernelTable, Signal, SimOptions, Transfer, run_with};

use crate::comm::{ShmComm, ShmConfig};

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

/// What one rank needs.
#[derive(Clone, Debug)]
pub struct RankJob {
    /// This rank.
    pub rank: u32,
    /// Ranks.
    pub ranks: u32,
    /// Names the job's shared objects.
    pub run_id: String,
    /// Elements (u64) per rank.
    pub elements: u64,
    /// Bound of every wait.
    pub timeout: Duration,
}

/// Rank `r`'s input.
pub fn input(rank: u64, i: u64) -> u64 {
    i + 100 * rank
}

/// The sum every rank must get.
pub fn expected(ranks: u64, i: u64) -> u64 {
    ranks * i + 100 * ranks * (ranks - 1) / 2
}

fn kernels(done: Arc<AtomicBool>) -> KernelTable {
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
            }
            done.store(true, Ordering::Release);
            Ok(())
        })
}

/// Runs this rank's part of the allreduce; returns how long it took.
pub fn run_rank(job: &RankJob) -> Result<Duration, String> {
    let start = Instant::now();
    let (n, e) = (job.ranks as u64, job.elements.max(1));
    let bytes = e * 8;
    // Window: the counter, then one slot of `elements` words per rank.
    let comm = Arc::new(
        ShmComm::init(&ShmConfig {
            rank: job.rank,
            ranks: job.ranks,
            run_id: job.run_id.clone(),
            window_bytes: 64 + n * bytes,
            timeout: job.timeout,
        })
        .map_err(|e| e.to_string())?,
    );
    let ctx = comm.context().map_err(|e| e.to_string())?;
    let ranges = comm.window_ranges().map_err(|e| e.to_string())?;
    let (me, counter, slots) = (job.rank as u64, ctx.local_window(), ctx.local_window() + 64);
    let cfg = Config {
        max_args: 8,
        deferred_timeout_us: job.timeout.as_micros() as u64,
        ..Config::tiny()
    };
    let opts = SimOptions {
        memory_bytes: (2 * bytes as usize) + (4 << 20),
        ..SimOptions::default()
    };
    let done = Arc::new(AtomicBool::new(false));
    let out = run_with(
        cfg,
        kernels(done.clone()),
        opts,
        ranges,
        |o| -> Result<(), String> {
            let mem = o.platform().memory();
            let src = mem.alloc(bytes as usize, 64).map_err(|e| e.to_string())?;
            let dst = mem.alloc(bytes as usize, 64).map_err(|e| e.to_string())?;
            let data: Vec<u64> = (0..e).map(|i| input(me, i)).collect();
            mem.write(src, &data).map_err(|e| e.to_string())?;
            let my_slot = slots + me * bytes;
            for peer in (0..job.ranks).filter(|&p| p as u64 != me) {
                let at = ctx
                    .peer_address(peer, my_slot, bytes)
                    .map_err(|e| e.to_string())?;
                let their_counter = ctx
                    .peer_address(peer, counter, 8)
                    .map_err(|e| e.to_string())?;
                o.submit(&TaskSpec::new(PUT, WorkerClass::Aiv).args(&[src, at, e, their_counter]))
                    .map_err(|e| e.to_string())?;
            }
            let recv = o
                .submit(&TaskSpec::new(RECV, WorkerClass::Aiv).args(&[counter, n - 1]))
                .map_err(|e| e.to_string())?;
            o.submit(
                &TaskSpec::new(REDUCE, WorkerClass::Aic)
                    .args(&[src, slots, n, e, dst, me])
                    .deps(&[recv]),
            )
            .map_err(|e| e.to_string())?;
            // Watch the job while the tasks run: a peer that died (the launcher poisons the
            // barrier in its name) stops this rank now, not at its deferred timeout.
            while !done.load(Ordering::Acquire) && o.error().is_none() {
                if let Some((rank, _)) = comm.poisoned() {
                    o.abort(rank as u64);
                    break;
                }
                std::thread::sleep(Duration::from_millis(2));
            }
            Ok(())
        },
    );
    let out = match out {
        Ok(out) => out,
        Err(failed @ pto_sim::SimError::Run { .. }) => {
            if let Some((rank, reason)) = comm.poisoned() {
                let why = match reason {
                    pto_runtime_core::PoisonReason::Died => "died",
                    pto_runtime_core::PoisonReason::TimedOut => "timed out",
                    pto_runtime_core::PoisonReason::Aborted => "aborted",
                };
                return Err(format!("stopped because rank {rank} {why}"));
            }
            comm.poison(pto_runtime_core::PoisonReason::Aborted);
            // The run's error, with what a failed kernel said.
            return Err(failed.to_string());
        }
        Err(e) => return Err(e.to_string()),
    };
    out.value?;
    // Nobody leaves before every rank has its sum (and no put is still on its way).
    comm.barrier().map_err(|e| e.to_string())?;
    Ok(start.elapsed())
}
