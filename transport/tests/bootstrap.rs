//! Bootstrap over TCP on loopback: ranks on threads, rank 0 on a free port.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use pto_transport::bootstrap::{Bootstrap, BootstrapError};
use pto_transport::wire::Hello;

fn listener() -> (TcpListener, std::net::SocketAddr) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let a = l.local_addr().unwrap();
    (l, a)
}

#[test]
fn eight_ranks_allgather_broadcast_and_meet() {
    let (l, addr) = listener();
    let ranks = 8u32;
    let mut l = Some(l);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..ranks)
            .map(|rank| {
                let l = if rank == 0 { l.take() } else { None };
                s.spawn(move || {
                    let mut b =
                        Bootstrap::tcp(rank, ranks, "job-8", addr, l, Duration::from_secs(20))
                            .unwrap();
                    let all = b.allgather(format!("rank {rank}").as_bytes()).unwrap();
                    let want: Vec<Vec<u8>> = (0..ranks)
                        .map(|r| format!("rank {r}").into_bytes())
                        .collect();
                    assert_eq!(all, want);
                    let got = b.broadcast(b"root info").unwrap();
                    assert_eq!(got, b"root info");
                    for _ in 0..10 {
                        b.barrier().unwrap();
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
    });
}

#[test]
fn a_peer_of_another_job_is_refused_and_the_job_still_forms() {
    two_ranks_form_after("job-a", |addr| {
        // A stranger first: rank 1 of job-b.
        let mut stranger = TcpStream::connect(addr).unwrap();
        let hello = Hello::plain(1, "job-b").encode().unwrap();
        stranger.write_all(&hello).unwrap();
        // Rank 0, still waiting for its rank 1, closes the stranger's connection.
        assert_closed_by_peer(&mut stranger, "the stranger");
    });
}

#[test]
fn a_silent_caller_does_not_hold_the_job_up_for_long() {
    two_ranks_form_after("job-q", |addr| {
        // Connects and says nothing: rank 0, still waiting for its rank 1, drops it after
        // the hello timeout instead of waiting on it for the whole bootstrap timeout.
        let mut silent = TcpStream::connect(addr).unwrap();
        assert_closed_by_peer(&mut silent, "the silent caller");
    });
}

/// Job `run` of two ranks on loopback: rank 0 starts on a thread, `caller` meets it first
/// (given rank 0's address), then the real rank 1 joins, and both meet at a barrier.
fn two_ranks_form_after(run: &'static str, caller: impl FnOnce(std::net::SocketAddr)) {
    let (l, addr) = listener();
    std::thread::scope(|s| {
        let root = s.spawn(move || {
            let mut b = Bootstrap::tcp(0, 2, run, addr, Some(l), Duration::from_secs(20)).unwrap();
            b.barrier().unwrap();
        });
        caller(addr);
        let mut b = Bootstrap::tcp(1, 2, run, addr, None, Duration::from_secs(20)).unwrap();
        b.barrier().unwrap();
        root.join().unwrap();
    });
}

/// Reads `conn` until the peer closes it; fails if it stays open for the bootstrap timeout.
fn assert_closed_by_peer(conn: &mut TcpStream, who: &str) {
    conn.set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut rest = Vec::new();
    match conn.read_to_end(&mut rest) {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
        Err(e) => panic!("{who}'s connection was not closed by rank 0: {e}"),
    }
}

#[test]
fn a_missing_rank_or_rendezvous_is_a_bounded_timeout() {
    let (l, addr) = listener();
    let start = Instant::now();
    let e = Bootstrap::tcp(0, 2, "job", addr, Some(l), Duration::from_millis(200))
        .err()
        .unwrap();
    assert!(matches!(e, BootstrapError::Timeout(_)), "{e}");
    // It gave up because its timeout passed, not sooner.
    assert!(start.elapsed() >= Duration::from_millis(200));
    // Nobody listens at this address any more.
    let e = Bootstrap::tcp(1, 2, "job", addr, None, Duration::from_millis(200))
        .err()
        .unwrap();
    assert!(matches!(e, BootstrapError::Timeout(_)), "{e}");
    assert!(matches!(
        Bootstrap::tcp(2, 2, "job", addr, None, Duration::from_millis(10)),
        Err(BootstrapError::Invalid(_))
    ));
}
