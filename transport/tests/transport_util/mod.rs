//! Helpers for the transport tests: driving connect and accept of two transports in one
//! thread, and blocking sends and receives, every loop bounded.
#![allow(dead_code)]

use std::time::{Duration, Instant};

use pto_transport::tcp::{TcpOptions, TcpTransport};
use pto_transport::wire::ListenHandle;
use pto_transport::{Completion, Conn, Progress, Registration, Transport, TransportError};

/// Every loop here gives up after this long.
pub const LIMIT: Duration = Duration::from_secs(10);

/// A TCP transport for `rank` of job `run`, with short timeouts.
pub fn tcp(rank: u32, run: &str) -> TcpTransport {
    let mut o = TcpOptions::new(rank, run);
    o.connect_timeout = Duration::from_secs(5);
    o.hello_timeout = Duration::from_secs(2);
    TcpTransport::new(o).unwrap()
}

/// As [`tcp`], every hello proving `secret`.
pub fn tcp_with_secret(
    rank: u32,
    run: &str,
    secret: &pto_transport::secret::JobSecret,
) -> TcpTransport {
    let mut o = TcpOptions::new(rank, run);
    o.connect_timeout = Duration::from_secs(5);
    o.hello_timeout = Duration::from_secs(2);
    o.secret = Some(secret.clone());
    TcpTransport::new(o).unwrap()
}

/// The outcome of driving one side until it settles.
pub enum Side<C> {
    Conn(C),
    Failed(TransportError),
    Pending,
}

impl<C> Side<C> {
    pub fn settled(&self) -> bool {
        !matches!(self, Side::Pending)
    }
}

/// Drives a connect on `a` and an accept on `b` in turns until both have settled (a
/// connection or an error), or `patience` passed with one side still pending.
pub fn drive<A: Transport, B: Transport>(
    a: &A,
    b: &B,
    listener: &mut B::Listener,
    handle: &ListenHandle,
    cs: &mut A::ConnectState,
    as_: &mut B::AcceptState,
    patience: Duration,
) -> (Side<A::Conn>, Side<B::Conn>) {
    let start = Instant::now();
    let mut c = Side::Pending;
    let mut s = Side::Pending;
    while start.elapsed() < patience && !(c.settled() && s.settled()) {
        if !c.settled() {
            match a.connect(handle, cs) {
                Ok(Some(x)) => c = Side::Conn(x),
                Ok(None) => {}
                Err(e) => c = Side::Failed(e),
            }
        }
        if !s.settled() {
            match b.accept(listener, as_) {
                Ok(Some(x)) => s = Side::Conn(x),
                Ok(None) => {}
                Err(e) => s = Side::Failed(e),
            }
        }
        std::thread::sleep(Duration::from_micros(100));
    }
    (c, s)
}

/// A connected pair `a -> b`, from fresh states.
pub fn pair<A: Transport, B: Transport>(
    a: &A,
    b: &B,
    listener: &mut B::Listener,
    handle: &ListenHandle,
) -> (A::Conn, B::Conn) {
    let mut cs = A::ConnectState::default();
    let mut as_ = B::AcceptState::default();
    match drive(a, b, listener, handle, &mut cs, &mut as_, LIMIT) {
        (Side::Conn(x), Side::Conn(y)) => {
            assert!(cs.is_idle() || cs.steps() > 0);
            (x, y)
        }
        (x, y) => panic!(
            "no connection: connect {}, accept {}",
            describe(&x),
            describe(&y)
        ),
    }
}

pub fn describe<C>(s: &Side<C>) -> String {
    match s {
        Side::Conn(_) => "connected".into(),
        Side::Failed(e) => format!("failed: {e}"),
        Side::Pending => "pending".into(),
    }
}

/// Sends `data` (inside `mr`) and waits for the send to complete.
pub fn send<C: Conn>(c: &mut C, mr: &Registration, data: &[u8]) -> Result<(), TransportError> {
    let start = Instant::now();
    let id = loop {
        if let Some(id) = c.isend(mr, data)? {
            break id;
        }
        assert!(start.elapsed() < LIMIT, "isend never found a slot");
        c.wait(Duration::from_millis(1));
    };
    loop {
        if let Some(done) = c.test(id)? {
            assert_eq!(done, Completion::Sent(data.len()));
            return Ok(());
        }
        assert!(start.elapsed() < LIMIT, "a send never completed");
        c.wait(Duration::from_millis(1));
    }
}

/// Receives one message of at most `max` bytes.
pub fn recv<C: Conn>(c: &mut C, max: usize) -> Result<Vec<u8>, TransportError> {
    let start = Instant::now();
    let id = c.irecv(max)?.expect("a free request slot");
    loop {
        match c.test(id)? {
            Some(Completion::Received(m)) => return Ok(m),
            Some(other) => panic!("a receive completed as {other:?}"),
            None => {}
        }
        assert!(start.elapsed() < LIMIT, "a receive never completed");
        c.wait(Duration::from_millis(1));
    }
}

/// A message of `len` bytes whose content depends on `seed`, to check on arrival.
pub fn pattern(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}
