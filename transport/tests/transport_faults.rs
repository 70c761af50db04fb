//! Failures injected at every step of connect, accept, send, receive and registration: the
//! error reaches the caller, every resource is given back (sockets, connections, requests,
//! registrations), and a retry with fresh state succeeds.

mod transport_util;

use std::time::{Duration, Instant};

use pto_transport::faulty::{FaultPlan, Faulty, Op};
use pto_transport::tcp::TcpTransport;
use pto_transport::{Conn, ErrorKind, LiveResources, Progress, Region, Transport};
use transport_util::*;

/// Steps `op` takes on a clean connection (plan never fires).
fn clean_steps(op: Op) -> u32 {
    let a = Faulty::new(tcp(1, "job"), FaultPlan { op, at: u32::MAX });
    let b = Faulty::new(tcp(0, "job"), FaultPlan { op, at: u32::MAX });
    let (mut l, h) = b.listen("127.0.0.1:0".parse().unwrap()).unwrap();
    let _pair = pair(&a, &b, &mut l, &h);
    a.seen() + b.seen()
}

/// Drives both sides until the one with the planned fault has failed and the other has
/// settled, then drops whatever came out.
///
/// A dial dropped at its first step may or may not have reached the listener (the kernel may
/// have completed the handshake before the socket closed). Rather than wait a while to
/// decide, the test asks the listener: it dials once more itself, hangs up, and drives the
/// accept side until that marker connection comes out. Connections are accepted in order,
/// so by then the dropped dial has come out too if it ever reached the listener.
fn drive_to_failure<A: Transport, B: Transport>(
    a: &A,
    b: &B,
    l: &mut B::Listener,
    h: &pto_transport::wire::ListenHandle,
) -> pto_transport::TransportError {
    let mut cs = A::ConnectState::default();
    let mut as_ = B::AcceptState::default();
    let start = Instant::now();
    let (mut c, mut s) = (Side::Pending, Side::Pending);
    // The local address of the marker connection, once dialed; whether it came out.
    let mut marker: Option<std::net::SocketAddr> = None;
    let mut marker_out = false;
    loop {
        if !c.settled() {
            c = match a.connect(h, &mut cs) {
                Ok(Some(x)) => Side::Conn(x),
                Ok(None) => Side::Pending,
                Err(e) => Side::Failed(e),
            };
        }
        if !s.settled() || (marker.is_some() && !marker_out) {
            let r = b.accept(l, &mut as_);
            let from_marker = |e: &pto_transport::TransportError| {
                marker.is_some_and(|m| e.to_string().contains(&m.to_string()))
            };
            match r {
                Err(e) if from_marker(&e) => marker_out = true,
                _ if s.settled() => {}
                Ok(Some(x)) => s = Side::Conn(x),
                Ok(None) => {}
                Err(e) => s = Side::Failed(e),
            }
        }
        let failed = matches!(c, Side::Failed(_)) || matches!(s, Side::Failed(_));
        if failed && c.settled() && !s.settled() && as_.is_idle() && marker.is_none() {
            // The accept side has heard nothing: dial the marker and hang up.
            let m = std::net::TcpStream::connect(h.addr).expect("the marker dials the listener");
            marker = Some(m.local_addr().unwrap());
        }
        if failed && c.settled() && (s.settled() || marker_out) && (marker.is_none() || marker_out)
        {
            break;
        }
        assert!(start.elapsed() < LIMIT, "never settled");
        std::thread::sleep(Duration::from_micros(100));
    }
    // A connection that came out on the side that did not fail must find the peer gone.
    let injected_of =
        |e: &pto_transport::TransportError| (e.kind == ErrorKind::Injected).then(|| e.clone());
    let injected = match (&c, &s) {
        (Side::Failed(e), _) if e.kind == ErrorKind::Injected => injected_of(e),
        (_, Side::Failed(e)) => injected_of(e),
        _ => None,
    };
    if let Side::Conn(mut x) = c {
        assert!(recv(&mut x, 16).is_err());
    }
    if let Side::Conn(mut x) = s {
        assert!(recv(&mut x, 16).is_err());
    }
    assert!(cs.is_idle() && as_.is_idle());
    injected.expect("the planned step failed")
}

fn exchange<A: Transport, B: Transport>(
    a: &A,
    b: &B,
    l: &mut B::Listener,
    h: &pto_transport::wire::ListenHandle,
) {
    let (mut ca, mut cb) = pair(a, b, l, h);
    let m = pattern(1000, 42);
    let mr = a.register(&[Region::of(&m)]).unwrap();
    send(&mut ca, &mr, &m).unwrap();
    assert_eq!(recv(&mut cb, 1000).unwrap(), m);
}

fn zero_but_listeners(t: LiveResources) {
    assert_eq!(t.without_listeners(), LiveResources::default(), "{t:?}");
}

/// `a` connects to `b` until the planned step `k` fails: nothing but `b`'s listener stays
/// live, and a retry with fresh state connects and moves a message. Returns the error.
fn fail_then_retry<A: Transport, B: Transport>(
    a: &A,
    b: &B,
    k: u32,
) -> pto_transport::TransportError {
    let (mut l, h) = b.listen("127.0.0.1:0".parse().unwrap()).unwrap();
    let e = drive_to_failure(a, b, &mut l, &h);
    zero_but_listeners(a.live());
    zero_but_listeners(b.live());
    exchange(a, b, &mut l, &h);
    drop(l);
    assert!(a.live().is_zero() && b.live().is_zero(), "step {k}");
    e
}

#[test]
fn a_failure_at_any_step_of_connect_gives_everything_back_and_a_retry_succeeds() {
    let steps = clean_steps(Op::Connect);
    assert_eq!(steps, 5, "socket, dial, hello out, hello in, confirm out");
    for k in 1..=steps {
        let a = Faulty::new(
            tcp(1, "job"),
            FaultPlan {
                op: Op::Connect,
                at: k,
            },
        );
        let b = tcp(0, "job");
        let e = fail_then_retry(&a, &b, k);
        assert!(e.retryable, "step {k}: {e}");
        assert!(a.fired());
    }
}

#[test]
fn a_failure_at_any_step_of_accept_gives_everything_back_and_a_retry_succeeds() {
    let steps = clean_steps(Op::Accept);
    assert_eq!(steps, 4, "socket, hello in, hello out, confirm in");
    for k in 1..=steps {
        let a = tcp(1, "job");
        let b = Faulty::new(
            tcp(0, "job"),
            FaultPlan {
                op: Op::Accept,
                at: k,
            },
        );
        fail_then_retry(&a, &b, k);
        assert!(b.fired());
    }
}

#[test]
fn with_a_job_secret_a_failure_at_any_step_still_gives_everything_back() {
    let secret = pto_transport::secret::JobSecret::generate().unwrap();
    for (op, steps) in [(Op::Connect, 5), (Op::Accept, 4)] {
        for k in 1..=steps {
            let plan = FaultPlan { op, at: k };
            let (a, b) = (
                tcp_with_secret(1, "job", &secret),
                tcp_with_secret(0, "job", &secret),
            );
            let fired = if op == Op::Connect {
                let a = Faulty::new(a, plan);
                fail_then_retry(&a, &b, k);
                a.fired()
            } else {
                let b = Faulty::new(b, plan);
                fail_then_retry(&a, &b, k);
                b.fired()
            };
            assert!(fired, "{op:?} step {k}");
        }
    }
}

#[test]
fn a_failed_send_or_receive_aborts_the_connection_and_fails_what_was_pending() {
    // For receives, step 1 is the receive left pending.
    for (op, ks) in [(Op::Send, 1..=3), (Op::Recv, 2..=4)] {
        for k in ks {
            let a = Faulty::new(tcp(1, "job"), FaultPlan { op, at: k });
            let b = tcp(0, "job");
            let (mut l, h) = b.listen("127.0.0.1:0".parse().unwrap()).unwrap();
            let (mut ca, mut cb) = pair(&a, &b, &mut l, &h);
            let m = pattern(100, 1);
            let mr = a.register(&[Region::of(&m)]).unwrap();
            let mut pending = vec![ca.irecv(64).unwrap().unwrap()];
            let mut sent = 0;
            let e = loop {
                let r = match op {
                    Op::Send => ca.isend(&mr, &m).map(|id| {
                        let start = Instant::now();
                        while ca.test(id.unwrap()).unwrap().is_none() {
                            assert!(start.elapsed() < LIMIT);
                            ca.wait(Duration::from_millis(1));
                        }
                        sent += 1;
                    }),
                    _ => ca.irecv(64).map(|id| pending.push(id.unwrap())),
                };
                if let Err(e) = r {
                    break e;
                }
            };
            assert_eq!(e.kind, ErrorKind::Injected, "{op:?} {k}: {e}");
            assert_eq!(pending.len() as u32, if op == Op::Recv { k - 1 } else { 1 });
            for p in pending {
                assert_eq!(ca.test(p).unwrap_err().kind, ErrorKind::Aborted);
            }
            assert_eq!(a.live().requests, 0);
            assert_eq!(ca.irecv(1).unwrap_err().kind, ErrorKind::Aborted);
            // The peer gets what was sent before, then sees the end.
            for _ in 0..sent {
                assert_eq!(recv(&mut cb, 100).unwrap(), m);
            }
            assert_eq!(recv(&mut cb, 100).unwrap_err().kind, ErrorKind::PeerClosed);
            ca.close().unwrap();
            drop((ca, cb, mr));
            zero_but_listeners(a.live());
            zero_but_listeners(b.live());
            exchange(&a, &b, &mut l, &h);
        }
    }
}

#[test]
fn a_failed_registration_gives_back_the_regions_before_it() {
    let bufs: Vec<Vec<u8>> = (0..3).map(|i| vec![i as u8; 64]).collect();
    let regions: Vec<Region> = bufs.iter().map(|b| Region::of(b)).collect();
    for k in 1..=3 {
        let t = Faulty::new(
            tcp(0, "job"),
            FaultPlan {
                op: Op::Register,
                at: k,
            },
        );
        // Held before, through the inner transport (not counted by the plan).
        let held = t.inner().register(&regions[2..]).unwrap();
        assert_eq!(t.live().registrations, 1);
        let e = t.register(&regions).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Injected);
        assert_eq!(t.live().registrations, 1, "k = {k}");
        let all = t.register(&regions).unwrap();
        assert_eq!(t.live().registrations, 3);
        drop(held);
        assert_eq!(t.live().registrations, 3, "region 2 is still held by `all`");
        drop(all);
        assert!(t.live().is_zero());
    }
}

#[test]
fn dropping_a_pending_connect_or_accept_releases_it() {
    let a: TcpTransport = tcp(1, "job");
    let b = tcp(0, "job");
    // A listener that never answers the hello: the connect waits for it.
    let mute = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let mute_h = pto_transport::wire::ListenHandle {
        rank: 0,
        addr: mute.local_addr().unwrap(),
    };
    let mut cs = pto_transport::tcp::TcpConnectState::default();
    // A caller that never sends its hello: the accept waits for it.
    let (mut l, h) = b.listen("127.0.0.1:0".parse().unwrap()).unwrap();
    let _silent = std::net::TcpStream::connect(h.addr).unwrap();
    let mut as_ = pto_transport::tcp::TcpAcceptState::default();
    let start = Instant::now();
    while cs.steps() < 3 || as_.steps() < 1 {
        assert!(a.connect(&mute_h, &mut cs).unwrap().is_none());
        assert!(b.accept(&mut l, &mut as_).unwrap().is_none());
        assert!(start.elapsed() < LIMIT);
        std::thread::sleep(Duration::from_micros(100));
    }
    assert_eq!((a.live().sockets, b.live().sockets), (1, 1));
    drop((cs, as_));
    zero_but_listeners(a.live());
    zero_but_listeners(b.live());
}
