//! The documented maximum: 1 024 ranks (threads) joining one rank 0 at once on loopback, all
//! dialing together, forms the job. `PTO_SCALE_REPS` repeats it (default once).

mod bootstrap_util;

use std::time::Duration;

use bootstrap_util::*;
use pto_transport::bootstrap::MAX_RANKS;

#[test]
fn the_most_ranks_a_bootstrap_joins_form_the_job_all_at_once() {
    raise_fd_limit();
    let reps: u32 = std::env::var("PTO_SCALE_REPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let ranks = MAX_RANKS;
    repeat(reps, 1, |rep| {
        let run = format!("scale-{rep}");
        let (l, addr) = listener();
        let mut l = Some(l);
        std::thread::scope(|s| {
            let hs: Vec<_> = (0..ranks)
                .map(|rank| {
                    let l = if rank == 0 { l.take() } else { None };
                    let run = &run;
                    std::thread::Builder::new()
                        .stack_size(256 << 10)
                        .spawn_scoped(s, move || {
                            one_rank(rank, ranks, run, addr, l, Duration::from_secs(60))
                        })
                        .unwrap()
                })
                .collect();
            hs.into_iter()
                .map(|h| h.join().unwrap_or_else(|_| Err("a rank panicked".into())))
                .collect()
        })
    });
}
