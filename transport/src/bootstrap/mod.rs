//! Bootstrap over any [`Transport`]: rank 0 listens at the rendezvous address (`root`),
//! every other rank connects (the transport retries while rank 0 is not up yet) and waits
//! for rank 0's `verdict`, and rank 0 relays an allgather of small per-rank records, a
//! broadcast and a control-plane barrier. Strangers (another job or version), callers that
//! say nothing and callers that gave up are refused while the job goes on forming. Every
//! wait is bounded by the timeout given at join.

mod root;
mod verdict;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use super::api::{Conn, Progress, Transport};
use super::error::TransportError;
use super::registry::{Region, Registration};
use super::secret::JobSecret;
use super::tcp::{TcpOptions, TcpTransport, backlog_for};
use super::wire::{ListenHandle, WireError};
use verdict::Verdict;

/// Largest record a rank contributes to an allgather, and largest broadcast (an HCCL root
/// info is 4 108 bytes).
pub const MAX_RECORD: usize = 8192;

/// Most ranks a bootstrap joins.
pub const MAX_RANKS: u32 = 1024;

/// Why bootstrap failed.
#[derive(Debug, thiserror::Error)]
pub enum BootstrapError {
    /// A socket call outside the transport failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// The transport failed.
    #[error("{0}")]
    Transport(#[from] TransportError),
    /// The peer sent something this rank refuses.
    #[error("{0}")]
    Wire(#[from] WireError),
    /// A wait ran out.
    #[error("{0} did not complete within the timeout")]
    Timeout(String),
    /// Bad input from the caller or a peer.
    #[error("{0}")]
    Invalid(String),
    /// The job secret could not be had.
    #[error(transparent)]
    Secret(#[from] crate::secret::SecretError),
    /// Rank 0 refused this rank: another caller holds its number.
    #[error(
        "rank 0 refused rank {rank}: a caller from {holder} holds it already (two ranks were \
         given the same number, or another process poses as this rank)"
    )]
    RankTaken {
        /// This rank.
        rank: u32,
        /// Where the holder called from, as rank 0 saw it.
        holder: String,
    },
    /// Rank 0's job has no such rank: the two disagree on the job's size.
    #[error(
        "rank 0 refused rank {rank}: its job has {ranks} ranks; give every rank the same rank count"
    )]
    NoSuchRank {
        /// This rank.
        rank: u32,
        /// Ranks in rank 0's job.
        ranks: u32,
    },
}

/// A rank's end of the bootstrap: rank 0 holds a connection to every other rank (in rank
/// order), the others one connection to rank 0.
pub struct Bootstrap<T: Transport> {
    rank: u32,
    ranks: u32,
    timeout: Duration,
    conns: Vec<T::Conn>,
    // Declared before `scratch`: the registration goes first.
    mr: Registration,
    scratch: Vec<u8>,
    transport: T,
}

impl Bootstrap<TcpTransport> {
    /// Joins job `run_id` of `ranks` ranks over TCP at `rendezvous`, unauthenticated. Rank
    /// 0 listens there, or on `listener` when given (bound already, to pick a free port).
    /// Bounded by `timeout`.
    pub fn tcp(
        rank: u32,
        ranks: u32,
        run_id: &str,
        rendezvous: SocketAddr,
        listener: Option<std::net::TcpListener>,
        timeout: Duration,
    ) -> Result<Self, BootstrapError> {
        Self::tcp_with_secret(rank, ranks, run_id, rendezvous, listener, timeout, None)
    }

    /// As [`Bootstrap::tcp`], every hello proving `secret` (see
    /// [`crate::secret`]): a caller that cannot is refused, logged with its
    /// address, and not counted as the rank it claimed.
    pub fn tcp_with_secret(
        rank: u32,
        ranks: u32,
        run_id: &str,
        rendezvous: SocketAddr,
        listener: Option<std::net::TcpListener>,
        timeout: Duration,
        secret: Option<JobSecret>,
    ) -> Result<Self, BootstrapError> {
        let mut opts = TcpOptions::new(rank, run_id);
        opts.secret = secret;
        opts.connect_timeout = timeout;
        opts.hello_timeout = timeout.min(Duration::from_secs(1));
        opts.backlog = backlog_for(ranks);
        let t = TcpTransport::new(opts)?;
        let l = match listener {
            Some(l) => Some(t.adopt(l)?.0),
            None => None,
        };
        Bootstrap::join(t, rank, ranks, rendezvous, l, timeout)
    }
}

impl<T: Transport> Bootstrap<T> {
    /// Joins the job over `transport` as `rank` of `ranks`. Rank 0 listens at `rendezvous`
    /// (or on `listener`); the others connect there. Bounded by `timeout`.
    pub fn join(
        transport: T,
        rank: u32,
        ranks: u32,
        rendezvous: SocketAddr,
        listener: Option<T::Listener>,
        timeout: Duration,
    ) -> Result<Self, BootstrapError> {
        if ranks == 0 || rank >= ranks || ranks > MAX_RANKS {
            return Err(BootstrapError::Invalid(format!(
                "rank {rank} of {ranks}: use 1 to {MAX_RANKS} ranks and a rank below their count"
            )));
        }
        let deadline = Instant::now() + timeout;
        let conns = if rank == 0 {
            let listener = match listener {
                Some(l) => l,
                None => transport.listen(rendezvous)?.0,
            };
            root::accept_all(&transport, listener, ranks, deadline)?
        } else {
            vec![join_root(&transport, rank, rendezvous, deadline)?]
        };
        let scratch = vec![0u8; (ranks as usize * (4 + MAX_RECORD)).max(MAX_RECORD)];
        let mr = transport.register(&[Region::of(&scratch)])?;
        Ok(Bootstrap {
            rank,
            ranks,
            timeout,
            conns,
            mr,
            scratch,
            transport,
        })
    }

    /// The transport underneath.
    pub fn transport(&self) -> &T {
        &self.transport
    }

    /// This rank.
    pub fn rank(&self) -> u32 {
        self.rank
    }

    /// Ranks in the job.
    pub fn ranks(&self) -> u32 {
        self.ranks
    }

    /// Every rank's `record` (at most [`MAX_RECORD`] bytes), in rank order, on every rank.
    pub fn allgather(&mut self, record: &[u8]) -> Result<Vec<Vec<u8>>, BootstrapError> {
        check_len("a record", record)?;
        let deadline = Instant::now() + self.timeout;
        if self.rank == 0 {
            let mut all = vec![record.to_vec()];
            for c in &mut self.conns {
                all.push(recv(c, MAX_RECORD, deadline)?);
            }
            let n = pack(&all, &mut self.scratch)?;
            for c in &mut self.conns {
                send(c, &self.mr, &self.scratch[..n], deadline)?;
            }
            Ok(all)
        } else {
            self.scratch[..record.len()].copy_from_slice(record);
            send(
                &mut self.conns[0],
                &self.mr,
                &self.scratch[..record.len()],
                deadline,
            )?;
            let all = unpack(&recv(&mut self.conns[0], self.scratch.len(), deadline)?)?;
            if all.len() != self.ranks as usize {
                return Err(BootstrapError::Invalid(format!(
                    "allgather: {} records for {} ranks",
                    all.len(),
                    self.ranks
                )));
            }
            Ok(all)
        }
    }

    /// Rank 0's `data` (at most [`MAX_RECORD`] bytes) on every rank.
    pub fn broadcast(&mut self, data: &[u8]) -> Result<Vec<u8>, BootstrapError> {
        check_len("a broadcast", data)?;
        let deadline = Instant::now() + self.timeout;
        if self.rank == 0 {
            self.scratch[..data.len()].copy_from_slice(data);
            for c in &mut self.conns {
                send(c, &self.mr, &self.scratch[..data.len()], deadline)?;
            }
            Ok(data.to_vec())
        } else {
            recv(&mut self.conns[0], MAX_RECORD, deadline)
        }
    }

    /// Returns once every rank reached it.
    pub fn barrier(&mut self) -> Result<(), BootstrapError> {
        self.allgather(&[]).map(drop)
    }
}

fn check_len(what: &str, b: &[u8]) -> Result<(), BootstrapError> {
    if b.len() > MAX_RECORD {
        return Err(BootstrapError::Invalid(format!(
            "{what} of {} bytes exceeds {MAX_RECORD}",
            b.len()
        )));
    }
    Ok(())
}

/// Longest a wait for sockets lasts before deadlines are looked at again.
const POLL_MAX: Duration = Duration::from_millis(50);

/// Pause after a failed attempt to reach rank 0, before dialing again.
const RETRY_PAUSE: Duration = Duration::from_millis(10);

/// Connects to rank 0 and waits for its verdict on this rank.
fn join_root<T: Transport>(
    t: &T,
    rank: u32,
    rendezvous: SocketAddr,
    deadline: Instant,
) -> Result<T::Conn, BootstrapError> {
    let mut c = connect_root(t, rendezvous, deadline)?;
    let v = recv(&mut c, 256, deadline).map_err(|e| match e {
        BootstrapError::Timeout(_) => BootstrapError::Timeout(format!(
            "waiting for rank 0 at {rendezvous} to take rank {rank}"
        )),
        e => e,
    })?;
    match Verdict::decode(&v)? {
        Verdict::Welcome => Ok(c),
        Verdict::Taken { holder } => Err(BootstrapError::RankTaken { rank, holder }),
        Verdict::NoSuchRank { ranks } => Err(BootstrapError::NoSuchRank { rank, ranks }),
    }
}

fn connect_root<T: Transport>(
    t: &T,
    rendezvous: SocketAddr,
    deadline: Instant,
) -> Result<T::Conn, BootstrapError> {
    let root = ListenHandle {
        rank: 0,
        addr: rendezvous,
    };
    let mut st = T::ConnectState::default();
    loop {
        let steps = st.steps();
        match t.connect(&root, &mut st) {
            Ok(Some(c)) => return Ok(c),
            Ok(None) => {}
            // Rank 0 not up yet, or it dropped us: the state is idle again, dial anew.
            Err(e) if e.retryable && Instant::now() < deadline => {
                log::debug!("bootstrap: {e}; retrying");
                std::thread::sleep(RETRY_PAUSE);
                continue;
            }
            Err(e) if e.retryable => {
                return Err(BootstrapError::Timeout(format!(
                    "connecting to {rendezvous} ({e})"
                )));
            }
            Err(e) => return Err(e.into()),
        }
        if Instant::now() > deadline {
            return Err(BootstrapError::Timeout(format!(
                "connecting to {rendezvous}"
            )));
        }
        if st.steps() == steps {
            let left = deadline.saturating_duration_since(Instant::now());
            t.wait_connect(&st, left.min(POLL_MAX));
        }
    }
}

fn send<C: Conn>(
    c: &mut C,
    mr: &Registration,
    data: &[u8],
    deadline: Instant,
) -> Result<(), BootstrapError> {
    let id = loop {
        if let Some(id) = c.isend(mr, data)? {
            break id;
        }
        wait(c, deadline, "sending")?;
    };
    while c.test(id)?.is_none() {
        wait(c, deadline, "sending")?;
    }
    Ok(())
}

fn recv<C: Conn>(c: &mut C, max_len: usize, deadline: Instant) -> Result<Vec<u8>, BootstrapError> {
    let id = loop {
        if let Some(id) = c.irecv(max_len)? {
            break id;
        }
        wait(c, deadline, "receiving")?;
    };
    loop {
        match c.test(id)? {
            Some(super::requests::Completion::Received(m)) => return Ok(m),
            Some(other) => {
                return Err(BootstrapError::Invalid(format!(
                    "a receive completed as {other:?}"
                )));
            }
            None => wait(c, deadline, "receiving")?,
        }
    }
}

fn wait<C: Conn>(c: &mut C, deadline: Instant, what: &str) -> Result<(), BootstrapError> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(BootstrapError::Timeout(format!(
            "{what} (rank {})",
            c.peer()
        )));
    }
    c.wait(left.min(Duration::from_millis(10)));
    Ok(())
}

/// Packs records into `out` as (length, bytes) pairs; returns the bytes used.
fn pack(records: &[Vec<u8>], out: &mut [u8]) -> Result<usize, BootstrapError> {
    let mut at = 0;
    for r in records {
        let end = at + 4 + r.len();
        if end > out.len() {
            return Err(BootstrapError::Invalid(
                "allgather: records overflow".into(),
            ));
        }
        out[at..at + 4].copy_from_slice(&(r.len() as u32).to_le_bytes());
        out[at + 4..end].copy_from_slice(r);
        at = end;
    }
    Ok(at)
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
