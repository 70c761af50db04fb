//! Counts of a transport's live resources, so that tests can prove every failure and every
//! close gives back what was taken. Each resource holds a [`Token`] that counts it while it
//! lives.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A kind of resource a transport holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resource {
    /// A listening socket.
    Listener,
    /// A connected or connecting socket.
    Socket,
    /// A connection object.
    Conn,
    /// A memory registration (one per distinct region).
    Registration,
    /// A request slot in use.
    Request,
}

const KINDS: usize = 5;

/// Live resources of one transport, by kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LiveResources {
    /// Listening sockets.
    pub listeners: usize,
    /// Connected or connecting sockets.
    pub sockets: usize,
    /// Connection objects.
    pub conns: usize,
    /// Registered regions.
    pub registrations: usize,
    /// Request slots in use.
    pub requests: usize,
}

impl LiveResources {
    /// Everything but listeners: what a finished or failed connection must give back.
    pub fn without_listeners(self) -> Self {
        LiveResources {
            listeners: 0,
            ..self
        }
    }

    /// Whether nothing is held.
    pub fn is_zero(self) -> bool {
        self == Self::default()
    }
}

/// The counters, shared by a transport and every resource it made.
#[derive(Debug, Default)]
pub struct Live {
    counts: [AtomicUsize; KINDS],
}

impl Live {
    /// Fresh counters, all zero.
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// A token that counts one `kind` until dropped.
    pub fn token(self: &Arc<Self>, kind: Resource) -> Token {
        self.counts[kind as usize].fetch_add(1, Ordering::Relaxed);
        Token {
            live: Arc::clone(self),
            kind,
        }
    }

    /// The counts now.
    pub fn snapshot(&self) -> LiveResources {
        let c = |k: Resource| self.counts[k as usize].load(Ordering::Relaxed);
        LiveResources {
            listeners: c(Resource::Listener),
            sockets: c(Resource::Socket),
            conns: c(Resource::Conn),
            registrations: c(Resource::Registration),
            requests: c(Resource::Request),
        }
    }
}

/// Counts one resource while it lives.
#[derive(Debug)]
pub struct Token {
    live: Arc<Live>,
    kind: Resource,
}

impl Drop for Token {
    fn drop(&mut self) {
        self.live.counts[self.kind as usize].fetch_sub(1, Ordering::Relaxed);
    }
}
