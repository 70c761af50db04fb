//! A bounded pool of request slots with generation-tagged ids: an id is consumed exactly once
//! (by a completion or an error), a stale id is recognised, and a full pool means "try later".
#![forbid(unsafe_code)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use super::error::{ErrorKind, TransportError};
use super::live::{Live, Resource, Token};

/// Requests a connection can have in flight at once.
pub const MAX_REQUESTS: usize = 32;

/// Connection numbers handed out so far in this process, by every transport.
static NEXT_CONN: AtomicU64 = AtomicU64::new(1);

/// A connection number no other connection of this process has had, whichever transport
/// makes it: the ids of two connections' requests never collide.
pub fn fresh_conn_number() -> u64 {
    NEXT_CONN.fetch_add(1, Ordering::Relaxed)
}

/// Names one posted send or receive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ReqId {
    conn: u64,
    slot: u32,
    generation: u32,
}

/// What a finished request did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Completion {
    /// A send of this many bytes left this side.
    Sent(usize),
    /// A message arrived.
    Received(Vec<u8>),
}

#[derive(Debug)]
enum State {
    Free,
    Pending,
    Done(Completion),
    Failed(TransportError),
}

#[derive(Debug)]
struct Slot {
    generation: u32,
    state: State,
    /// Counts the slot while it is not free.
    token: Option<Token>,
}

impl Slot {
    fn free(&mut self) {
        self.state = State::Free;
        self.token = None;
    }
}

/// The request slots of one connection.
#[derive(Debug)]
pub struct RequestPool {
    conn: u64,
    slots: Vec<Slot>,
    live: Arc<Live>,
}

impl RequestPool {
    /// An empty pool for connection `conn` (from [`fresh_conn_number`], so that ids are
    /// unique in the process).
    pub fn new(conn: u64, live: Arc<Live>) -> Self {
        let slots = (0..MAX_REQUESTS)
            .map(|_| Slot {
                generation: 0,
                state: State::Free,
                token: None,
            })
            .collect();
        RequestPool { conn, slots, live }
    }

    /// A fresh pending request, `None` when every slot is taken.
    pub fn post(&mut self) -> Option<ReqId> {
        let (i, s) = self
            .slots
            .iter_mut()
            .enumerate()
            .find(|(_, s)| matches!(s.state, State::Free))?;
        s.generation = s.generation.wrapping_add(1);
        s.state = State::Pending;
        s.token = Some(self.live.token(Resource::Request));
        Some(ReqId {
            conn: self.conn,
            slot: i as u32,
            generation: s.generation,
        })
    }

    /// Gives back a slot that was posted but never handed out (the post failed).
    pub fn cancel(&mut self, id: ReqId) {
        if let Some(s) = self.slot_mut(id) {
            s.free();
        }
    }

    /// Marks a pending request done.
    pub fn complete(&mut self, id: ReqId, c: Completion) {
        if let Some(s) = self.slot_mut(id)
            && let State::Pending = s.state
        {
            s.state = State::Done(c);
        }
    }

    /// Marks a pending request failed.
    pub fn fail(&mut self, id: ReqId, e: TransportError) {
        if let Some(s) = self.slot_mut(id)
            && let State::Pending = s.state
        {
            s.state = State::Failed(e);
        }
    }

    /// The outcome of `id`: `Ok(None)` while pending; a completion or an error consumes it.
    pub fn take(&mut self, id: ReqId) -> Result<Option<Completion>, TransportError> {
        let s = self.slot_mut(id).ok_or_else(|| {
            TransportError::new(
                ErrorKind::StaleRequest,
                false,
                format!("request {id:?} is not live: already completed, or of another connection"),
            )
        })?;
        if let State::Pending = s.state {
            return Ok(None);
        }
        let state = std::mem::replace(&mut s.state, State::Free);
        s.free();
        match state {
            State::Done(c) => Ok(Some(c)),
            State::Failed(e) => Err(e),
            State::Pending | State::Free => unreachable!("slot_mut returns live slots only"),
        }
    }

    /// Frees every slot: ids handed out become stale.
    pub fn clear(&mut self) {
        for s in &mut self.slots {
            s.free();
        }
    }

    fn slot_mut(&mut self, id: ReqId) -> Option<&mut Slot> {
        if id.conn != self.conn {
            return None;
        }
        self.slots
            .get_mut(id.slot as usize)
            .filter(|s| s.generation == id.generation && !matches!(s.state, State::Free))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_consumed_once_and_a_full_pool_says_try_later() {
        let live = Live::new();
        let mut p = RequestPool::new(7, Arc::clone(&live));
        let ids: Vec<_> = (0..MAX_REQUESTS).map(|_| p.post().unwrap()).collect();
        assert_eq!(p.post(), None);
        assert_eq!(live.snapshot().requests, MAX_REQUESTS);
        assert_eq!(p.take(ids[0]).unwrap(), None);
        p.complete(ids[0], Completion::Sent(3));
        assert_eq!(p.take(ids[0]).unwrap(), Some(Completion::Sent(3)));
        assert_eq!(p.take(ids[0]).unwrap_err().kind, ErrorKind::StaleRequest);
        // The slot is reused under a new generation; the old id stays stale.
        let again = p.post().unwrap();
        assert_ne!(again, ids[0]);
        assert_eq!(p.take(ids[0]).unwrap_err().kind, ErrorKind::StaleRequest);
        p.fail(ids[1], TransportError::invalid("x"));
        assert!(p.take(ids[1]).is_err());
        assert_eq!(p.take(ids[1]).unwrap_err().kind, ErrorKind::StaleRequest);
        let mut other = RequestPool::new(8, Arc::clone(&live));
        assert_eq!(
            other.take(ids[2]).unwrap_err().kind,
            ErrorKind::StaleRequest
        );
        p.clear();
        assert_eq!(live.snapshot().requests, 0);
    }
}
