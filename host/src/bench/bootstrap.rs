//! `pto-launch bench --workload bootstrap --ranks R`: how long R ranks (threads) take to
//! form a job over TCP on loopback: join (every hello proving a fresh job secret, as the
//! ranks pto-launch spawns do), allgather a 64-byte record each, meet at a barrier.

use std::fmt;
use std::net::TcpListener;
use std::time::{Duration, Instant};

use crate::transport::bootstrap::{Bootstrap, BootstrapError};
use crate::transport::secret::JobSecret;

/// The figures of a bootstrap bench.
#[derive(Clone, Debug, serde::Serialize)]
pub struct BootstrapResult {
    /// Always `bootstrap`.
    pub workload: &'static str,
    /// Ranks.
    pub ranks: u32,
    /// Median over the runs, ms from the start of the threads to rank 0 leaving the barrier.
    pub bootstrap_ms: f64,
    /// Runs measured.
    pub runs: u32,
    /// Whether the hellos proved a job secret (always, here).
    pub authenticated: bool,
}

/// Forms a job of `ranks` ranks `runs` times and takes the median.
pub fn run_bootstrap_bench(ranks: u32, runs: u32) -> Result<BootstrapResult, BootstrapError> {
    if ranks == 0 || ranks > 64 {
        return Err(BootstrapError::Invalid(format!(
            "{ranks} ranks: use 1 to 64"
        )));
    }
    let mut times = Vec::new();
    for run in 0..runs.max(1) {
        let listener = TcpListener::bind("127.0.0.1:0").map_err(|source| BootstrapError::Io {
            what: "binding a loopback port".into(),
            source,
        })?;
        let addr = listener.local_addr().map_err(|source| BootstrapError::Io {
            what: "reading the port".into(),
            source,
        })?;
        let run_id = format!("bench-{}-{run}", std::process::id());
        let secret = JobSecret::generate()?;
        let start = Instant::now();
        let mut listener = Some(listener);
        let took = std::thread::scope(|s| -> Result<Duration, BootstrapError> {
            let hs: Vec<_> = (0..ranks)
                .map(|rank| {
                    let l = if rank == 0 { listener.take() } else { None };
                    let (run_id, secret) = (run_id.clone(), secret.clone());
                    s.spawn(move || -> Result<Duration, BootstrapError> {
                        let mut b = Bootstrap::tcp_with_secret(
                            rank,
                            ranks,
                            &run_id,
                            addr,
                            l,
                            Duration::from_secs(30),
                            Some(secret),
                        )?;
                        b.allgather(&[rank as u8; 64])?;
                        b.barrier()?;
                        Ok(start.elapsed())
                    })
                })
                .collect();
            let mut first = None;
            for h in hs {
                let t = h
                    .join()
                    .map_err(|_| BootstrapError::Invalid("a rank thread panicked".into()))??;
                first.get_or_insert(t);
            }
            first.ok_or_else(|| BootstrapError::Invalid("no rank".into()))
        })?;
        times.push(took.as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    Ok(BootstrapResult {
        workload: "bootstrap",
        ranks,
        bootstrap_ms: times[times.len() / 2],
        runs: times.len() as u32,
        authenticated: true,
    })
}

impl fmt::Display for BootstrapResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "bootstrap: {} (threads) on loopback, job secret proven: median {} ms over {}",
            crate::human::count(self.ranks.into(), "rank"),
            crate::human::sig3(self.bootstrap_ms),
            crate::human::count(self.runs.into(), "run")
        )
    }
}
