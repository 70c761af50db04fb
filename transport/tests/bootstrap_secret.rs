//! Only the job's own ranks get in: with a job secret, a caller with a wrong secret, one with
//! none, a hello replayed from an earlier job, an impostor claiming a rank before the real one
//! and a caller that stalls mid-handshake are each refused while the job forms.

mod bootstrap_util;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bootstrap_util::*;
use pto_transport::bootstrap::{Bootstrap, BootstrapError};
use pto_transport::secret::{JobSecret, NONCE_BYTES, PROOF_BYTES};
use pto_transport::wire::{CONFIRM, Hello};

const TIMEOUT: Duration = Duration::from_secs(10);

fn join(
    rank: u32,
    ranks: u32,
    run: &str,
    addr: SocketAddr,
    l: Option<TcpListener>,
    secret: &JobSecret,
) -> Result<Bootstrap<pto_transport::tcp::TcpTransport>, BootstrapError> {
    Bootstrap::tcp_with_secret(rank, ranks, run, addr, l, TIMEOUT, Some(secret.clone()))
}

/// Rank 0 of a `ranks`-rank job on a thread, meeting at a barrier once formed.
fn root<'scope>(
    s: &'scope std::thread::Scope<'scope, '_>,
    ranks: u32,
    run: &'static str,
    l: TcpListener,
    addr: SocketAddr,
    secret: &JobSecret,
) -> std::thread::ScopedJoinHandle<'scope, Result<(), BootstrapError>> {
    let secret = secret.clone();
    s.spawn(move || join(0, ranks, run, addr, Some(l), &secret)?.barrier())
}

/// Ranks 1 to `ranks - 1`, each on a thread, joining with `secret` and meeting rank 0 at the
/// barrier; returns once every one of them did.
fn the_others_join<'scope>(
    s: &'scope std::thread::Scope<'scope, '_>,
    ranks: u32,
    run: &'static str,
    addr: SocketAddr,
    secret: &JobSecret,
) {
    let others: Vec<_> = (1..ranks)
        .map(|r| {
            let secret = secret.clone();
            s.spawn(move || join(r, ranks, run, addr, None, &secret)?.barrier())
        })
        .collect();
    for o in others {
        o.join().unwrap().unwrap();
    }
}

/// A raw caller's hello with a nonce, claiming `rank` of `run`.
fn hello_with_nonce(rank: u32, run: &str) -> Vec<u8> {
    Hello {
        nonce: Some([9; NONCE_BYTES]),
        ..Hello::plain(rank, run)
    }
    .encode()
    .unwrap()
}

/// Reads the listener's whole hello.
fn read_hello(s: &mut TcpStream) -> Vec<u8> {
    s.set_read_timeout(Some(TIMEOUT)).unwrap();
    let mut b = vec![0u8; Hello::FIXED];
    s.read_exact(&mut b).unwrap();
    let mut rest = vec![0u8; Hello::wanted(&b).unwrap() - Hello::FIXED];
    s.read_exact(&mut rest).unwrap();
    b.extend(rest);
    b
}

/// Whether rank 0 ends the connection without a word more (no verdict).
fn ends_unanswered(s: &mut TcpStream) -> bool {
    let mut byte = [0u8; 1];
    matches!(s.read(&mut byte), Ok(0) | Err(_))
}

#[test]
fn ranks_holding_the_job_secret_form_the_job() {
    let secret = JobSecret::generate().unwrap();
    let (l, addr) = listener();
    std::thread::scope(|s| {
        let r0 = root(s, 4, "auth-ok", l, addr, &secret);
        the_others_join(s, 4, "auth-ok", addr, &secret);
        r0.join().unwrap().unwrap();
    });
}

#[test]
fn a_rank_with_a_wrong_secret_is_refused_and_the_real_one_joins_after_it() {
    let secret = JobSecret::generate().unwrap();
    let wrong = JobSecret::generate().unwrap();
    let (l, addr) = listener();
    std::thread::scope(|s| {
        let r0 = root(s, 2, "auth-wrong", l, addr, &secret);
        let e = join(1, 2, "auth-wrong", addr, None, &wrong).err().unwrap();
        assert!(
            e.to_string().contains("does not prove the job secret"),
            "{e}"
        );
        join(1, 2, "auth-wrong", addr, None, &secret)
            .unwrap()
            .barrier()
            .unwrap();
        r0.join().unwrap().unwrap();
    });
}

#[test]
fn a_rank_without_a_secret_and_a_rank_0_without_one_are_told_which_side_lacks_it() {
    let secret = JobSecret::generate().unwrap();
    let (l, addr) = listener();
    std::thread::scope(|s| {
        let r0 = root(s, 2, "auth-none", l, addr, &secret);
        let e = Bootstrap::tcp(1, 2, "auth-none", addr, None, TIMEOUT)
            .err()
            .unwrap();
        assert!(e.to_string().contains("requires a job secret"), "{e}");
        join(1, 2, "auth-none", addr, None, &secret)
            .unwrap()
            .barrier()
            .unwrap();
        r0.join().unwrap().unwrap();
    });
    let (l, addr) = listener();
    std::thread::scope(|s| {
        let r0 =
            s.spawn(move || Bootstrap::tcp(0, 2, "auth-none-0", addr, Some(l), TIMEOUT)?.barrier());
        let e = join(1, 2, "auth-none-0", addr, None, &secret)
            .err()
            .unwrap();
        assert!(e.to_string().contains("rank 0 runs without one"), "{e}");
        Bootstrap::tcp(1, 2, "auth-none-0", addr, None, TIMEOUT)
            .unwrap()
            .barrier()
            .unwrap();
        r0.join().unwrap().unwrap();
    });
}

#[test]
fn an_impostor_claiming_a_rank_first_is_refused_and_not_counted() {
    let secret = JobSecret::generate().unwrap();
    let (l, addr) = listener();
    std::thread::scope(|s| {
        let r0 = root(s, 3, "auth-impostor", l, addr, &secret);
        // Claims rank 1 before the real one, with a made-up proof.
        let mut impostor = TcpStream::connect(addr).unwrap();
        impostor
            .write_all(&hello_with_nonce(1, "auth-impostor"))
            .unwrap();
        read_hello(&mut impostor);
        let mut confirm = CONFIRM.to_vec();
        confirm.extend([0x55; PROOF_BYTES]);
        impostor.write_all(&confirm).unwrap();
        assert!(ends_unanswered(&mut impostor), "the impostor got a verdict");
        // The real rank 1 is not told its rank is taken: the impostor never held it.
        the_others_join(s, 3, "auth-impostor", addr, &secret);
        r0.join().unwrap().unwrap();
    });
}

#[test]
fn a_hello_replayed_from_an_earlier_job_is_refused() {
    let secret = JobSecret::generate().unwrap();
    let run = "auth-replay";
    // The earlier job: rank 1 reaches rank 0 through a proxy that records what it sends.
    let recorded = Arc::new(Mutex::new(Vec::new()));
    {
        let (l, addr) = listener();
        let proxy = TcpListener::bind("127.0.0.1:0").unwrap();
        let via = proxy.local_addr().unwrap();
        std::thread::scope(|s| {
            let r0 = root(s, 2, run, l, addr, &secret);
            let rec = Arc::clone(&recorded);
            s.spawn(move || forward_once(&proxy, addr, &rec));
            join(1, 2, run, via, None, &secret)
                .unwrap()
                .barrier()
                .unwrap();
            r0.join().unwrap().unwrap();
        });
    }
    let bytes = recorded.lock().unwrap().clone();
    let hello_len = Hello::wanted(&bytes).unwrap();
    let handshake = &bytes[..hello_len + CONFIRM.len() + PROOF_BYTES];
    // A later job with the same secret and run id: the replay is refused, the real rank joins.
    let (l, addr) = listener();
    std::thread::scope(|s| {
        let r0 = root(s, 2, run, l, addr, &secret);
        let mut replay = TcpStream::connect(addr).unwrap();
        replay.write_all(handshake).unwrap();
        read_hello(&mut replay);
        assert!(
            ends_unanswered(&mut replay),
            "the replayed hello got a verdict"
        );
        join(1, 2, run, addr, None, &secret)
            .unwrap()
            .barrier()
            .unwrap();
        r0.join().unwrap().unwrap();
    });
}

#[test]
fn callers_that_stall_mid_handshake_hold_up_no_one() {
    let secret = JobSecret::generate().unwrap();
    repeat(5, 5, |rep| {
        let run = format!("auth-stall-{rep}");
        let (l, addr) = listener();
        let mut l = Some(l);
        // One stops after our hello without confirming, one halfway through its hello.
        let mut stalled = TcpStream::connect(addr).unwrap();
        stalled.write_all(&hello_with_nonce(1, &run)).unwrap();
        let mut half = TcpStream::connect(addr).unwrap();
        half.write_all(&hello_with_nonce(2, &run)[..9]).unwrap();
        std::thread::scope(|s| {
            let hs: Vec<_> = (0..3)
                .map(|r| {
                    let (secret, run, l) = (secret.clone(), run.clone(), l.take());
                    s.spawn(move || -> Result<(), String> {
                        join(r, 3, &run, addr, l, &secret)
                            .and_then(|mut b| b.barrier())
                            .map_err(|e| format!("rank {r}: {e}"))
                    })
                })
                .collect();
            hs.into_iter()
                .map(|h| h.join().unwrap_or_else(|_| Err("panicked".into())))
                .collect()
        })
    });
}

/// Takes one connection on `proxy`, forwards it both ways to `to`, and records what the
/// caller sent.
fn forward_once(proxy: &TcpListener, to: SocketAddr, rec: &Mutex<Vec<u8>>) {
    let (mut a, _) = proxy.accept().unwrap();
    let mut b = TcpStream::connect(to).unwrap();
    let (mut a2, mut b2) = (a.try_clone().unwrap(), b.try_clone().unwrap());
    std::thread::scope(|s| {
        s.spawn(move || {
            let _ = std::io::copy(&mut b2, &mut a2);
            let _ = a2.shutdown(std::net::Shutdown::Write);
        });
        let mut buf = [0u8; 4096];
        while let Ok(n @ 1..) = a.read(&mut buf) {
            rec.lock().unwrap().extend_from_slice(&buf[..n]);
            if b.write_all(&buf[..n]).is_err() {
                break;
            }
        }
        let _ = b.shutdown(std::net::Shutdown::Write);
    });
}

#[test]
fn a_refused_caller_is_named_by_its_address() {
    use pto_transport::Transport;
    use pto_transport::tcp::{TcpOptions, TcpTransport};
    let mut o = TcpOptions::new(0, "auth-addr");
    o.secret = Some(JobSecret::generate().unwrap());
    let t = TcpTransport::new(o).unwrap();
    let (mut l, h) = t.listen("127.0.0.1:0".parse().unwrap()).unwrap();
    let mut impostor = TcpStream::connect(h.addr).unwrap();
    let me = impostor.local_addr().unwrap();
    let caller = std::thread::spawn(move || {
        impostor
            .write_all(&hello_with_nonce(1, "auth-addr"))
            .unwrap();
        read_hello(&mut impostor);
        let mut confirm = CONFIRM.to_vec();
        confirm.extend([0x55; PROOF_BYTES]);
        impostor.write_all(&confirm).unwrap();
        ends_unanswered(&mut impostor)
    });
    let mut st = Default::default();
    let start = std::time::Instant::now();
    let e = loop {
        match t.accept(&mut l, &mut st) {
            Ok(Some(_)) => panic!("the impostor came out as a connection"),
            Ok(None) => {}
            Err(e) => break e,
        }
        assert!(start.elapsed() < TIMEOUT, "the accept never settled");
        t.wait_accept(&l, std::slice::from_ref(&st), Duration::from_millis(10));
    };
    assert!(
        caller.join().unwrap(),
        "the impostor got more than our hello"
    );
    assert!(e.retryable, "{e}");
    assert!(e.to_string().contains(&me.to_string()), "{e}");
    assert!(e.to_string().contains("claiming rank 1"), "{e}");
    assert!(
        e.to_string().contains("proof of the job secret is wrong"),
        "{e}"
    );
}
