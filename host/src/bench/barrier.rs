//! `pto-launch bench --workload barrier --ranks R`: how long a barrier of the shared-memory
//! communicator takes, ranks on threads (each maps the object as a process would).

use std::fmt;
use std::time::{Duration, Instant};

use crate::comm::{CommError, ShmComm, ShmConfig};

/// Barriers per timed chunk; the figure is the median over chunks of rank 0.
const CHUNK: u32 = 50;

/// The figures of a barrier bench.
#[derive(Clone, Debug, serde::Serialize)]
pub struct BarrierResult {
    /// Always `barrier`.
    pub workload: &'static str,
    /// Ranks.
    pub ranks: u32,
    /// Barriers timed.
    pub rounds: u32,
    /// Median time per barrier, µs.
    pub median_us: f64,
    /// 90th percentile over chunks, µs per barrier.
    pub p90_us: f64,
}

/// Runs `rounds` barriers (after a warm-up) with `ranks` ranks.
pub fn run_barrier_bench(ranks: u32, rounds: u32) -> Result<BarrierResult, CommError> {
    if ranks == 0 || ranks as usize > pto_runtime_core::MAX_RANKS {
        return Err(CommError::RankCount { ranks });
    }
    let run_id = format!("bench-barrier-{}-{}", std::process::id(), ranks);
    let chunks = (rounds / CHUNK).max(1);
    let per_rank = std::thread::scope(|s| {
        let hs: Vec<_> = (0..ranks)
            .map(|rank| {
                let run_id = run_id.clone();
                s.spawn(move || -> Result<Vec<f64>, CommError> {
                    let comm = ShmComm::init(&ShmConfig {
                        rank,
                        ranks,
                        run_id,
                        window_bytes: 64,
                        timeout: Duration::from_secs(30),
                    })?;
                    for _ in 0..CHUNK {
                        comm.barrier()?;
                    }
                    let mut times = Vec::with_capacity(chunks as usize);
                    for _ in 0..chunks {
                        let start = Instant::now();
                        for _ in 0..CHUNK {
                            comm.barrier()?;
                        }
                        times.push(start.elapsed().as_secs_f64() * 1e6 / CHUNK as f64);
                    }
                    Ok(times)
                })
            })
            .collect();
        hs.into_iter()
            .map(|h| h.join().unwrap_or(Ok(Vec::new())))
            .collect::<Result<Vec<_>, _>>()
    })?;
    let mut times = per_rank.into_iter().next().unwrap_or_default();
    times.sort_by(f64::total_cmp);
    let at = |q: f64| {
        times
            .get(((times.len() as f64 - 1.0) * q) as usize)
            .copied()
            .unwrap_or(0.0)
    };
    Ok(BarrierResult {
        workload: "barrier",
        ranks,
        rounds: chunks * CHUNK,
        median_us: at(0.5),
        p90_us: at(0.9),
    })
}

impl fmt::Display for BarrierResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "barrier: {} (threads), {} barriers: median {} µs, p90 {} µs per barrier",
            crate::human::count(self.ranks.into(), "rank"),
            self.rounds,
            crate::human::sig3(self.median_us),
            crate::human::sig3(self.p90_us)
        )
    }
}
