//! The bootstrap forms the job whatever the timing: rank 0 late, ranks in random order,
//! callers that gave up in the listen backlog, silent callers before and among the ranks.
//! Each case runs 20 times, side by side where the case allows, and every repetition must
//! form its job.

mod bootstrap_util;

use std::time::Duration;

use bootstrap_util::*;

/// Every join here is bounded by this; a job that forms does so in milliseconds.
const TIMEOUT: Duration = Duration::from_secs(10);

const REPS: u32 = 20;

#[test]
fn a_caller_that_gave_up_in_the_backlog_takes_no_rank() {
    repeat(REPS, REPS, |rep| {
        let run = format!("gave-up-{rep}");
        let (l, addr) = listener();
        // Rank 1's first dial: hello sent, then abandoned, before rank 0 accepts anything.
        caller_that_gave_up(addr, 1, &run);
        if rep % 2 == 1 {
            caller_that_gave_up(addr, 2, &run);
        }
        run_job(3, &run, addr, Some(l), &[], TIMEOUT)
    });
}

#[test]
fn rank_0_late_by_a_tenth_to_three_seconds_still_forms_the_job() {
    repeat(REPS, REPS, |rep| {
        let run = format!("late-{rep}");
        // 0.1 s to 3 s, spread over the repetitions.
        let late = Duration::from_millis(100 + u64::from(rep) * 2900 / u64::from(REPS - 1));
        let delays = [late, Duration::ZERO, Duration::ZERO];
        if rep % 2 == 0 {
            // Bound already (a launcher picked the port): the others' dials queue in the
            // backlog and give up there while rank 0 is away.
            let (l, addr) = listener();
            run_job(3, &run, addr, Some(l), &delays, TIMEOUT)
        } else {
            // Rank 0 binds the port itself when it starts: the others are refused until then.
            run_job(3, &run, free_addr(), None, &delays, TIMEOUT)
        }
    });
}

#[test]
fn ranks_started_in_random_order_form_the_job() {
    repeat(REPS, REPS, |rep| {
        let run = format!("order-{rep}");
        let ranks = 6;
        let mut rng = Rng::new(u64::from(rep) + 1);
        // Start order shuffled, 0 to 60 ms apart.
        let mut delays = vec![Duration::ZERO; ranks as usize];
        let mut at = 0;
        for r in rng.shuffled(ranks) {
            delays[r as usize] = Duration::from_millis(at);
            at += rng.below(60);
        }
        let (l, addr) = listener();
        run_job(ranks, &run, addr, Some(l), &delays, TIMEOUT)
    });
}

#[test]
fn sixteen_silent_callers_before_a_2_and_a_9_rank_job_hold_up_no_one() {
    raise_fd_limit();
    for ranks in [2, 9] {
        repeat(REPS, REPS, |rep| {
            let run = format!("silent16-{ranks}-{rep}");
            let (l, addr) = listener();
            let _silent = silent_callers(addr, 16);
            run_job(ranks, &run, addr, Some(l), &[], TIMEOUT)
        });
    }
}

#[test]
fn two_hundred_silent_connections_keep_no_rank_out() {
    raise_fd_limit();
    repeat(REPS, 4, |rep| {
        let run = format!("silent200-{rep}");
        let (l, addr) = listener();
        // Rank 0 starts first; 200 silent callers connect (more than rank 0 keeps pending
        // for a 4-rank job), then the other ranks start.
        run_job_after(4, &run, addr, Some(l), &[], TIMEOUT, || {
            silent_callers(addr, 200)
        })
    });
}
