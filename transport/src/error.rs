//! What can go wrong in a transport, and whether trying again can help.

use super::wire::WireError;

/// The kind of a transport failure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// A socket call failed (the OS error is in the detail).
    Io(std::io::ErrorKind),
    /// Nobody accepted the connection (yet): the peer may not be listening.
    Refused,
    /// A bounded wait ran out.
    Timeout,
    /// The peer spoke another protocol, version or job.
    Wire(WireError),
    /// The peer closed the connection.
    PeerClosed,
    /// The connection was aborted by this side.
    Aborted,
    /// The connection was closed by this side.
    Closed,
    /// Memory passed to a send or receive lies outside the registration given.
    NotRegistered,
    /// A registration overlaps another one of different bounds.
    RegistrationConflict,
    /// A request id that is not live (already consumed, or of another connection).
    StaleRequest,
    /// A message longer than the receive posted for it.
    Truncated,
    /// A failure injected by a fault plan (tests).
    Injected,
    /// Bad input from the caller.
    Invalid,
}

/// A transport failure: what happened, whether a retry with fresh state may succeed, and a
/// sentence that names the operation and the peer.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{detail}")]
pub struct TransportError {
    /// What happened.
    pub kind: ErrorKind,
    /// Whether trying again (a new connect, a later post) may succeed.
    pub retryable: bool,
    /// What was being done, to whom, and why it failed.
    pub detail: String,
}

impl TransportError {
    /// An error of `kind`, retryable or not, described by `detail`.
    pub fn new(kind: ErrorKind, retryable: bool, detail: impl Into<String>) -> Self {
        TransportError {
            kind,
            retryable,
            detail: detail.into(),
        }
    }

    /// An OS error met while doing `what`. Refusals, resets and timeouts are retryable.
    pub fn io(what: impl std::fmt::Display, e: &std::io::Error) -> Self {
        use std::io::ErrorKind as K;
        let (kind, retryable) = match e.kind() {
            K::ConnectionRefused => (ErrorKind::Refused, true),
            K::TimedOut => (ErrorKind::Timeout, true),
            K::ConnectionReset | K::ConnectionAborted | K::BrokenPipe | K::UnexpectedEof => {
                (ErrorKind::PeerClosed, true)
            }
            k => (ErrorKind::Io(k), false),
        };
        TransportError::new(kind, retryable, format!("{what}: {e}"))
    }

    /// Bytes from a peer refused while doing `what`; never retryable.
    pub fn wire(what: impl std::fmt::Display, e: WireError) -> Self {
        let detail = format!("{what}: {e}");
        TransportError::new(ErrorKind::Wire(e), false, detail)
    }

    /// Bad input from the caller.
    pub fn invalid(detail: impl Into<String>) -> Self {
        TransportError::new(ErrorKind::Invalid, false, detail)
    }
}
