//! The TCP transport: a hello that names magic, version, rank and run id on every
//! connection (strangers are refused with an error that says why), length-prefixed frames
//! with sequence numbers, dials retried with backoff, every wait bounded.

mod accept;
mod conn;
mod connect;
mod handshake;
mod inbox;
mod poll;
mod step;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use accept::{TcpAcceptState, TcpListen};
pub use conn::TcpConn;
pub use connect::TcpConnectState;

use super::api::Transport;
use super::error::{ErrorKind, TransportError};
use super::live::{Live, LiveResources, Resource};
use super::registry::{Region, Registration, Registry};
use super::requests::fresh_conn_number;
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
}

impl TcpOptions {
    /// Options for `rank` of job `run_id`, with the default timeouts.
    pub fn new(rank: u32, run_id: impl Into<String>) -> Self {
        TcpOptions {
            rank,
            run_id: run_id.into(),
            connect_timeout: Duration::from_secs(30),
            hello_timeout: Duration::from_secs(2),
        }
    }
}

/// The TCP transport of one rank.
#[derive(Debug)]
pub struct TcpTransport {
    opts: TcpOptions,
    hello: Vec<u8>,
    live: Arc<Live>,
    registry: Registry,
}

impl TcpTransport {
    /// A transport for the rank and job of `opts`; a run id longer than the wire allows is
    /// refused.
    pub fn new(opts: TcpOptions) -> Result<Self, TransportError> {
        let hello = Hello {
            rank: opts.rank,
            run_id: opts.run_id.clone(),
        }
        .encode()
        .map_err(|e| TransportError::wire("the run id", e))?;
        let live = Live::new();
        Ok(TcpTransport {
            opts,
            hello,
            registry: Registry::new(Arc::clone(&live)),
            live,
        })
    }

    /// Listens on a socket bound already (to learn a free port before peers start).
    pub fn adopt(
        &self,
        listener: std::net::TcpListener,
    ) -> Result<(TcpListen, ListenHandle), TransportError> {
        let addr = listener
            .local_addr()
            .map_err(|e| TransportError::io("reading the listening address", &e))?;
        listener
            .set_nonblocking(true)
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

    /// A connection to `peer`; its number (and so its request ids) is unique in the
    /// process, whichever transport made it.
    fn new_conn(&self, peer: u32, sock: Sock) -> TcpConn {
        TcpConn::new(fresh_conn_number(), peer, sock, &self.live)
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
        let l = std::net::TcpListener::bind(addr)
            .map_err(|e| TransportError::io(format!("listening at {addr}"), &e))?;
        self.adopt(l)
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

    fn register(&self, regions: &[Region]) -> Result<Registration, TransportError> {
        self.registry.register(regions)
    }

    fn live(&self) -> LiveResources {
        self.live.snapshot()
    }
}
