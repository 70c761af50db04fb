//! The transport interface, in the shape of a net adaptor: listen, non-blocking connect and
//! accept driven by caller-owned progress state, registration, isend/irecv/test, abort and
//! close.
//!
//! The rules every implementation keeps:
//! - No call blocks, except [`Conn::wait`], which is bounded.
//! - A failure returns an error to the caller, releases everything taken since the last
//!   stable state, and leaves the progress state idle, so that the next call starts afresh.
//! - Dropping a progress state, a listener, a connection or a registration releases what it
//!   holds.
//! - A result says which it is: try later (`Ok(None)`), done (`Ok(Some(..))`), or failed
//!   (`Err`, with [`TransportError::retryable`]).
#![forbid(unsafe_code)]

use std::net::SocketAddr;
use std::time::Duration;

use super::error::TransportError;
use super::live::LiveResources;
use super::registry::{Region, Registration};
use super::requests::{Completion, ReqId};
use super::wire::ListenHandle;

/// Progress state of a pending connect or accept, owned by the caller.
pub trait Progress: Default + Send {
    /// Steps this state has completed since it was made, over every attempt; a step is one
    /// resource taken or one handshake message moved.
    fn steps(&self) -> u32;

    /// Whether the state holds nothing (before the first step, after a failure, after a
    /// connection came out).
    fn is_idle(&self) -> bool;

    /// Whether the state waits for the peer to speak first and has not heard all of it (an
    /// accept before the caller's hello is complete): a caller that stays silent, the first
    /// to drop when too many are pending.
    fn awaits_hello(&self) -> bool {
        false
    }
}

/// A way to reach other ranks.
pub trait Transport: Send + Sync {
    /// A listening endpoint.
    type Listener: Send;
    /// An established connection.
    type Conn: Conn;
    /// Progress of a connect.
    type ConnectState: Progress;
    /// Progress of an accept.
    type AcceptState: Progress;

    /// Listens at `addr` (port 0 picks one) and returns the handle peers connect to.
    fn listen(&self, addr: SocketAddr) -> Result<(Self::Listener, ListenHandle), TransportError>;

    /// Advances a connect to `to`: `Ok(None)` means call again with the same state.
    fn connect(
        &self,
        to: &ListenHandle,
        state: &mut Self::ConnectState,
    ) -> Result<Option<Self::Conn>, TransportError>;

    /// Advances an accept on `listener`: `Ok(None)` means call again with the same state. A
    /// listener accepts any number of connections, one state at a time.
    fn accept(
        &self,
        listener: &mut Self::Listener,
        state: &mut Self::AcceptState,
    ) -> Result<Option<Self::Conn>, TransportError>;

    /// Blocks for at most `max` until the connect in `state` may make progress (its socket
    /// is ready, its backoff is over). The default just sleeps a little.
    fn wait_connect(&self, state: &Self::ConnectState, max: Duration) {
        let _ = state;
        std::thread::sleep(max.min(Duration::from_micros(200)));
    }

    /// Blocks for at most `max` until `listener` has a caller queued or one of the accepts
    /// in `pending` may make progress. The default just sleeps a little.
    fn wait_accept(&self, listener: &Self::Listener, pending: &[Self::AcceptState], max: Duration) {
        let _ = (listener, pending);
        std::thread::sleep(max.min(Duration::from_micros(200)));
    }

    /// Registers every region or none (see [`super::registry`]).
    fn register(&self, regions: &[Region]) -> Result<Registration, TransportError>;

    /// Resources held now, by kind.
    fn live(&self) -> LiveResources;
}

/// An established connection: messages both ways, in order.
pub trait Conn: Send {
    /// The rank at the other end, as its hello named it.
    fn peer(&self) -> u32;

    /// The address of the other end, where the transport has one.
    fn peer_addr(&self) -> Option<SocketAddr> {
        None
    }

    /// Posts a send of `data`, which must lie in `mr`. `Ok(None)`: no request slot free now,
    /// try later.
    fn isend(&mut self, mr: &Registration, data: &[u8]) -> Result<Option<ReqId>, TransportError>;

    /// Posts a receive of the next message, at most `max_len` bytes. `Ok(None)`: try later.
    fn irecv(&mut self, max_len: usize) -> Result<Option<ReqId>, TransportError>;

    /// Makes progress and reports on `id`: `Ok(None)` while pending. A completion or an error
    /// consumes the id.
    fn test(&mut self, id: ReqId) -> Result<Option<Completion>, TransportError>;

    /// Blocks for at most `max` until progress may be possible.
    fn wait(&mut self, max: Duration);

    /// Fails every pending request of this connection at once and refuses new ones; the
    /// peer sees the connection end.
    fn abort(&mut self);

    /// Releases the socket and every request slot; ids handed out become stale. Idempotent:
    /// a second close does nothing and succeeds.
    fn close(&mut self) -> Result<(), TransportError>;
}
