//! `pto-launch bench --workload transport`: the TCP transport on loopback, two ranks on two
//! threads. A small-message round trip (8 bytes there and back, both sides polling) and bulk
//! bandwidth (messages of `--message-bytes`, up to 8 in flight, until an acknowledgement
//! comes back).

use std::fmt;
use std::time::{Duration, Instant};

use crate::transport::tcp::{TcpConn, TcpListen, TcpOptions, TcpTransport};
use crate::transport::wire::ListenHandle;
use crate::transport::{Completion, Conn, Region, Registration, Transport, TransportError};

/// Round trips timed per run.
const ROUND_TRIPS: u32 = 20_000;
/// Bytes moved per bandwidth run.
const BULK_BYTES: usize = 256 << 20;
/// Sends in flight at once in the bandwidth run.
const IN_FLIGHT: usize = 8;

/// The figures of a transport bench.
#[derive(Clone, Debug, serde::Serialize)]
pub struct TransportResult {
    /// Always `transport`.
    pub workload: &'static str,
    /// Median round trip of an 8-byte message, µs.
    pub rtt_us: f64,
    /// 99th percentile round trip, µs.
    pub rtt_p99_us: f64,
    /// Bytes per bulk message.
    pub message_bytes: usize,
    /// Median bulk bandwidth over the runs, GB/s (10^9 bytes).
    pub bandwidth_gbps: f64,
    /// Runs measured.
    pub runs: u32,
}

/// Runs the round-trip and bandwidth measurements `runs` times (after a warm-up).
pub fn run_transport_bench(
    message_bytes: usize,
    runs: u32,
) -> Result<TransportResult, TransportError> {
    if message_bytes == 0 || message_bytes > 64 << 20 {
        return Err(TransportError::invalid(format!(
            "--message-bytes {message_bytes}: use 1 byte to 64 MiB"
        )));
    }
    let (a, b) = (tcp(1)?, tcp(0)?);
    let (mut l, h) = b.listen("127.0.0.1:0".parse().unwrap_or_else(|_| unreachable!()))?;
    let (mut ca, mut cb) = connect_pair(&a, &b, &mut l, &h)?;
    let mut rtts = Vec::new();
    let mut gbps = Vec::new();
    for run in 0..=runs.max(1) {
        let (r, g) = std::thread::scope(|s| {
            let echo = s.spawn(|| serve(&b, &mut cb, message_bytes));
            let r = ping(&a, &mut ca, message_bytes);
            let e = echo.join();
            match (r, e) {
                (Ok(x), Ok(Ok(()))) => Ok(x),
                (Err(e), _) | (_, Ok(Err(e))) => Err(e),
                (_, Err(_)) => Err(TransportError::invalid("the echo thread panicked")),
            }
        })?;
        // Run 0 warms up.
        if run > 0 {
            rtts.extend(r);
            gbps.push(g);
        }
    }
    rtts.sort_by(f64::total_cmp);
    gbps.sort_by(f64::total_cmp);
    Ok(TransportResult {
        workload: "transport",
        rtt_us: rtts[rtts.len() / 2],
        rtt_p99_us: rtts[rtts.len() * 99 / 100],
        message_bytes,
        bandwidth_gbps: gbps[gbps.len() / 2],
        runs: gbps.len() as u32,
    })
}

fn tcp(rank: u32) -> Result<TcpTransport, TransportError> {
    TcpTransport::new(TcpOptions::new(
        rank,
        format!("bench-{}", std::process::id()),
    ))
}

fn connect_pair(
    a: &TcpTransport,
    b: &TcpTransport,
    l: &mut TcpListen,
    h: &ListenHandle,
) -> Result<(TcpConn, TcpConn), TransportError> {
    let (mut cs, mut as_) = (Default::default(), Default::default());
    let (mut x, mut y) = (None, None);
    let start = Instant::now();
    while x.is_none() || y.is_none() {
        if x.is_none() {
            x = a.connect(h, &mut cs)?;
        }
        if y.is_none() {
            y = b.accept(l, &mut as_)?;
        }
        if start.elapsed() > Duration::from_secs(10) {
            return Err(TransportError::invalid("the loopback pair did not connect"));
        }
    }
    Ok((
        x.unwrap_or_else(|| unreachable!()),
        y.unwrap_or_else(|| unreachable!()),
    ))
}

/// Polls `id` to completion (spinning: both sides own a CPU), bounded.
fn complete(c: &mut TcpConn, id: crate::transport::ReqId) -> Result<Completion, TransportError> {
    let start = Instant::now();
    loop {
        if let Some(done) = c.test(id)? {
            return Ok(done);
        }
        if start.elapsed() > Duration::from_secs(30) {
            return Err(TransportError::invalid(
                "a request did not complete in 30 s",
            ));
        }
        std::hint::spin_loop();
    }
}

/// Posts until a request slot is free, bounded like [`complete`].
fn post(
    c: &mut TcpConn,
    mut try_post: impl FnMut(&mut TcpConn) -> Result<Option<crate::transport::ReqId>, TransportError>,
) -> Result<crate::transport::ReqId, TransportError> {
    let start = Instant::now();
    loop {
        if let Some(id) = try_post(c)? {
            return Ok(id);
        }
        if start.elapsed() > Duration::from_secs(30) {
            return Err(TransportError::invalid("no request slot freed up in 30 s"));
        }
        std::hint::spin_loop();
    }
}

fn post_send(
    c: &mut TcpConn,
    mr: &Registration,
    data: &[u8],
) -> Result<crate::transport::ReqId, TransportError> {
    post(c, |c| c.isend(mr, data))
}

fn post_recv(c: &mut TcpConn, max: usize) -> Result<crate::transport::ReqId, TransportError> {
    post(c, |c| c.irecv(max))
}

/// The timing side: round trips, then bulk sends until the acknowledgement.
fn ping(t: &TcpTransport, c: &mut TcpConn, bulk: usize) -> Result<(Vec<f64>, f64), TransportError> {
    let small = [0u8; 8];
    let buf = vec![7u8; bulk];
    let mr = t.register(&[Region::of(&small), Region::of(&buf)])?;
    let mut rtts = Vec::with_capacity(ROUND_TRIPS as usize);
    for _ in 0..ROUND_TRIPS {
        let start = Instant::now();
        let r = post_recv(c, 8)?;
        let s = post_send(c, &mr, &small)?;
        complete(c, s)?;
        complete(c, r)?;
        rtts.push(start.elapsed().as_secs_f64() * 1e6);
    }
    let messages = BULK_BYTES.div_ceil(bulk);
    let start = Instant::now();
    let ack = post_recv(c, 8)?;
    let mut inflight = std::collections::VecDeque::new();
    for _ in 0..messages {
        if inflight.len() == IN_FLIGHT
            && let Some(id) = inflight.pop_front()
        {
            complete(c, id)?;
        }
        inflight.push_back(post_send(c, &mr, &buf)?);
    }
    for id in inflight {
        complete(c, id)?;
    }
    complete(c, ack)?;
    let secs = start.elapsed().as_secs_f64();
    Ok((rtts, (messages * bulk) as f64 / secs / 1e9))
}

/// The echoing side: answers every round trip, then receives the bulk messages and
/// acknowledges them.
fn serve(t: &TcpTransport, c: &mut TcpConn, bulk: usize) -> Result<(), TransportError> {
    let small = [0u8; 8];
    let mr = t.register(&[Region::of(&small)])?;
    for _ in 0..ROUND_TRIPS {
        let r = post_recv(c, 8)?;
        complete(c, r)?;
        let s = post_send(c, &mr, &small)?;
        complete(c, s)?;
    }
    let messages = BULK_BYTES.div_ceil(bulk);
    let mut inflight = std::collections::VecDeque::new();
    let mut got = 0;
    while got < messages {
        while inflight.len() < IN_FLIGHT.min(messages - got) {
            inflight.push_back(post_recv(c, bulk)?);
        }
        if let Some(id) = inflight.pop_front() {
            complete(c, id)?;
            got += 1;
        }
    }
    let s = post_send(c, &mr, &small)?;
    complete(c, s)?;
    Ok(())
}

impl fmt::Display for TransportResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use crate::human::{count, sig3};
        write!(
            f,
            "transport (TCP, loopback): 8-byte round trip median {} µs (p99 {} µs); bulk {} \
             GB/s with {}-byte messages (median of {})",
            sig3(self.rtt_us),
            sig3(self.rtt_p99_us),
            sig3(self.bandwidth_gbps),
            self.message_bytes,
            count(self.runs.into(), "run")
        )
    }
}
