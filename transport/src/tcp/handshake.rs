//! Moving a hello (and the caller's confirm) over a non-blocking socket in as many pieces as
//! it takes, never reading a byte past it (the peer's first frames may follow at once).
#![forbid(unsafe_code)]

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;

use crate::wire::{Hello, MAGIC};

/// Bytes to send, and how many have left.
#[derive(Debug)]
pub(super) struct Outgoing {
    bytes: Vec<u8>,
    sent: usize,
}

impl Outgoing {
    pub(super) fn new(bytes: Vec<u8>) -> Self {
        Outgoing { bytes, sent: 0 }
    }

    /// Writes what the socket takes; `Ok(true)` once everything is out.
    pub(super) fn push(&mut self, s: &mut TcpStream) -> std::io::Result<bool> {
        while self.sent < self.bytes.len() {
            match s.write(&self.bytes[self.sent..]) {
                Ok(0) => return Err(ErrorKind::WriteZero.into()),
                Ok(n) => self.sent += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(true)
    }
}

/// A hello being received.
#[derive(Debug, Default)]
pub(super) struct IncomingHello {
    bytes: Vec<u8>,
}

impl IncomingHello {
    /// Reads what has arrived of the hello; `Ok(true)` once it is complete, or once its
    /// magic shows it is not a hello. The peer closing
    /// first is `UnexpectedEof`.
    pub(super) fn pull(&mut self, s: &mut TcpStream) -> std::io::Result<bool> {
        loop {
            let want = Hello::wanted(&self.bytes).unwrap_or(Hello::FIXED);
            if self.bytes.len() >= want || self.foreign() {
                return Ok(true);
            }
            if !read_toward(s, &mut self.bytes, want)? {
                return Ok(false);
            }
        }
    }

    /// Whether the first bytes already show another protocol: judge it without waiting
    /// for the rest.
    fn foreign(&self) -> bool {
        self.bytes.len() >= 4 && self.bytes[..4] != MAGIC.to_le_bytes()
    }

    /// The bytes of a complete hello (or of a foreign one, enough to refuse it).
    pub(super) fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}

/// A caller's confirm being received: exactly the bytes expected (`CONFIRM`, and a proof
/// of the job secret when there is one), never one more.
#[derive(Debug, Default)]
pub(super) struct IncomingConfirm {
    got: Vec<u8>,
    want: usize,
}

impl IncomingConfirm {
    /// Expects `want` bytes.
    pub(super) fn new(want: usize) -> Self {
        IncomingConfirm {
            got: Vec::with_capacity(want),
            want,
        }
    }

    /// Reads what has arrived of the confirm; `Ok(true)` once all its bytes are here. The
    /// caller closing first (it gave up) is `UnexpectedEof`.
    pub(super) fn pull(&mut self, s: &mut TcpStream) -> std::io::Result<bool> {
        while self.got.len() < self.want {
            if !read_toward(s, &mut self.got, self.want)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The bytes received.
    pub(super) fn bytes(&self) -> &[u8] {
        &self.got
    }
}

/// One read from `s` onto `bytes` of at most the `want - bytes.len()` bytes still missing (64
/// at most), so nothing past them is taken. `Ok(true)`: it read (or was interrupted), go on;
/// `Ok(false)`: nothing has arrived for now. The peer closing is `UnexpectedEof`.
fn read_toward(s: &mut TcpStream, bytes: &mut Vec<u8>, want: usize) -> std::io::Result<bool> {
    let mut buf = [0u8; 64];
    let n = (want - bytes.len()).min(buf.len());
    match s.read(&mut buf[..n]) {
        Ok(0) => Err(ErrorKind::UnexpectedEof.into()),
        Ok(got) => {
            bytes.extend_from_slice(&buf[..got]);
            Ok(true)
        }
        Err(e) if e.kind() == ErrorKind::WouldBlock => Ok(false),
        Err(e) if e.kind() == ErrorKind::Interrupted => Ok(true),
        Err(e) => Err(e),
    }
}
