//! Bootstrap over TCP: rank 0 listens at the rendezvous address, every other rank connects
//! (retrying with backoff while rank 0 is not up yet), both sides exchange hellos (another
//! job or version is refused), then rank 0 relays: allgather of small per-rank records,
//! broadcast, and a control-plane barrier. Every read, write and connect is bounded.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

use super::wire::{FrameDecoder, Hello, WireError, encode_frame};

/// How long rank 0 waits for a caller's hello before it drops the caller.
const HELLO_TIMEOUT: Duration = Duration::from_secs(1);

/// Largest record a rank contributes to an allgather.
pub const MAX_RECORD: usize = 4096;

/// Why bootstrap failed.
#[derive(Debug, thiserror::Error)]
pub enum BootstrapError {
    /// A socket call failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// The peer sent something this rank refuses.
    #[error("{0}")]
    Wire(#[from] WireError),
    /// A wait ran out.
    #[error("{0} did not complete within the timeout")]
    Timeout(String),
    /// Bad input from the caller or a peer.
    #[error("{0}")]
    Invalid(String),
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> BootstrapError {
    let what = what.into();
    move |source| BootstrapError::Io { what, source }
}

/// One framed, sequenced connection with bounded reads and writes.
struct Link {
    stream: TcpStream,
    decoder: FrameDecoder,
    seq: u64,
    peer: u32,
}

impl Link {
    fn new(stream: TcpStream, timeout: Duration, peer: u32) -> Result<Self, BootstrapError> {
        stream
            .set_read_timeout(Some(timeout))
            .map_err(io("set_read_timeout"))?;
        stream
            .set_write_timeout(Some(timeout))
            .map_err(io("set_write_timeout"))?;
        stream.set_nodelay(true).map_err(io("set_nodelay"))?;
        Ok(Link {
            stream,
            decoder: FrameDecoder::new(),
            seq: 0,
            peer,
        })
    }

    fn send(&mut self, payload: &[u8]) -> Result<(), BootstrapError> {
        let frame = encode_frame(self.seq, payload)?;
        self.seq += 1;
        self.stream
            .write_all(&frame)
            .map_err(io(format!("sending to rank {}", self.peer)))
    }

    fn recv(&mut self) -> Result<Vec<u8>, BootstrapError> {
        let mut buf = [0u8; 4096];
        loop {
            if let Some(f) = self.decoder.next_frame()? {
                return Ok(f);
            }
            let n = self
                .stream
                .read(&mut buf)
                .map_err(io(format!("receiving from rank {}", self.peer)))?;
            if n == 0 {
                return Err(BootstrapError::Invalid(format!(
                    "rank {} closed the connection mid-message",
                    self.peer
                )));
            }
            self.decoder.push(&buf[..n]);
        }
    }
}

/// Reads a hello from `stream`, checked against `run_id`.
fn read_hello(stream: &mut TcpStream, run_id: &str) -> Result<Hello, BootstrapError> {
    let mut b = Vec::new();
    let mut byte = [0u8; 1];
    loop {
        if let Some(n) = Hello::wanted(&b)
            && b.len() >= n
        {
            return Ok(Hello::decode(&b, run_id)?);
        }
        if b.len() > 128 {
            return Err(WireError::Invalid("hello: too long").into());
        }
        let got = stream.read(&mut byte).map_err(io("reading a hello"))?;
        if got == 0 {
            return Err(BootstrapError::Invalid(
                "the peer closed before its hello".into(),
            ));
        }
        b.push(byte[0]);
    }
}

/// A rank's end of the bootstrap: rank 0 holds a link to every other rank, the others one
/// link to rank 0.
pub struct Bootstrap {
    rank: u32,
    ranks: u32,
    links: Vec<Link>,
}

impl Bootstrap {
    /// Joins the job `run_id` of `ranks` ranks at `rendezvous` (rank 0 listens there; pass
    /// port 0 with `listener` bound already to pick a free port). Bounded by `timeout`.
    pub fn join(
        rank: u32,
        ranks: u32,
        run_id: &str,
        rendezvous: SocketAddr,
        listener: Option<TcpListener>,
        timeout: Duration,
    ) -> Result<Self, BootstrapError> {
        if ranks == 0 || rank >= ranks || ranks > 64 {
            return Err(BootstrapError::Invalid(format!(
                "rank {rank} of {ranks}: use 1 to 64 ranks and a rank below their count"
            )));
        }
        let hello = Hello {
            rank,
            run_id: run_id.to_string(),
        }
        .encode()?;
        let deadline = Instant::now() + timeout;
        let mut links = Vec::new();
        if rank == 0 {
            let listener = match listener {
                Some(l) => l,
                None => TcpListener::bind(rendezvous)
                    .map_err(io(format!("listening at {rendezvous}")))?,
            };
            listener
                .set_nonblocking(true)
                .map_err(io("set_nonblocking"))?;
            let mut seen = vec![false; ranks as usize];
            while links.len() + 1 < ranks as usize {
                match listener.accept() {
                    Ok((mut s, _)) => {
                        s.set_nonblocking(false).map_err(io("set_nonblocking"))?;
                        // A caller that says nothing holds up the accept loop for a short
                        // while at most.
                        s.set_read_timeout(Some(timeout.min(HELLO_TIMEOUT)))
                            .map_err(io("set_read_timeout"))?;
                        // A stranger (another job, another version) is refused and dropped;
                        // keep accepting.
                        let Ok(h) = read_hello(&mut s, run_id) else {
                            continue;
                        };
                        if h.rank == 0 || h.rank >= ranks || seen[h.rank as usize] {
                            continue;
                        }
                        s.write_all(&hello).map_err(io("answering a hello"))?;
                        seen[h.rank as usize] = true;
                        links.push(Link::new(s, timeout, h.rank)?);
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        if Instant::now() > deadline {
                            return Err(BootstrapError::Timeout(format!(
                                "waiting for {} rank(s) to connect",
                                ranks as usize - 1 - links.len()
                            )));
                        }
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    Err(e) => return Err(io("accept")(e)),
                }
            }
            links.sort_by_key(|l| l.peer);
        } else {
            let mut backoff = Duration::from_millis(1);
            let mut s = loop {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(BootstrapError::Timeout(format!(
                        "connecting to {rendezvous}"
                    )));
                }
                match TcpStream::connect_timeout(&rendezvous, left) {
                    Ok(s) => break s,
                    Err(_) => {
                        std::thread::sleep(backoff.min(left));
                        backoff = (backoff * 2).min(Duration::from_millis(100));
                    }
                }
            };
            s.set_read_timeout(Some(timeout))
                .map_err(io("set_read_timeout"))?;
            s.write_all(&hello).map_err(io("sending the hello"))?;
            let h = read_hello(&mut s, run_id)?;
            if h.rank != 0 {
                return Err(BootstrapError::Invalid(format!(
                    "the rendezvous answered as rank {}, not rank 0",
                    h.rank
                )));
            }
            links.push(Link::new(s, timeout, 0)?);
        }
        Ok(Bootstrap { rank, ranks, links })
    }

    /// Every rank's `record` (at most [`MAX_RECORD`] bytes), in rank order, on every rank.
    pub fn allgather(&mut self, record: &[u8]) -> Result<Vec<Vec<u8>>, BootstrapError> {
        if record.len() > MAX_RECORD {
            return Err(BootstrapError::Invalid(format!(
                "a record of {} bytes exceeds {MAX_RECORD}",
                record.len()
            )));
        }
        if self.rank == 0 {
            let mut all = vec![record.to_vec()];
            for l in &mut self.links {
                all.push(l.recv()?);
            }
            let packed = pack(&all);
            for l in &mut self.links {
                l.send(&packed)?;
            }
            Ok(all)
        } else {
            self.links[0].send(record)?;
            let all = unpack(&self.links[0].recv()?)?;
            if all.len() != self.ranks as usize {
                return Err(BootstrapError::Invalid(
                    "allgather: wrong record count".into(),
                ));
            }
            Ok(all)
        }
    }

    /// Rank 0's `data` on every rank.
    pub fn broadcast(&mut self, data: &[u8]) -> Result<Vec<u8>, BootstrapError> {
        if self.rank == 0 {
            for l in &mut self.links {
                l.send(data)?;
            }
            Ok(data.to_vec())
        } else {
            self.links[0].recv()
        }
    }

    /// Returns once every rank reached it.
    pub fn barrier(&mut self) -> Result<(), BootstrapError> {
        self.allgather(&[]).map(drop)
    }
}

fn pack(records: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    for r in records {
        out.extend_from_slice(&(r.len() as u32).to_le_bytes());
        out.extend_from_slice(r);
    }
    out
}

fn unpack(mut b: &[u8]) -> Result<Vec<Vec<u8>>, BootstrapError> {
    let mut out = Vec::new();
    while !b.is_empty() {
        if b.len() < 4 {
            return Err(WireError::Truncated("allgather record").into());
        }
        let n = u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize;
        if n > MAX_RECORD || b.len() < 4 + n {
            return Err(WireError::Truncated("allgather record").into());
        }
        out.push(b[4..4 + n].to_vec());
        b = &b[4 + n..];
    }
    Ok(out)
}
