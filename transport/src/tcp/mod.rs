//! The TCP transport: a hello that names magic, version, rank and run id on every
//! connection (strangers are refused with an error that says why), length-prefixed frames
//! with sequence numbers, dials retried with backoff, every wait bounded.

mod accept;
mod auth;
mod conn;
mod connect;
mod handshake;
mod inbox;
mod poll;
mod step;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use socket2::{Domain, Protocol, SockRef, Socket, Type};

pub use accept::{TcpAcceptState, TcpListen};
pub use conn::TcpConn;
pub use connect::TcpConnectState;

use super::api::Transport;
use super::error::{ErrorKind, TransportError};
use super::live::{Live, LiveResources, Resource};
use super::registry::{Region, Registration, Registry};
use super::requests::fresh_conn_number;
use super::secret::JobSecret;
use super::wire::{Hello, ListenHandle};
use conn::Sock;

/// Who this end is, and how long it waits.
#[derive(Clone, Debug)]
pub struct TcpOptions {
    /// This rank, as hellos name it.
    pub rank: u32,
    /// The job; a peer of another job is refused.
    pub run_id: String,
    /// How long a connect retries a peer that refuses or does not answer (default 30 s).
    pub connect_timeout: Duration,
    /// How long either side waits for the other's hello (default 2 s).
    pub hello_timeout: Duration,
    /// The job secret both sides prove in the hello; `None` runs unauthenticated, and a
    /// peer whose setting differs is refused.
    pub secret: Option<JobSecret>,
    /// Dials the kernel queues for a listener before it is accepted (`listen(2)`'s backlog;
    /// the kernel caps it at `net.core.somaxconn`). Default 128.
    pub backlog: u32,
}

impl TcpOptions {
    /// Options for `rank` of job `run_id`, with the default timeouts.
    pub fn new(rank: u32, run_id: impl Into<String>) -> Self {
        TcpOptions {
            rank,
            run_id: run_id.into(),
            connect_timeout: Duration::from_secs(30),
            hello_timeout: Duration::from_secs(2),
            secret: None,
            backlog: 128,
        }
    }
}

/// The kernel's cap on a listen backlog (`net.core.somaxconn`), 4096 if it cannot be read.
pub fn somaxconn() -> u32 {
    std::fs::read_to_string("/proc/sys/net/core/somaxconn")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(4096)
}

/// The backlog a listener needs so that dials of a job of `callers` callers all queue at once:
/// every caller plus room for redials and strangers, capped by [`somaxconn`].
pub fn backlog_for(callers: u32) -> u32 {
    callers.saturating_add(128).min(somaxconn())
}

/// The TCP transport of one rank.
#[derive(Debug)]
pub struct TcpTransport {
    opts: TcpOptions,
    live: Arc<Live>,
    registry: Registry,
}

impl TcpTransport {
    /// A transport for the rank and job of `opts`; a run id longer than the wire allows is
    /// refused.
    pub fn new(opts: TcpOptions) -> Result<Self, TransportError> {
        Hello::plain(opts.rank, opts.run_id.clone())
            .encode()
            .map_err(|e| TransportError::wire("the run id", e))?;
        let live = Live::new();
        Ok(TcpTransport {
            opts,
            registry: Registry::new(Arc::clone(&live)),
            live,
        })
    }

    /// Listens on a socket bound already (to learn a free port before peers start), with
    /// this transport's backlog.
    pub fn adopt(
        &self,
        listener: std::net::TcpListener,
    ) -> Result<(TcpListen, ListenHandle), TransportError> {
        let addr = listener
            .local_addr()
            .map_err(|e| TransportError::io("reading the listening address", &e))?;
        // Listening again on a listening socket sets its backlog anew (Linux).
        SockRef::from(&listener)
            .listen(self.backlog())
            .and_then(|()| listener.set_nonblocking(true))
            .map_err(|e| TransportError::io(format!("listening at {addr}"), &e))?;
        let l = TcpListen {
            listener,
            _token: self.live.token(Resource::Listener),
        };
        Ok((
            l,
            ListenHandle {
                rank: self.opts.rank,
                addr,
            },
        ))
    }

    /// The options this transport runs with.
    pub fn options(&self) -> &TcpOptions {
        &self.opts
    }

    fn backlog(&self) -> i32 {
        self.opts.backlog.clamp(1, i32::MAX as u32) as i32
    }

    /// A connection to `peer` at `addr`; its number (and so its request ids) is unique in
    /// the process, whichever transport made it.
    fn new_conn(&self, peer: u32, sock: Sock, addr: SocketAddr) -> TcpConn {
        TcpConn::new(fresh_conn_number(), peer, addr, sock, &self.live)
    }

    fn check_hello_time(
        &self,
        since: Instant,
        what: impl FnOnce() -> String,
    ) -> Result<(), TransportError> {
        if since.elapsed() > self.opts.hello_timeout {
            return Err(TransportError::new(
                ErrorKind::Timeout,
                true,
                format!("{}: nothing within {:?}", what(), self.opts.hello_timeout),
            ));
        }
        Ok(())
    }
}

impl Transport for TcpTransport {
    type Listener = TcpListen;
    type Conn = TcpConn;
    type ConnectState = TcpConnectState;
    type AcceptState = TcpAcceptState;

    fn listen(&self, addr: SocketAddr) -> Result<(TcpListen, ListenHandle), TransportError> {
        let what = || format!("listening at {addr}");
        let s = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))
            .map_err(|e| TransportError::io(what(), &e))?;
        // As std's bind does: a port in TIME_WAIT from an earlier run can be bound again.
        s.set_reuse_address(true)
            .and_then(|()| s.bind(&addr.into()))
            .map_err(|e| TransportError::io(what(), &e))?;
        self.adopt(s.into())
    }

    fn connect(
        &self,
        to: &ListenHandle,
        state: &mut TcpConnectState,
    ) -> Result<Option<TcpConn>, TransportError> {
        connect::connect(self, to, state)
    }

    fn accept(
        &self,
        listener: &mut TcpListen,
        state: &mut TcpAcceptState,
    ) -> Result<Option<TcpConn>, TransportError> {
        accept::accept(self, listener, state)
    }

    fn wait_connect(&self, state: &TcpConnectState, max: Duration) {
        connect::wait(state, max)
    }

    fn wait_accept(&self, listener: &TcpListen, pending: &[TcpAcceptState], max: Duration) {
        accept::wait(listener, pending, max)
    }

    fn register(&self, regions: &[Region]) -> Result<Registration, TransportError> {
        self.registry.register(regions)
    }

    fn live(&self) -> LiveResources {
        self.live.snapshot()
    }
}
