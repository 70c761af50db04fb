//! An established TCP connection: sequenced frames both ways over a non-blocking socket, a
//! bounded pool of requests, progress made by every call.
#![forbid(unsafe_code)]

use std::collections::VecDeque;
use std::io::{ErrorKind as IoKind, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use super::inbox::{Got, Inbox};
use super::poll::wait_fd;
use crate::api::Conn;
use crate::error::{ErrorKind, TransportError};
use crate::live::{Live, Resource, Token};
use crate::registry::Registration;
use crate::requests::{Completion, ReqId, RequestPool};
use crate::wire::{FRAME_HEADER, MAX_FRAME, encode_frame};

/// Messages that arrived before a receive was posted for them are held up to this many
/// bytes; past it the socket is not read, so TCP flow control holds the sender back.
const UNEXPECTED_BYTES: usize = 16 << 20;

/// Bytes read per call at most, so one call never runs away with a fast sender.
const READ_PER_CALL: usize = 8 << 20;

/// A socket and the token that counts it.
#[derive(Debug)]
pub(super) struct Sock {
    pub(super) stream: TcpStream,
    _token: Token,
}

impl Sock {
    pub(super) fn new(stream: TcpStream, live: &Arc<Live>) -> Self {
        Sock {
            stream,
            _token: live.token(Resource::Socket),
        }
    }
}

#[derive(Debug)]
struct SendOp {
    id: ReqId,
    frame: Vec<u8>,
    sent: usize,
}

#[derive(Debug)]
struct RecvOp {
    id: ReqId,
    max_len: usize,
}

/// Where the connection is in its life.
#[derive(Debug)]
enum State {
    Open,
    /// The peer closed cleanly: messages already here can still be received.
    PeerDone,
    /// Unusable: this error fails every request.
    Failed(TransportError),
    Closed,
}

/// One end of a TCP connection.
#[derive(Debug)]
pub struct TcpConn {
    peer: u32,
    addr: SocketAddr,
    sock: Option<Sock>,
    state: State,
    seq: u64,
    inbox: Inbox,
    sends: VecDeque<SendOp>,
    recvs: VecDeque<RecvOp>,
    unexpected: VecDeque<Vec<u8>>,
    unexpected_bytes: usize,
    pool: RequestPool,
    _token: Token,
}

impl TcpConn {
    pub(super) fn new(id: u64, peer: u32, addr: SocketAddr, sock: Sock, live: &Arc<Live>) -> Self {
        TcpConn {
            peer,
            addr,
            sock: Some(sock),
            state: State::Open,
            seq: 0,
            inbox: Inbox::new(),
            sends: VecDeque::new(),
            recvs: VecDeque::new(),
            unexpected: VecDeque::new(),
            unexpected_bytes: 0,
            pool: RequestPool::new(id, Arc::clone(live)),
            _token: live.token(Resource::Conn),
        }
    }

    /// The error a new post gets in the current state, if any.
    fn refusal(&self) -> Option<TransportError> {
        match &self.state {
            State::Open | State::PeerDone => None,
            State::Failed(e) => Some(e.clone()),
            State::Closed => Some(TransportError::new(
                ErrorKind::Closed,
                false,
                format!("the connection to rank {} is closed", self.peer),
            )),
        }
    }

    /// Fails every pending request with `e` and marks the connection unusable.
    fn fail(&mut self, e: TransportError) {
        for op in self.sends.drain(..) {
            self.pool.fail(op.id, e.clone());
        }
        for op in self.recvs.drain(..) {
            self.pool.fail(op.id, e.clone());
        }
        if let Some(s) = &self.sock {
            // The peer must see the end even if we keep the descriptor until close.
            let _ = s.stream.shutdown(Shutdown::Both);
        }
        self.state = State::Failed(e);
    }

    fn progress(&mut self) {
        if let State::Open = self.state {
            self.progress_sends();
        }
        if matches!(self.state, State::Open) {
            self.progress_recvs();
        }
        self.match_recvs();
    }

    fn progress_sends(&mut self) {
        let Some(sock) = &mut self.sock else { return };
        while let Some(op) = self.sends.front_mut() {
            match sock.stream.write(&op.frame[op.sent..]) {
                Ok(0) => {
                    let e = std::io::Error::from(IoKind::WriteZero);
                    let e = TransportError::io(format!("sending to rank {}", self.peer), &e);
                    return self.fail(e);
                }
                Ok(n) => {
                    op.sent += n;
                    if op.sent == op.frame.len() {
                        let len = op.frame.len() - FRAME_HEADER;
                        let id = op.id;
                        self.sends.pop_front();
                        self.pool.complete(id, Completion::Sent(len));
                    }
                }
                Err(e) if e.kind() == IoKind::WouldBlock => return,
                Err(e) if e.kind() == IoKind::Interrupted => {}
                Err(e) => {
                    let e = TransportError::io(format!("sending to rank {}", self.peer), &e);
                    return self.fail(e);
                }
            }
        }
    }

    fn progress_recvs(&mut self) {
        let mut read = 0;
        while read < READ_PER_CALL
            && (self.unexpected_bytes < UNEXPECTED_BYTES || !self.recvs.is_empty())
        {
            let Some(sock) = &mut self.sock else { return };
            let (arrived, bytes) = (&mut self.unexpected, &mut self.unexpected_bytes);
            let r = self.inbox.read(&mut sock.stream, &mut |f| {
                *bytes += f.len();
                arrived.push_back(f);
            });
            match r {
                Ok(Ok(Got::Bytes(n))) => {
                    read += n;
                    self.match_recvs();
                }
                Ok(Ok(Got::WouldBlock)) => return,
                Ok(Ok(Got::Eof)) => {
                    let partial = self.inbox.buffered();
                    if partial > 0 {
                        let e = TransportError::new(
                            ErrorKind::PeerClosed,
                            false,
                            format!(
                                "rank {} vanished mid-message: {partial} bytes of a frame arrived, then the connection ended",
                                self.peer
                            ),
                        );
                        self.fail(e);
                    } else {
                        self.state = State::PeerDone;
                    }
                    return;
                }
                Ok(Err(e)) => {
                    let e = TransportError::io(format!("receiving from rank {}", self.peer), &e);
                    return self.fail(e);
                }
                Err(e) => {
                    let e = TransportError::wire(format!("receiving from rank {}", self.peer), e);
                    return self.fail(e);
                }
            }
        }
    }

    /// Hands arrived messages to posted receives, in order.
    fn match_recvs(&mut self) {
        while !self.recvs.is_empty() && !self.unexpected.is_empty() {
            let (Some(op), Some(m)) = (self.recvs.pop_front(), self.unexpected.pop_front()) else {
                break;
            };
            self.unexpected_bytes -= m.len();
            if m.len() > op.max_len {
                let e = TransportError::new(
                    ErrorKind::Truncated,
                    false,
                    format!(
                        "a message of {} bytes from rank {} exceeds the {}-byte receive posted for it",
                        m.len(),
                        self.peer,
                        op.max_len
                    ),
                );
                self.pool.fail(op.id, e);
            } else {
                self.pool.complete(op.id, Completion::Received(m));
            }
        }
        if let State::PeerDone = self.state {
            let e = TransportError::new(
                ErrorKind::PeerClosed,
                true,
                format!("rank {} closed the connection", self.peer),
            );
            for op in self.recvs.drain(..) {
                self.pool.fail(op.id, e.clone());
            }
            for op in self.sends.drain(..) {
                self.pool.fail(op.id, e.clone());
            }
        }
    }
}

impl Conn for TcpConn {
    fn peer(&self) -> u32 {
        self.peer
    }

    fn peer_addr(&self) -> Option<SocketAddr> {
        Some(self.addr)
    }

    fn isend(&mut self, mr: &Registration, data: &[u8]) -> Result<Option<ReqId>, TransportError> {
        if let Some(e) = self.refusal() {
            return Err(e);
        }
        if let State::PeerDone = self.state {
            return Err(TransportError::new(
                ErrorKind::PeerClosed,
                true,
                format!("rank {} closed the connection", self.peer),
            ));
        }
        if !mr.covers(data) {
            return Err(TransportError::new(
                ErrorKind::NotRegistered,
                false,
                format!(
                    "a send of {} bytes at {:p} lies outside the registration given",
                    data.len(),
                    data.as_ptr()
                ),
            ));
        }
        if data.len() > MAX_FRAME as usize {
            return Err(TransportError::invalid(format!(
                "a message of {} bytes exceeds the {MAX_FRAME}-byte limit",
                data.len()
            )));
        }
        let Some(id) = self.pool.post() else {
            self.progress();
            return Ok(None);
        };
        let frame = match encode_frame(self.seq, data) {
            Ok(f) => f,
            Err(e) => {
                self.pool.cancel(id);
                return Err(TransportError::wire("encoding a frame", e));
            }
        };
        self.seq += 1;
        self.sends.push_back(SendOp { id, frame, sent: 0 });
        self.progress();
        Ok(Some(id))
    }

    fn irecv(&mut self, max_len: usize) -> Result<Option<ReqId>, TransportError> {
        if let Some(e) = self.refusal() {
            return Err(e);
        }
        if let State::PeerDone = self.state
            && self.unexpected.is_empty()
        {
            return Err(TransportError::new(
                ErrorKind::PeerClosed,
                true,
                format!("rank {} closed the connection", self.peer),
            ));
        }
        let Some(id) = self.pool.post() else {
            self.progress();
            return Ok(None);
        };
        self.recvs.push_back(RecvOp { id, max_len });
        self.progress();
        Ok(Some(id))
    }

    fn test(&mut self, id: ReqId) -> Result<Option<Completion>, TransportError> {
        self.progress();
        self.pool.take(id)
    }

    fn wait(&mut self, max: Duration) {
        // Otherwise nothing can change from the outside: return at once.
        if let (State::Open, Some(s)) = (&self.state, &self.sock) {
            wait_fd(&s.stream, !self.sends.is_empty(), max)
        }
    }

    fn abort(&mut self) {
        if matches!(self.state, State::Open | State::PeerDone) {
            let e = TransportError::new(
                ErrorKind::Aborted,
                false,
                format!("the connection to rank {} was aborted", self.peer),
            );
            self.fail(e);
        }
    }

    fn close(&mut self) -> Result<(), TransportError> {
        if let State::Closed = self.state {
            return Ok(());
        }
        let closed = TransportError::new(
            ErrorKind::Closed,
            false,
            format!("the connection to rank {} is closed", self.peer),
        );
        if matches!(self.state, State::Open | State::PeerDone) {
            self.fail(closed);
        }
        self.pool.clear();
        self.unexpected.clear();
        self.unexpected_bytes = 0;
        self.sock = None;
        self.state = State::Closed;
        Ok(())
    }
}

impl Drop for TcpConn {
    fn drop(&mut self) {
        let _ = self.close();
    }
}
