//! The accept state machine: take a caller off the listener, read its hello, answer with
//! ours, and wait for the caller's confirm (with its proof of the job secret, see
//! [`super::auth`]) before handing out the connection; refuse
//! strangers (another job or version) after telling them who we are, so that both sides get
//! a clear error. A caller that says nothing is dropped after the hello timeout, and one that
//! hangs up instead of confirming (it gave up while it waited in the listen backlog) is
//! dropped without becoming a connection. Every stage owns what it took.
#![forbid(unsafe_code)]

use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use super::TcpTransport;
use super::auth::{self, Expect};
use super::conn::{Sock, TcpConn};
use super::handshake::{IncomingConfirm, IncomingHello, Outgoing};
use super::poll::{Want, wait_fds};
use super::step::{Next, step};
use crate::api::Progress;
use crate::error::{ErrorKind, TransportError};
use crate::live::Token;
use crate::wire::{Hello, WireError};

/// A listening TCP socket.
#[derive(Debug)]
pub struct TcpListen {
    pub(super) listener: std::net::TcpListener,
    pub(super) _token: Token,
}

#[derive(Debug, Default)]
enum Stage {
    #[default]
    Idle,
    RecvHello {
        sock: Sock,
        from: SocketAddr,
        hello: IncomingHello,
        since: Instant,
    },
    SendHello {
        sock: Sock,
        from: SocketAddr,
        out: Outgoing,
        since: Instant,
        peer: u32,
        /// Set for a stranger: told who we are, then refused.
        refuse: Option<TransportError>,
        /// What the caller's confirm must prove (with a job secret).
        expect: Option<Expect>,
    },
    RecvConfirm {
        sock: Sock,
        from: SocketAddr,
        confirm: IncomingConfirm,
        since: Instant,
        peer: u32,
        expect: Option<Expect>,
    },
}

/// Progress of a TCP accept, owned by the caller.
#[derive(Debug, Default)]
pub struct TcpAcceptState {
    stage: Stage,
    steps: u32,
}

impl Progress for TcpAcceptState {
    fn steps(&self) -> u32 {
        self.steps
    }

    fn is_idle(&self) -> bool {
        matches!(self.stage, Stage::Idle)
    }

    fn awaits_hello(&self) -> bool {
        matches!(self.stage, Stage::RecvHello { .. })
    }
}

/// Advances an accept on `l` by at most one step.
pub(super) fn accept(
    t: &TcpTransport,
    l: &mut TcpListen,
    st: &mut TcpAcceptState,
) -> Result<Option<TcpConn>, TransportError> {
    step(&mut st.stage, &mut st.steps, |s| advance(t, l, s))
}

fn advance(
    t: &TcpTransport,
    l: &mut TcpListen,
    stage: Stage,
) -> Result<Next<Stage>, TransportError> {
    let now = Instant::now();
    match stage {
        Stage::Idle => match l.listener.accept() {
            Ok((stream, from)) => {
                let sock = Sock::new(stream, &t.live);
                sock.stream
                    .set_nonblocking(true)
                    .and_then(|()| sock.stream.set_nodelay(true))
                    .map_err(|e| {
                        TransportError::io(format!("setting up a caller from {from}"), &e)
                    })?;
                Ok(Next::Step(Stage::RecvHello {
                    sock,
                    from,
                    hello: IncomingHello::default(),
                    since: now,
                }))
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Ok(Next::Stay(Stage::Idle)),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => Ok(Next::Stay(Stage::Idle)),
            Err(e) => Err(TransportError::io("accepting a connection", &e)),
        },
        Stage::RecvHello {
            mut sock,
            from,
            mut hello,
            since,
        } => {
            let what = || format!("waiting for the hello of a caller from {from}");
            let done = hello.pull(&mut sock.stream).map_err(|e| {
                if e.kind() == std::io::ErrorKind::UnexpectedEof {
                    TransportError::new(
                        ErrorKind::PeerClosed,
                        true,
                        format!("{}: it hung up before its hello", what()),
                    )
                } else {
                    TransportError::io(what(), &e)
                }
            })?;
            if !done {
                t.check_hello_time(since, what)?;
                return Ok(Next::Stay(Stage::RecvHello {
                    sock,
                    from,
                    hello,
                    since,
                }));
            }
            let (peer, answer, expect, refuse) = match Hello::decode(hello.bytes(), &t.opts.run_id)
            {
                Ok(h) => {
                    let a = auth::listener_answer(t, from, &h)?;
                    (h.rank, a.bytes, a.expect, a.refuse)
                }
                // Not our protocol at all: say nothing.
                Err(e @ WireError::Magic(_)) => {
                    return Err(refused(from, e));
                }
                Err(e) => {
                    let plain = Hello::plain(t.opts.rank, t.opts.run_id.clone())
                        .encode()
                        .map_err(|e| TransportError::wire("our hello", e))?;
                    (u32::MAX, plain, None, Some(refused(from, e)))
                }
            };
            Ok(Next::Step(Stage::SendHello {
                sock,
                from,
                out: Outgoing::new(answer),
                since,
                peer,
                refuse,
                expect,
            }))
        }
        Stage::SendHello {
            mut sock,
            from,
            mut out,
            since,
            peer,
            refuse,
            expect,
        } => {
            let what = || format!("answering the hello of a caller from {from}");
            let sent = out
                .push(&mut sock.stream)
                .map_err(|e| TransportError::io(what(), &e));
            match sent {
                // A stranger that hung up on our answer is still reported as refused.
                Err(e) => Err(refuse.unwrap_or(e)),
                Ok(true) => match refuse {
                    Some(e) => Err(e),
                    None => Ok(Next::Step(Stage::RecvConfirm {
                        sock,
                        from,
                        confirm: IncomingConfirm::new(Expect::confirm_len(expect.as_ref())),
                        since,
                        peer,
                        expect,
                    })),
                },
                Ok(false) => {
                    t.check_hello_time(since, what)?;
                    Ok(Next::Stay(Stage::SendHello {
                        sock,
                        from,
                        out,
                        since,
                        peer,
                        refuse,
                        expect,
                    }))
                }
            }
        }
        Stage::RecvConfirm {
            sock,
            from,
            confirm,
            since,
            peer,
            expect,
        } => recv_confirm(t, sock, from, confirm, since, peer, expect),
    }
}

/// Blocks for at most `max` until the listener has a caller queued or one of `pending` may
/// take its next step: one poll set over all their sockets, so no caller waits on another.
pub(super) fn wait(l: &TcpListen, pending: &[TcpAcceptState], max: Duration) {
    let mut fds = Vec::with_capacity(pending.len() + 1);
    fds.push((l.listener.as_raw_fd(), Want::Read));
    for st in pending {
        match &st.stage {
            Stage::Idle => {}
            Stage::RecvHello { sock, .. } | Stage::RecvConfirm { sock, .. } => {
                fds.push((sock.stream.as_raw_fd(), Want::Read))
            }
            Stage::SendHello { sock, .. } => fds.push((sock.stream.as_raw_fd(), Want::Write)),
        }
    }
    wait_fds(&fds, max);
}

/// The caller's confirm: only then is it known to be there, and the connection comes out.
fn recv_confirm(
    t: &TcpTransport,
    mut sock: Sock,
    from: SocketAddr,
    mut confirm: IncomingConfirm,
    since: Instant,
    peer: u32,
    expect: Option<Expect>,
) -> Result<Next<Stage>, TransportError> {
    let what = || format!("waiting for the confirm of a caller from {from} claiming rank {peer}");
    let done = confirm.pull(&mut sock.stream).map_err(|e| match e.kind() {
        std::io::ErrorKind::UnexpectedEof
        | std::io::ErrorKind::ConnectionReset
        | std::io::ErrorKind::BrokenPipe => TransportError::new(
            ErrorKind::PeerClosed,
            true,
            format!(
                "{}: it hung up after our hello (it gave up waiting); not taken as rank {peer}",
                what()
            ),
        ),
        _ => TransportError::io(what(), &e),
    })?;
    if !done {
        t.check_hello_time(since, what)?;
        return Ok(Next::Stay(Stage::RecvConfirm {
            sock,
            from,
            confirm,
            since,
            peer,
            expect,
        }));
    }
    auth::listener_check(t, from, peer, expect.as_ref(), confirm.bytes())?;
    Ok(Next::Done(Box::new(t.new_conn(peer, sock, from))))
}

/// A stranger refused; the listener goes on, so accepting again may succeed.
fn refused(from: SocketAddr, e: WireError) -> TransportError {
    let detail = format!("refused a caller from {from}: {e}");
    TransportError::new(ErrorKind::Wire(e), true, detail)
}
