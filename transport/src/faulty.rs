//! A fault-injecting wrapper over any transport: it fails the k-th step of connect, accept,
//! send, receive or registration, the way a real failure would, so that tests can prove every
//! failure gives back what it took and a retry succeeds.
//!
//! - connect and accept: the k-th step the inner state machine takes (see
//!   [`Progress::steps`]) fails; the wrapper drops the caller's progress state (and a
//!   connection that came out) and returns the error, as a failing step must.
//! - send and receive: the k-th post fails and aborts the connection (a stream broken
//!   mid-message is unusable), failing every request pending on it.
//! - registration: the k-th region fails and the ones before it are given back.
#![forbid(unsafe_code)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use super::api::{Conn, Progress, Transport};
use super::error::{ErrorKind, TransportError};
use super::live::LiveResources;
use super::registry::{Region, Registration};
use super::requests::{Completion, ReqId};
use super::wire::ListenHandle;

/// An operation a fault can hit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// A step of a connect.
    Connect,
    /// A step of an accept.
    Accept,
    /// An isend.
    Send,
    /// An irecv.
    Recv,
    /// One region of a registration.
    Register,
}

/// Fail the `at`-th step (from 1) of `op`, once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FaultPlan {
    /// The operation.
    pub op: Op,
    /// Which of its steps, from 1.
    pub at: u32,
}

#[derive(Debug)]
struct Counter {
    plan: FaultPlan,
    seen: AtomicU32,
    fired: AtomicU32,
}

impl Counter {
    /// Counts `n` steps of `op`; true if the planned one is among them.
    fn hit(&self, op: Op, n: u32) -> bool {
        if op != self.plan.op || n == 0 {
            return false;
        }
        let before = self.seen.fetch_add(n, Ordering::Relaxed);
        let hit = before < self.plan.at && self.plan.at <= before + n;
        if hit {
            self.fired.fetch_add(1, Ordering::Relaxed);
        }
        hit
    }

    fn error(&self) -> TransportError {
        TransportError::new(
            ErrorKind::Injected,
            true,
            format!(
                "injected failure at step {} of {:?}",
                self.plan.at, self.plan.op
            ),
        )
    }
}

/// A transport whose planned step fails.
#[derive(Debug)]
pub struct Faulty<T> {
    inner: T,
    counter: Arc<Counter>,
}

impl<T> Faulty<T> {
    /// Wraps `inner` with `plan`.
    pub fn new(inner: T, plan: FaultPlan) -> Self {
        Faulty {
            inner,
            counter: Arc::new(Counter {
                plan,
                seen: AtomicU32::new(0),
                fired: AtomicU32::new(0),
            }),
        }
    }

    /// Whether the planned failure happened.
    pub fn fired(&self) -> bool {
        self.counter.fired.load(Ordering::Relaxed) > 0
    }

    /// Steps of the planned operation seen so far.
    pub fn seen(&self) -> u32 {
        self.counter.seen.load(Ordering::Relaxed)
    }

    /// The wrapped transport.
    pub fn inner(&self) -> &T {
        &self.inner
    }
}

impl<T: Transport> Faulty<T> {
    fn wrap(&self, c: T::Conn) -> FaultyConn<T::Conn> {
        FaultyConn {
            inner: c,
            counter: Arc::clone(&self.counter),
        }
    }

    /// Runs one call of a connect or accept and fails it if it crossed the planned step.
    fn step<S: Progress>(
        &self,
        op: Op,
        state: &mut S,
        call: impl FnOnce(&mut S) -> Result<Option<T::Conn>, TransportError>,
    ) -> Result<Option<FaultyConn<T::Conn>>, TransportError> {
        let before = state.steps();
        let r = call(state);
        if self.counter.hit(op, state.steps().wrapping_sub(before)) {
            // Give back what the failing step took: the state and any connection.
            drop(r);
            *state = S::default();
            return Err(self.counter.error());
        }
        Ok(r?.map(|c| self.wrap(c)))
    }
}

impl<T: Transport> Transport for Faulty<T> {
    type Listener = T::Listener;
    type Conn = FaultyConn<T::Conn>;
    type ConnectState = T::ConnectState;
    type AcceptState = T::AcceptState;

    fn listen(&self, addr: SocketAddr) -> Result<(T::Listener, ListenHandle), TransportError> {
        self.inner.listen(addr)
    }

    fn connect(
        &self,
        to: &ListenHandle,
        state: &mut T::ConnectState,
    ) -> Result<Option<Self::Conn>, TransportError> {
        self.step(Op::Connect, state, |s| self.inner.connect(to, s))
    }

    fn accept(
        &self,
        listener: &mut T::Listener,
        state: &mut T::AcceptState,
    ) -> Result<Option<Self::Conn>, TransportError> {
        self.step(Op::Accept, state, |s| self.inner.accept(listener, s))
    }

    fn wait_connect(&self, state: &T::ConnectState, max: Duration) {
        self.inner.wait_connect(state, max)
    }

    fn wait_accept(&self, listener: &T::Listener, pending: &[T::AcceptState], max: Duration) {
        self.inner.wait_accept(listener, pending, max)
    }

    fn register(&self, regions: &[Region]) -> Result<Registration, TransportError> {
        let mut all: Option<Registration> = None;
        for r in regions {
            if self.counter.hit(Op::Register, 1) {
                // `all` drops here: the regions before this one are given back.
                return Err(self.counter.error());
            }
            let one = self.inner.register(std::slice::from_ref(r))?;
            all = Some(match all {
                Some(a) => a.merge(one),
                None => one,
            });
        }
        match all {
            Some(a) => Ok(a),
            None => self.inner.register(&[]),
        }
    }

    fn live(&self) -> LiveResources {
        self.inner.live()
    }
}

/// A connection whose planned send or receive fails.
#[derive(Debug)]
pub struct FaultyConn<C> {
    inner: C,
    counter: Arc<Counter>,
}

impl<C: Conn> Conn for FaultyConn<C> {
    fn peer(&self) -> u32 {
        self.inner.peer()
    }

    fn peer_addr(&self) -> Option<SocketAddr> {
        self.inner.peer_addr()
    }

    fn isend(&mut self, mr: &Registration, data: &[u8]) -> Result<Option<ReqId>, TransportError> {
        if self.counter.hit(Op::Send, 1) {
            self.inner.abort();
            return Err(self.counter.error());
        }
        self.inner.isend(mr, data)
    }

    fn irecv(&mut self, max_len: usize) -> Result<Option<ReqId>, TransportError> {
        if self.counter.hit(Op::Recv, 1) {
            self.inner.abort();
            return Err(self.counter.error());
        }
        self.inner.irecv(max_len)
    }

    fn test(&mut self, id: ReqId) -> Result<Option<Completion>, TransportError> {
        self.inner.test(id)
    }

    fn wait(&mut self, max: Duration) {
        self.inner.wait(max)
    }

    fn abort(&mut self) {
        self.inner.abort()
    }

    fn close(&mut self) -> Result<(), TransportError> {
        self.inner.close()
    }
}
