//! Helpers for the bootstrap tests: a whole job on threads with chosen start delays,
//! repetitions run side by side, a reproducible shuffle, and raw callers that misbehave.
#![allow(dead_code)]

use std::io::Write;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::Duration;

use pto_transport::bootstrap::{Bootstrap, BootstrapError};
use pto_transport::wire::Hello;

/// A loopback listener on a free port, and its address.
pub fn listener() -> (TcpListener, SocketAddr) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let a = l.local_addr().unwrap();
    (l, a)
}

/// A free loopback port nobody listens on (for a rank 0 that binds it late itself). The port
/// stays unbound until then, so it is taken on a loopback address of its own (127.x.y.z,
/// one per call in this process): a port another test or repetition binds on 127.0.0.1
/// meanwhile cannot collide with it.
pub fn free_addr() -> SocketAddr {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let ip = std::net::Ipv4Addr::new(
        127,
        100 + (std::process::id() % 100) as u8,
        (n / 250 % 250) as u8,
        (n % 250 + 1) as u8,
    );
    let l = TcpListener::bind((ip, 0)).unwrap();
    l.local_addr().unwrap()
}

/// Raises this process's limit on open descriptors to the hard limit: the silent-caller
/// tests hold hundreds of sockets on both ends.
pub fn raise_fd_limit() {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `lim` is a valid rlimit the call writes into; RLIMIT_NOFILE is a valid resource.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } == 0 {
        lim.rlim_cur = lim.rlim_max;
        // SAFETY: `lim` is a valid, initialised rlimit read by the call.
        unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) };
    }
}

/// Runs `ranks` ranks of job `run` at `addr` on threads, rank r starting `delays[r]` after
/// the call (rank 0 on `listener` when given, else binding `addr` itself). Every rank joins,
/// allgathers its rank number, checks every record and meets at a barrier. Returns each
/// rank's outcome.
pub fn run_job(
    ranks: u32,
    run: &str,
    addr: SocketAddr,
    listener: Option<TcpListener>,
    delays: &[Duration],
    timeout: Duration,
) -> Vec<Result<(), String>> {
    run_job_after(ranks, run, addr, listener, delays, timeout, || ())
}

/// As [`run_job`], but rank 0 starts first and the other ranks only once `between` has
/// returned (what it returns lives until the job is over).
pub fn run_job_after<K>(
    ranks: u32,
    run: &str,
    addr: SocketAddr,
    listener: Option<TcpListener>,
    delays: &[Duration],
    timeout: Duration,
    between: impl FnOnce() -> K,
) -> Vec<Result<(), String>> {
    let mut listener = listener;
    std::thread::scope(|s| {
        let start = |rank: u32, l: Option<TcpListener>| {
            let delay = delays.get(rank as usize).copied().unwrap_or_default();
            s.spawn(move || -> Result<(), String> {
                // Deliberate timing variation, not synchronisation.
                std::thread::sleep(delay);
                one_rank(rank, ranks, run, addr, l, timeout)
            })
        };
        let mut hs = vec![start(0, listener.take())];
        let _kept = between();
        hs.extend((1..ranks).map(|rank| start(rank, None)));
        hs.into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err("a rank panicked".into())))
            .collect()
    })
}

/// One rank of a job: join, allgather its rank number and check every record, barrier.
pub fn one_rank(
    rank: u32,
    ranks: u32,
    run: &str,
    addr: SocketAddr,
    l: Option<TcpListener>,
    timeout: Duration,
) -> Result<(), String> {
    let mut b = Bootstrap::tcp(rank, ranks, run, addr, l, timeout)
        .map_err(|e| format!("rank {rank}: join: {e}"))?;
    let all = b
        .allgather(&rank.to_le_bytes())
        .map_err(|e| format!("rank {rank}: allgather: {e}"))?;
    let want: Vec<Vec<u8>> = (0..ranks).map(|r| r.to_le_bytes().to_vec()).collect();
    if all != want {
        return Err(format!("rank {rank}: allgather gave {all:?}"));
    }
    b.barrier()
        .map_err(|e| format!("rank {rank}: barrier: {e}"))
}

/// Runs `reps` repetitions of `one` (given the repetition's index), `parallel` at a time,
/// and fails naming every repetition that did not form its job.
pub fn repeat(reps: u32, parallel: u32, one: impl Fn(u32) -> Vec<Result<(), String>> + Sync) {
    let mut failed = Vec::new();
    let one = &one;
    for wave in (0..reps)
        .collect::<Vec<_>>()
        .chunks(parallel.max(1) as usize)
    {
        let outcomes: Vec<(u32, Vec<Result<(), String>>)> = std::thread::scope(|s| {
            let hs: Vec<_> = wave
                .iter()
                .map(|&rep| (rep, s.spawn(move || one(rep))))
                .collect();
            hs.into_iter()
                .map(|(rep, h)| {
                    (
                        rep,
                        h.join().unwrap_or_else(|_| vec![Err("panicked".into())]),
                    )
                })
                .collect()
        });
        for (rep, ranks) in outcomes {
            let errs: Vec<String> = ranks.into_iter().filter_map(Result::err).collect();
            if !errs.is_empty() {
                // The first few say why; the rest mostly follow from them.
                let shown: Vec<&str> = errs.iter().take(4).map(String::as_str).collect();
                failed.push(format!(
                    "repetition {rep}: {} rank(s) failed: {}",
                    errs.len(),
                    shown.join("; ")
                ));
            }
        }
    }
    assert!(
        failed.is_empty(),
        "{} of {reps} repetitions did not form the job:\n{}",
        failed.len(),
        failed.join("\n")
    );
}

/// A reproducible pseudo-random sequence (xorshift), so a failing order can be replayed.
pub struct Rng(u64);

impl Rng {
    /// A sequence for `seed`.
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    /// The next number below `n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }

    /// `0..n` in a shuffled order.
    pub fn shuffled(&mut self, n: u32) -> Vec<u32> {
        let mut v: Vec<u32> = (0..n).collect();
        for i in (1..v.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            v.swap(i, j);
        }
        v
    }
}

/// A caller that sent a valid hello claiming `rank` of job `run`, then gave up and hung up
/// without waiting for an answer, as a rank whose hello timeout ran out in the backlog does.
pub fn caller_that_gave_up(addr: SocketAddr, rank: u32, run: &str) {
    let mut s = TcpStream::connect(addr).unwrap();
    let hello = Hello::plain(rank, run).encode().unwrap();
    s.write_all(&hello).unwrap();
}

/// Callers that connect and never say a word; they hang up when dropped.
pub fn silent_callers(addr: SocketAddr, n: usize) -> Vec<TcpStream> {
    (0..n).map(|_| TcpStream::connect(addr).unwrap()).collect()
}

/// Whether `e` is rank 0's timeout (for tests that expect one).
pub fn is_timeout(e: &BootstrapError) -> bool {
    matches!(e, BootstrapError::Timeout(_))
}
