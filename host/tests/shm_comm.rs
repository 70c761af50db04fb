//! The shared-memory communicator with ranks on threads of one process (each maps the object
//! on its own, as a process would).

use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::Duration;

use pto_host::comm::{CommError, ShmComm, ShmConfig};
use pto_runtime_core::{BarrierError, PoisonReason};

fn cfg(run_id: &str, rank: u32, ranks: u32) -> ShmConfig {
    ShmConfig {
        rank,
        ranks,
        run_id: run_id.to_string(),
        window_bytes: 4096,
        timeout: Duration::from_secs(20),
    }
}

fn run_id(tag: &str) -> String {
    format!("test-{tag}-{}", std::process::id())
}

fn object_exists(id: &str) -> bool {
    Path::new(&format!("/dev/shm/pto-{id}")).exists()
}

/// Runs `body` as every rank of a fresh communicator.
fn with_ranks<R: Send>(id: &str, ranks: u32, body: impl Fn(&ShmComm) -> R + Sync) -> Vec<R> {
    std::thread::scope(|s| {
        let hs: Vec<_> = (0..ranks)
            .map(|r| {
                let body = &body;
                s.spawn(move || {
                    let comm = ShmComm::init(&cfg(id, r, ranks)).unwrap();
                    body(&comm)
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

#[test]
fn ranks_see_each_others_windows_and_the_last_one_out_removes_the_object() {
    for ranks in [1u32, 2, 3, 5] {
        let id = run_id(&format!("windows{ranks}"));
        let sums = with_ranks(&id, ranks, |c| {
            // Each rank writes its rank + 1 at word `rank` of every peer's window.
            let me = c.rank() as usize;
            for peer in 0..c.ranks() {
                c.window(peer).unwrap()[me].store(me as u64 + 1, Ordering::Release);
            }
            c.barrier().unwrap();
            let mine = c.window(c.rank()).unwrap();
            let sum: u64 = (0..c.ranks() as usize)
                .map(|r| mine[r].load(Ordering::Acquire))
                .sum();
            let ctx = c.context().unwrap();
            assert_eq!(ctx.local_window(), c.local_window_base());
            assert_eq!(ctx.win_size, c.window_size());
            // A view of this rank alone, on the second half of its window.
            let half = c.window_size() / 2;
            let view = c.sub_domain(&[c.rank()], half, half).unwrap();
            assert_eq!((view.rank_id, view.rank_num), (0, 1));
            assert_eq!(view.local_window(), c.local_window_base() + half);
            sum
        });
        let want = (ranks as u64) * (ranks as u64 + 1) / 2;
        assert!(sums.iter().all(|&s| s == want), "{sums:?}");
        assert!(
            !object_exists(&id),
            "nothing of the job is left in /dev/shm"
        );
    }
}

#[test]
fn many_barrier_rounds_with_8_ranks() {
    let id = run_id("rounds");
    let rounds = 300u64;
    with_ranks(&id, 8, |c| {
        let counter = &c.window(0).unwrap()[0];
        for round in 1..=rounds {
            counter.fetch_add(1, Ordering::AcqRel);
            c.barrier().unwrap();
            // Nobody starts the next round before everybody finished this one.
            assert!(counter.load(Ordering::Acquire) >= round * 8);
            c.barrier().unwrap();
        }
    });
    assert!(!object_exists(&id));
}

#[test]
fn two_jobs_at_once_do_not_collide() {
    let (a, b) = (run_id("jobA"), run_id("jobB"));
    std::thread::scope(|s| {
        s.spawn(|| with_ranks(&a, 3, |c| c.barrier().unwrap()));
        s.spawn(|| with_ranks(&b, 2, |c| c.barrier().unwrap()));
    });
    assert!(!object_exists(&a) && !object_exists(&b));
}

#[test]
fn a_rank_that_never_comes_times_out_and_nothing_is_left_behind() {
    let id = run_id("missing");
    let mut c = cfg(&id, 0, 2);
    c.timeout = Duration::from_millis(100);
    let e = ShmComm::init(&c).unwrap_err();
    // Named as the rank that never joined, not this rank as the one that timed out.
    assert!(e.to_string().contains("rank 1 never joined"), "{e}");
    assert!(!object_exists(&id));
    // A rank other than 0 waits for the object, boundedly.
    let mut c = cfg(&id, 1, 2);
    c.timeout = Duration::from_millis(50);
    assert!(matches!(
        ShmComm::init(&c),
        Err(CommError::NotCreated { .. })
    ));
}

#[test]
fn bad_input_gets_clear_errors() {
    let id = run_id("bad");
    let err = |c: ShmConfig| ShmComm::init(&c).unwrap_err().to_string();
    assert!(err(cfg(&id, 0, 0)).contains("1 to 64"));
    assert!(err(cfg(&id, 0, 65)).contains("1 to 64"));
    assert!(err(cfg(&id, 2, 2)).contains("rank 2 does not exist"));
    let mut c = cfg(&id, 0, 2);
    c.window_bytes = 0;
    assert!(err(c).contains("1 byte to 16 GiB"));
    assert!(err(cfg("bad/id", 0, 1)).contains("letters, digits"));
    // A name taken (another job forming, or a leftover): an error, never a reuse.
    let path = format!("/dev/shm/pto-{id}");
    std::fs::write(&path, b"").unwrap();
    assert!(err(cfg(&id, 0, 1)).contains("exists already"));
    std::fs::remove_file(&path).unwrap();
    // Windows too large for /dev/shm: an error naming the bytes, not a SIGBUS later.
    let mut c = cfg(&id, 0, 64);
    c.window_bytes = 16 << 30;
    let e = err(c);
    assert!(
        e.contains("needs 1099511631872 bytes") && e.contains("bytes free"),
        "{e}"
    );
    assert!(!object_exists(&id));
}

#[test]
fn the_name_is_removed_once_every_rank_mapped_the_object() {
    let id = run_id("unlinked");
    let first = with_ranks(&id, 3, |c| {
        // Every rank is past init: nobody needs the name any more.
        assert!(!object_exists(&id), "removed after the joining barrier");
        c.barrier().unwrap();
    });
    assert_eq!(first.len(), 3);
    // So a failure of any process from here on cannot leak it, and the run id is free for
    // the next job even while this one runs.
    let a = ShmComm::init(&cfg(&id, 0, 1)).unwrap();
    let b = ShmComm::init(&cfg(&id, 0, 1)).unwrap();
    a.window(0).unwrap()[0].store(7, Ordering::Release);
    assert_eq!(
        b.window(0).unwrap()[0].load(Ordering::Acquire),
        0,
        "two objects"
    );
}

#[test]
fn a_rank_that_never_joins_is_named_by_every_rank_that_waited_for_it() {
    let id = run_id("never");
    // Ranks 0, 1 and 3 of 4; rank 2 is never started.
    let errors: Vec<String> = std::thread::scope(|s| {
        let hs: Vec<_> = [0u32, 1, 3]
            .into_iter()
            .map(|r| {
                let id = &id;
                s.spawn(move || {
                    let c = ShmConfig {
                        // Long enough for ranks 0, 1 and 3 to join on a loaded machine.
                        timeout: Duration::from_secs(2),
                        ..cfg(id, r, 4)
                    };
                    match ShmComm::init(&c) {
                        Ok(_) => panic!("rank {r} formed a job without rank 2"),
                        Err(CommError::Barrier(BarrierError::Poisoned { rank, reason })) => {
                            assert_eq!((rank, reason), (2, PoisonReason::NeverJoined));
                            format!("rank {r}: {}", BarrierError::Poisoned { rank, reason })
                        }
                        Err(e) => panic!("rank {r} names the rank that never came, not: {e}"),
                    }
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for e in &errors {
        assert!(e.contains("because rank 2 never joined"), "{e}");
    }
    assert!(
        !object_exists(&id),
        "the job that never formed leaves nothing"
    );
}

#[test]
fn a_window_past_the_last_rank_is_none() {
    let id = run_id("past");
    let c = ShmComm::init(&cfg(&id, 0, 1)).unwrap();
    assert!(c.window(0).is_some() && c.window(1).is_none());
}

#[test]
fn destroy_is_idempotent() {
    let id = run_id("destroy");
    let mut c = ShmComm::init(&cfg(&id, 0, 1)).unwrap();
    c.destroy().unwrap();
    c.destroy().unwrap();
    assert!(!object_exists(&id));
}
