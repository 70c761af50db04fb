//! Ranks notify each other through their communication windows: a kernel posts a transfer
//! into a peer's window that bumps a counter there (a simulated RDMA put), and the peer's
//! consumer waits on that counter through deferred completion, then checks the data.

use std::sync::Arc;
use std::time::Duration;

use pto_host::comm::{ShmComm, ShmConfig};
use pto_runtime_core::{Config, KernelId, TaskSpec, WorkerClass};
use pto_sim::{KernelError, KernelTable, Signal, SimOptions, Transfer, run_with};

/// `[src, dst, words, counter]`: puts `words` words from `src` to `dst` (a peer's window),
/// then adds 1 to `counter` (in the peer's window); completes once the engine landed it.
const PUT: KernelId = KernelId(0);
/// `[counter]`: completes once the counter (in this rank's window) reached 1.
const RECV: KernelId = KernelId(1);
/// `[at, words, from]`: fails with 90 unless `at` holds rank `from`'s pattern.
const CHECK: KernelId = KernelId(2);

const WORDS: u64 = 64;

fn pattern(rank: u64, i: u64) -> u64 {
    (rank + 1) << 32 | i
}

fn kernels() -> KernelTable {
    KernelTable::new()
        .with(PUT, "put", |ctx| {
            let [src, dst, words, counter] = ctx.args_array()?;
            let t = Transfer::copy(src, dst, words as usize)
                .signal(Signal::Add64 {
                    addr: counter,
                    delta: 1,
                })
                .after(Duration::from_micros(200));
            let cookie = ctx.post(0, t)?;
            ctx.defer_engine(0, cookie).map_err(Into::into)
        })
        .with(RECV, "recv", |ctx| {
            ctx.defer_counter64(ctx.args[0], 1).map_err(Into::into)
        })
        .with(CHECK, "check", |ctx| {
            let [at, words, from] = ctx.args_array()?;
            let mut got = vec![0u64; words as usize];
            ctx.memory().read(at, &mut got)?;
            let ok = got
                .iter()
                .enumerate()
                .all(|(i, &v)| v == pattern(from, i as u64));
            if ok {
                Ok(())
            } else {
                Err(KernelError::new(90, "stale data"))
            }
        })
}

#[test]
fn a_put_into_a_peers_window_releases_its_waiting_consumer() {
    let ranks = 3u32;
    let run_id = format!("test-notify-{}", std::process::id());
    std::thread::scope(|s| {
        for rank in 0..ranks {
            let run_id = run_id.clone();
            s.spawn(move || {
                let comm = Arc::new(
                    ShmComm::init(&ShmConfig {
                        rank,
                        ranks,
                        run_id,
                        window_bytes: 4096,
                        timeout: Duration::from_secs(20),
                    })
                    .unwrap(),
                );
                let ctx = comm.context().unwrap();
                let ranges = comm.window_ranges().unwrap();
                let me = ctx.local_window();
                // Window layout: the counter at 0, the data from the left neighbour at 64.
                let (counter, inbox) = (me, me + 64);
                let right = (rank + 1) % ranks;
                let cfg = Config {
                    max_args: 4,
                    ..Config::tiny()
                };
                let out = run_with(cfg, kernels(), SimOptions::default(), ranges, |o| {
                    let mem = o.platform().memory();
                    let src = mem.alloc((WORDS * 8) as usize, 64).unwrap();
                    let data: Vec<u64> = (0..WORDS).map(|i| pattern(rank as u64, i)).collect();
                    mem.write(src, &data).unwrap();
                    let dst = ctx.peer_address(right, inbox, WORDS * 8).unwrap();
                    let peer_counter = ctx.peer_address(right, counter, 8).unwrap();
                    o.submit(&TaskSpec::new(PUT, WorkerClass::Aiv).args(&[
                        src,
                        dst,
                        WORDS,
                        peer_counter,
                    ]))
                    .unwrap();
                    let recv = o
                        .submit(&TaskSpec::new(RECV, WorkerClass::Aiv).args(&[counter]))
                        .unwrap();
                    let left = (rank + ranks - 1) % ranks;
                    o.submit(
                        &TaskSpec::new(CHECK, WorkerClass::Aic)
                            .args(&[inbox, WORDS, left as u64])
                            .deps(&[recv]),
                    )
                    .unwrap();
                })
                .unwrap();
                assert_eq!(out.report.error, None, "rank {rank}");
                assert_eq!(out.report.finished, 3);
                comm.barrier().unwrap();
            });
        }
    });
    let object = format!("/dev/shm/pto-{run_id}");
    assert!(!std::path::Path::new(&object).exists(), "{object} removed");
}
