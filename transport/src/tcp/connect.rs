//! The connect state machine: open a socket, dial without blocking (retrying refusals with
//! backoff until the connect deadline), send our hello, check the peer's (and its proof of
//! the job secret, see [`super::auth`]), confirm that we take the connection. Every stage owns
//! what it took, so a failure or a drop releases it, and the state is left idle.
#![forbid(unsafe_code)]

use std::net::{SocketAddr, TcpStream};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use socket2::{Domain, Protocol, Socket, Type};

use super::conn::{Sock, TcpConn};
use super::handshake::{IncomingHello, Outgoing};
use super::poll::{Want, wait_fd, wait_fds};
use super::step::{Next, step};
use super::{TcpTransport, auth};
use crate::api::Progress;
use crate::error::{ErrorKind, TransportError};
use crate::live::{Resource, Token};
use crate::secret::Nonce;
use crate::wire::{Hello, ListenHandle};

/// Longest pause between two dials of a peer that refuses.
const MAX_BACKOFF: Duration = Duration::from_millis(100);

/// A socket still dialing, with the token that counts it.
#[derive(Debug)]
struct Dialing {
    socket: Socket,
    _token: Token,
}

#[derive(Debug, Default)]
enum Stage {
    #[default]
    Idle,
    /// Waiting to dial again after a refusal.
    Backoff {
        at: Instant,
        deadline: Instant,
        backoff: Duration,
        last: String,
    },
    Dial {
        dialing: Dialing,
        deadline: Instant,
        backoff: Duration,
    },
    SendHello {
        sock: Sock,
        out: Outgoing,
        since: Instant,
        nonce: Option<Nonce>,
    },
    RecvHello {
        sock: Sock,
        hello: IncomingHello,
        since: Instant,
        nonce: Option<Nonce>,
    },
    SendConfirm {
        sock: Sock,
        out: Outgoing,
        since: Instant,
    },
}

/// Progress of a TCP connect, owned by the caller.
#[derive(Debug, Default)]
pub struct TcpConnectState {
    stage: Stage,
    steps: u32,
}

impl Progress for TcpConnectState {
    fn steps(&self) -> u32 {
        self.steps
    }

    fn is_idle(&self) -> bool {
        matches!(self.stage, Stage::Idle)
    }
}

/// Advances a connect to `to` by at most one step.
pub(super) fn connect(
    t: &TcpTransport,
    to: &ListenHandle,
    st: &mut TcpConnectState,
) -> Result<Option<TcpConn>, TransportError> {
    step(&mut st.stage, &mut st.steps, |s| advance(t, to, s))
}

fn advance(
    t: &TcpTransport,
    to: &ListenHandle,
    stage: Stage,
) -> Result<Next<Stage>, TransportError> {
    let now = Instant::now();
    match stage {
        Stage::Idle => dial(
            t,
            to.addr,
            now + t.opts.connect_timeout,
            Duration::from_millis(1),
        ),
        Stage::Backoff {
            at,
            deadline,
            backoff,
            last,
        } => {
            if now < at {
                Ok(Next::Stay(Stage::Backoff {
                    at,
                    deadline,
                    backoff,
                    last,
                }))
            } else {
                dial(t, to.addr, deadline, backoff)
            }
        }
        Stage::Dial {
            dialing,
            deadline,
            backoff,
        } => {
            let failed = match dialing.socket.take_error() {
                Ok(Some(e)) | Err(e) => Some(e.to_string()),
                Ok(None) => None,
            };
            if let Some(last) = failed {
                if now >= deadline {
                    return Err(gave_up(t, to.addr, &last));
                }
                // Refused, unreachable, reset: the peer may not be up yet. Drop the socket
                // and dial again after a pause.
                return Ok(Next::Stay(Stage::Backoff {
                    at: (now + backoff).min(deadline),
                    deadline,
                    backoff: (backoff * 2).min(MAX_BACKOFF),
                    last,
                }));
            }
            if dialing.socket.peer_addr().is_err() {
                if now >= deadline {
                    return Err(gave_up(t, to.addr, "no answer"));
                }
                return Ok(Next::Stay(Stage::Dial {
                    dialing,
                    deadline,
                    backoff,
                }));
            }
            let stream = TcpStream::from(dialing.socket);
            let sock = Sock::new(stream, &t.live);
            let nonce = auth::caller_nonce(t)?;
            let hello = Hello {
                nonce,
                ..Hello::plain(t.opts.rank, t.opts.run_id.clone())
            }
            .encode()
            .map_err(|e| TransportError::wire("our hello", e))?;
            Ok(Next::Step(Stage::SendHello {
                sock,
                out: Outgoing::new(hello),
                since: now,
                nonce,
            }))
        }
        Stage::SendHello {
            mut sock,
            mut out,
            since,
            nonce,
        } => {
            let what = || format!("sending the hello to rank {} at {}", to.rank, to.addr);
            if out
                .push(&mut sock.stream)
                .map_err(|e| TransportError::io(what(), &e))?
            {
                return Ok(Next::Step(Stage::RecvHello {
                    sock,
                    hello: IncomingHello::default(),
                    since,
                    nonce,
                }));
            }
            t.check_hello_time(since, what)?;
            Ok(Next::Stay(Stage::SendHello {
                sock,
                out,
                since,
                nonce,
            }))
        }
        Stage::RecvHello {
            mut sock,
            mut hello,
            since,
            nonce,
        } => {
            let what = || format!("waiting for the hello of rank {} at {}", to.rank, to.addr);
            let done = hello.pull(&mut sock.stream).map_err(|e| {
                if e.kind() == std::io::ErrorKind::UnexpectedEof {
                    TransportError::new(
                        ErrorKind::PeerClosed,
                        true,
                        format!(
                            "{}: the peer closed the connection before its hello",
                            what()
                        ),
                    )
                } else {
                    TransportError::io(what(), &e)
                }
            })?;
            if !done {
                t.check_hello_time(since, what)?;
                return Ok(Next::Stay(Stage::RecvHello {
                    sock,
                    hello,
                    since,
                    nonce,
                }));
            }
            let h = Hello::decode(hello.bytes(), &t.opts.run_id)
                .map_err(|e| TransportError::wire(format!("rank {} at {}", to.rank, to.addr), e))?;
            if h.rank != to.rank {
                return Err(TransportError::invalid(format!(
                    "{} answered as rank {}, but its handle names rank {}",
                    to.addr, h.rank, to.rank
                )));
            }
            let confirm = auth::caller_confirm(t, to, nonce.as_ref(), &h)?;
            Ok(Next::Step(Stage::SendConfirm {
                sock,
                out: Outgoing::new(confirm),
                since,
            }))
        }
        Stage::SendConfirm {
            mut sock,
            mut out,
            since,
        } => {
            let what = || format!("confirming to rank {} at {}", to.rank, to.addr);
            if out
                .push(&mut sock.stream)
                .map_err(|e| TransportError::io(what(), &e))?
            {
                return Ok(Next::Done(Box::new(t.new_conn(to.rank, sock, to.addr))));
            }
            t.check_hello_time(since, what)?;
            Ok(Next::Stay(Stage::SendConfirm { sock, out, since }))
        }
    }
}

/// Blocks for at most `max` until the connect in `st` may take its next step: its socket is
/// ready for what the stage waits on, or its backoff ends. An idle state returns at once.
pub(super) fn wait(st: &TcpConnectState, max: Duration) {
    match &st.stage {
        Stage::Idle => {}
        Stage::Backoff { at, .. } => {
            std::thread::sleep(at.saturating_duration_since(Instant::now()).min(max));
        }
        Stage::Dial { dialing, .. } => wait_fds(&[(dialing.socket.as_raw_fd(), Want::Write)], max),
        Stage::SendHello { sock, .. } | Stage::SendConfirm { sock, .. } => {
            wait_fd(&sock.stream, true, max)
        }
        Stage::RecvHello { sock, .. } => wait_fd(&sock.stream, false, max),
    }
}

/// Opens a socket and starts a dial that does not block.
fn dial(
    t: &TcpTransport,
    addr: SocketAddr,
    deadline: Instant,
    backoff: Duration,
) -> Result<Next<Stage>, TransportError> {
    let what = format!("opening a socket to {addr}");
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))
        .map_err(|e| TransportError::io(&what, &e))?;
    let dialing = Dialing {
        socket,
        _token: t.live.token(Resource::Socket),
    };
    dialing
        .socket
        .set_nonblocking(true)
        .and_then(|()| dialing.socket.set_tcp_nodelay(true))
        .map_err(|e| TransportError::io(&what, &e))?;
    match dialing.socket.connect(&addr.into()) {
        Ok(()) => {}
        Err(e)
            if e.raw_os_error() == Some(libc::EINPROGRESS)
                || e.kind() == std::io::ErrorKind::WouldBlock => {}
        // Refused at once (loopback): back off and dial again.
        Err(e) => {
            if Instant::now() >= deadline {
                return Err(gave_up(t, addr, &e.to_string()));
            }
            return Ok(Next::Stay(Stage::Backoff {
                at: Instant::now() + backoff,
                deadline,
                backoff: (backoff * 2).min(MAX_BACKOFF),
                last: e.to_string(),
            }));
        }
    }
    Ok(Next::Step(Stage::Dial {
        dialing,
        deadline,
        backoff,
    }))
}

fn gave_up(t: &TcpTransport, addr: SocketAddr, last: &str) -> TransportError {
    TransportError::new(
        ErrorKind::Timeout,
        true,
        format!(
            "connecting to {addr}: nobody accepted within {:?} (last: {last}); is rank 0 up at that address?",
            t.opts.connect_timeout
        ),
    )
}
