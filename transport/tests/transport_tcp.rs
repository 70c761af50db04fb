//! The TCP transport on loopback: messages in order and intact both ways, bad input refused
//! with typed errors, strangers refused on both sides, a peer vanishing mid-message, abort
//! and close, and every resource given back.

mod transport_util;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use pto_transport::requests::MAX_REQUESTS;
use pto_transport::tcp::TcpTransport;
use pto_transport::wire::{CONFIRM, Hello, ListenHandle, WireError, encode_frame};
use pto_transport::{Conn, ErrorKind, Region, Transport};
use transport_util::*;

fn listening(t: &TcpTransport) -> (pto_transport::tcp::TcpListen, ListenHandle) {
    t.listen("127.0.0.1:0".parse().unwrap()).unwrap()
}

#[test]
fn messages_arrive_in_order_and_intact_both_ways_at_once() {
    let a = tcp(1, "job");
    let b = tcp(0, "job");
    let (mut l, h) = listening(&b);
    let (mut ca, mut cb) = pair(&a, &b, &mut l, &h);
    assert_eq!((ca.peer(), cb.peer()), (0, 1));
    let sizes = [0usize, 1, 7, 4096, 65_537, 3 << 20, 100, 9 << 20];
    std::thread::scope(|s| {
        for (side, conn, t) in [(1u64, &mut ca, &a), (2u64, &mut cb, &b)] {
            s.spawn(move || {
                let msgs: Vec<Vec<u8>> = sizes
                    .iter()
                    .enumerate()
                    .map(|(i, &n)| pattern(n, side * 100 + i as u64))
                    .collect();
                let regions: Vec<Region> = msgs
                    .iter()
                    .filter(|m| !m.is_empty())
                    .map(|m| Region::of(m))
                    .collect();
                let mr = t.register(&regions).unwrap();
                let other = 3 - side;
                // Post every send at once, then receive what the other side sent.
                let ids: Vec<_> = msgs
                    .iter()
                    .map(|m| {
                        if m.is_empty() {
                            // An empty slice has no address to register; a one-byte
                            // region of any message covers it.
                            conn.isend(&mr, &msgs[1][..0]).unwrap().unwrap()
                        } else {
                            conn.isend(&mr, m).unwrap().unwrap()
                        }
                    })
                    .collect();
                for (i, &n) in sizes.iter().enumerate() {
                    let got = recv(conn, n).unwrap();
                    assert!(
                        got == pattern(n, other * 100 + i as u64),
                        "message {i} differs"
                    );
                }
                for id in ids {
                    let start = Instant::now();
                    while conn.test(id).unwrap().is_none() {
                        assert!(start.elapsed() < LIMIT);
                        conn.wait(Duration::from_millis(1));
                    }
                }
            });
        }
    });
    drop((ca, cb, l));
    assert!(a.live().is_zero(), "{:?}", a.live());
    assert!(b.live().is_zero(), "{:?}", b.live());
}

#[test]
fn bad_posts_get_typed_errors_and_the_connection_goes_on() {
    let a = tcp(1, "job");
    let b = tcp(0, "job");
    let (mut l, h) = listening(&b);
    let (mut ca, mut cb) = pair(&a, &b, &mut l, &h);
    let buf = pattern(256, 1);
    let mr = a.register(&[Region::of(&buf[..128])]).unwrap();

    // Outside the registration.
    let e = ca.isend(&mr, &buf[100..200]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::NotRegistered, "{e}");

    // A message longer than the receive posted for it fails that receive only.
    send(&mut ca, &mr, &buf[..100]).unwrap();
    let e = recv(&mut cb, 10).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Truncated, "{e}");
    send(&mut ca, &mr, &buf[..5]).unwrap();
    assert_eq!(recv(&mut cb, 10).unwrap(), &buf[..5]);

    // A full pool says "try later", and a consumed id is stale.
    let ids: Vec<_> = (0..MAX_REQUESTS)
        .map(|_| cb.irecv(16).unwrap().unwrap())
        .collect();
    assert_eq!(cb.irecv(16).unwrap(), None);
    assert_eq!(b.live().requests, MAX_REQUESTS);
    send(&mut ca, &mr, &buf[..3]).unwrap();
    let start = Instant::now();
    let got = loop {
        if let Some(c) = cb.test(ids[0]).unwrap() {
            break c;
        }
        assert!(start.elapsed() < LIMIT);
        cb.wait(Duration::from_millis(1));
    };
    assert_eq!(got, pto_transport::Completion::Received(buf[..3].to_vec()));
    assert_eq!(cb.test(ids[0]).unwrap_err().kind, ErrorKind::StaleRequest);
    // An id of another connection is stale too.
    assert_eq!(ca.test(ids[1]).unwrap_err().kind, ErrorKind::StaleRequest);

    // Close releases the pending receives; a second close is a no-op.
    cb.close().unwrap();
    cb.close().unwrap();
    assert_eq!(b.live().requests, 0);
    assert_eq!(cb.test(ids[1]).unwrap_err().kind, ErrorKind::StaleRequest);
    assert_eq!(cb.irecv(1).unwrap_err().kind, ErrorKind::Closed);
    // The peer sees the end.
    let e = recv(&mut ca, 16).unwrap_err();
    assert_eq!(e.kind, ErrorKind::PeerClosed, "{e}");
    drop((ca, cb, mr, l));
    assert!(a.live().is_zero() && b.live().is_zero());
}

#[test]
fn abort_fails_every_pending_request_at_once() {
    let a = tcp(1, "job");
    let b = tcp(0, "job");
    let (mut l, h) = listening(&b);
    let (mut ca, mut cb) = pair(&a, &b, &mut l, &h);
    // Sends the peer never reads, enough to fill both socket buffers, and receives that
    // nothing answers.
    let big = vec![7u8; 8 << 20];
    let mr = a.register(&[Region::of(&big)]).unwrap();
    let sends: Vec<_> = (0..4)
        .map(|_| ca.isend(&mr, &big).unwrap().unwrap())
        .collect();
    let recvs: Vec<_> = (0..4).map(|_| ca.irecv(64).unwrap().unwrap()).collect();
    assert_eq!(ca.test(sends[3]).unwrap(), None);
    ca.abort();
    // Each request reports the abort on its first test, with the peer still silent: the
    // abort waited for nothing.
    for id in sends.iter().chain(&recvs) {
        let e = ca.test(*id).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Aborted, "{e}");
    }
    assert_eq!(a.live().requests, 0);
    assert_eq!(
        ca.isend(&mr, &big[..1]).unwrap_err().kind,
        ErrorKind::Aborted
    );
    assert_eq!(ca.irecv(1).unwrap_err().kind, ErrorKind::Aborted);
    // The peer's receive ends: the stream stopped mid-message or between messages.
    let e = loop {
        match recv(&mut cb, 16 << 20) {
            Ok(m) => assert!(m.iter().all(|&x| x == 7)),
            Err(e) => break e,
        }
    };
    assert!(
        matches!(e.kind, ErrorKind::PeerClosed | ErrorKind::Io(_)),
        "{e}"
    );
    ca.close().unwrap();
    drop((ca, cb, mr, l));
    assert!(a.live().is_zero() && b.live().is_zero());
}

/// Connects to `h` by hand: sends `hello`, reads the answer.
fn raw_caller(h: &ListenHandle, hello: &[u8]) -> (TcpStream, Vec<u8>) {
    let mut s = TcpStream::connect(h.addr).unwrap();
    s.set_read_timeout(Some(LIMIT)).unwrap();
    s.write_all(hello).unwrap();
    let mut fixed = vec![0u8; Hello::FIXED];
    s.read_exact(&mut fixed).unwrap();
    let mut rest = vec![0u8; Hello::wanted(&fixed).unwrap() - Hello::FIXED];
    s.read_exact(&mut rest).unwrap();
    fixed.extend(rest);
    (s, fixed)
}

/// Accepts on `l` until a connection or an error comes out.
fn accept_one(
    b: &TcpTransport,
    l: &mut pto_transport::tcp::TcpListen,
) -> Result<pto_transport::tcp::TcpConn, pto_transport::TransportError> {
    let mut st = Default::default();
    let start = Instant::now();
    loop {
        if let Some(c) = b.accept(l, &mut st)? {
            return Ok(c);
        }
        assert!(start.elapsed() < LIMIT, "accept never settled");
        std::thread::sleep(Duration::from_micros(200));
    }
}

#[test]
fn a_peer_vanishing_mid_message_fails_the_receive_and_says_so() {
    let b = tcp(0, "job");
    let (mut l, h) = listening(&b);
    let hello = Hello::plain(3, "job").encode().unwrap();
    let caller = std::thread::spawn(move || {
        let (mut s, answer) = raw_caller(&h, &hello);
        assert_eq!(Hello::decode(&answer, "job").unwrap().rank, 0);
        s.write_all(&CONFIRM).unwrap();
        let frame = encode_frame(0, &[9u8; 1000]).unwrap();
        s.write_all(&frame[..300]).unwrap();
        // Gone, 300 bytes into a 1012-byte frame.
    });
    let mut cb = accept_one(&b, &mut l).unwrap();
    caller.join().unwrap();
    assert_eq!(cb.peer(), 3);
    let e = recv(&mut cb, 4096).unwrap_err();
    assert_eq!(e.kind, ErrorKind::PeerClosed, "{e}");
    assert!(e.to_string().contains("mid-message"), "{e}");
    drop((cb, l));
    assert!(b.live().is_zero());
}

#[test]
fn strangers_are_refused_on_both_sides_and_the_listener_goes_on() {
    let b = tcp(0, "job-a");
    let (mut l, h) = listening(&b);

    // Another job, through the transport: both sides say which jobs.
    let stranger = tcp(1, "job-b");
    let mut cs = Default::default();
    let mut as_ = Default::default();
    let (c, s) = drive(&stranger, &b, &mut l, &h, &mut cs, &mut as_, LIMIT);
    match c {
        Side::Failed(e) => {
            assert!(
                matches!(e.kind, ErrorKind::Wire(WireError::WrongJob { .. })),
                "{e}"
            );
            assert!(!e.retryable);
            assert!(e.to_string().contains("job-a") && e.to_string().contains("job-b"));
        }
        other => panic!("the stranger {}", describe(&other)),
    }
    match s {
        Side::Failed(e) => {
            assert!(
                matches!(e.kind, ErrorKind::Wire(WireError::WrongJob { .. })),
                "{e}"
            );
            assert!(e.retryable, "the listener can accept again");
        }
        other => panic!("the listener {}", describe(&other)),
    }
    assert!(stranger.live().is_zero());

    // Another version, by hand: refused, and told our hello.
    let mut old = Hello::plain(2, "job-a").encode().unwrap();
    old[4] = 99;
    let caller = std::thread::spawn(move || raw_caller(&h, &old).1);
    let e = accept_one(&b, &mut l).unwrap_err();
    assert!(
        matches!(
            e.kind,
            ErrorKind::Wire(WireError::Version { theirs: 99, .. })
        ),
        "{e}"
    );
    assert!(Hello::decode(&caller.join().unwrap(), "job-a").is_ok());

    // Not our protocol at all: dropped without an answer.
    let junk = std::thread::spawn(move || {
        let mut s = TcpStream::connect(h.addr).unwrap();
        s.write_all(b"GET / HTTP/1.0\r\n\r\n").unwrap();
        s.set_read_timeout(Some(LIMIT)).unwrap();
        let mut v = Vec::new();
        s.read_to_end(&mut v).unwrap_or(0)
    });
    let e = accept_one(&b, &mut l).unwrap_err();
    assert!(
        matches!(e.kind, ErrorKind::Wire(WireError::Magic(_))),
        "{e}"
    );
    assert_eq!(junk.join().unwrap(), 0);

    // The right job still gets in.
    let a = tcp(1, "job-a");
    let (mut ca, mut cb) = pair(&a, &b, &mut l, &h);
    let m = pattern(64, 5);
    let mr = a.register(&[Region::of(&m)]).unwrap();
    send(&mut ca, &mr, &m).unwrap();
    assert_eq!(recv(&mut cb, 64).unwrap(), m);
    drop((ca, cb, mr, l));
    assert!(a.live().is_zero() && b.live().is_zero());
}

#[test]
fn a_silent_caller_is_dropped_after_the_hello_timeout() {
    let mut o = pto_transport::tcp::TcpOptions::new(0, "job");
    o.hello_timeout = Duration::from_millis(100);
    let b = TcpTransport::new(o).unwrap();
    let (mut l, h) = listening(&b);
    let _silent = TcpStream::connect(h.addr).unwrap();
    let start = Instant::now();
    let e = accept_one(&b, &mut l).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Timeout, "{e}");
    assert!(e.retryable);
    // The hello timeout, not something sooner, dropped the caller (`accept_one` bounds the
    // wait from above).
    assert!(start.elapsed() >= Duration::from_millis(100));
    assert_eq!(b.live().without_listeners(), Default::default());
}

#[test]
fn nobody_listening_is_a_bounded_retryable_timeout_that_leaks_nothing() {
    let mut o = pto_transport::tcp::TcpOptions::new(1, "job");
    o.connect_timeout = Duration::from_millis(150);
    let a = TcpTransport::new(o).unwrap();
    // A port nobody listens on: bind one and drop it.
    let addr = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let h = ListenHandle { rank: 0, addr };
    let mut st = Default::default();
    let start = Instant::now();
    let e = loop {
        match a.connect(&h, &mut st) {
            Ok(None) => std::thread::sleep(Duration::from_millis(1)),
            Ok(Some(_)) => panic!("connected to nobody"),
            Err(e) => break e,
        }
        assert!(start.elapsed() < LIMIT);
    };
    assert_eq!(e.kind, ErrorKind::Timeout, "{e}");
    assert!(e.retryable);
    assert!(e.to_string().contains(&addr.to_string()), "{e}");
    // Refused connections were retried until the connect timeout (the loop bounds the wait
    // from above).
    assert!(start.elapsed() >= Duration::from_millis(150));
    assert!(pto_transport::Progress::is_idle(&st));
    assert!(a.live().is_zero(), "{:?}", a.live());
}

#[test]
fn a_caller_that_gave_up_before_our_hello_is_never_handed_out() {
    let b = tcp(0, "job");
    let (mut l, h) = listening(&b);
    // Waited in the backlog, sent its hello, gave up before anyone accepted it.
    let hello = Hello::plain(1, "job").encode().unwrap();
    TcpStream::connect(h.addr)
        .unwrap()
        .write_all(&hello)
        .unwrap();
    let e = accept_one(&b, &mut l).unwrap_err();
    assert_eq!(e.kind, ErrorKind::PeerClosed, "{e}");
    assert!(e.retryable && e.to_string().contains("gave up"), "{e}");
    assert_eq!(b.live().without_listeners(), Default::default());
    // The real rank 1, dialing again, is the connection that comes out.
    let a = tcp(1, "job");
    let (mut ca, mut cb) = pair(&a, &b, &mut l, &h);
    assert_eq!(cb.peer(), 1);
    let m = pattern(64, 3);
    let mr = a.register(&[Region::of(&m)]).unwrap();
    send(&mut ca, &mr, &m).unwrap();
    assert_eq!(recv(&mut cb, 64).unwrap(), m);
}
