//! What rank 0 tells callers whose claim it cannot take, and what its timeout names: a rank
//! whose number another caller holds is refused at join with the holder's address, a rank
//! beyond rank 0's job is refused naming the job's size, and a rank that never came is named.

mod bootstrap_util;

use std::time::Duration;

use bootstrap_util::*;
use pto_transport::bootstrap::{Bootstrap, BootstrapError};

const TIMEOUT: Duration = Duration::from_secs(10);

#[test]
fn a_rank_whose_number_is_taken_is_told_at_join_and_the_job_forms_without_it() {
    let (l, addr) = listener();
    let run = "claims";
    std::thread::scope(|s| {
        let root = s.spawn(move || {
            let mut b = Bootstrap::tcp(0, 3, run, addr, Some(l), TIMEOUT)?;
            b.barrier().map(|()| b)
        });
        // The first to claim rank 1 gets it: here another process posing as rank 1.
        let mut holder = Bootstrap::tcp(1, 3, run, addr, None, TIMEOUT).unwrap();
        // The real rank 1 comes second and learns it at join, with the holder named.
        match Bootstrap::tcp(1, 3, run, addr, None, TIMEOUT) {
            Err(BootstrapError::RankTaken { rank: 1, holder }) => {
                assert!(holder.starts_with("127.0.0.1:"), "{holder}");
            }
            Err(e) => panic!("the second claim of rank 1 failed otherwise: {e}"),
            Ok(_) => panic!("the second claim of rank 1 was taken too"),
        }
        // A rank of a bigger job than rank 0's is refused with rank 0's size.
        match Bootstrap::tcp(4, 6, run, addr, None, TIMEOUT) {
            Err(e @ BootstrapError::NoSuchRank { rank: 4, ranks: 3 }) => {
                assert!(e.to_string().contains("3 ranks"), "{e}");
            }
            Err(e) => panic!("rank 4 of 6 failed otherwise: {e}"),
            Ok(_) => panic!("rank 4 joined a 3-rank job"),
        }
        // The job forms with whoever holds rank 1.
        let third = s.spawn(move || {
            let mut b = Bootstrap::tcp(2, 3, run, addr, None, TIMEOUT)?;
            b.barrier()
        });
        holder.barrier().unwrap();
        third.join().unwrap().unwrap();
        root.join().unwrap().unwrap();
    });
}

#[test]
fn rank_0_s_timeout_names_the_ranks_that_never_came() {
    let (l, addr) = listener();
    let run = "missing";
    std::thread::scope(|s| {
        let root = s.spawn(move || {
            Bootstrap::tcp(0, 6, run, addr, Some(l), Duration::from_millis(800)).err()
        });
        // Ranks 1, 3 and 4 come; 2 and 5 never do.
        let came: Vec<_> = [1, 3, 4]
            .into_iter()
            .map(|r| s.spawn(move || Bootstrap::tcp(r, 6, run, addr, None, TIMEOUT).map(drop)))
            .collect();
        let e = root.join().unwrap().expect("rank 0 timed out");
        assert!(is_timeout(&e), "{e}");
        let msg = e.to_string();
        assert!(
            msg.contains("ranks 2, 5") && msg.contains("2 of 6"),
            "{msg}"
        );
        for c in came {
            c.join().unwrap().unwrap();
        }
    });
}
