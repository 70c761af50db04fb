//! Dependency edges: the row a consumer keeps per producer, and the words that link a
//! producer's fanout list through them.
#![forbid(unsafe_code)]

use crate::sync::{AtomicU32, AtomicU64};

/// Fanout head of a finished task: no edge can be added any more.
pub(crate) const EDGE_CLOSED: u32 = u32::MAX;
/// Fanout head / end of list: no (more) edges.
pub(crate) const EDGE_EMPTY: u32 = u32::MAX - 1;
/// Edge references are below this value.
pub(crate) const EDGE_SENTINELS: u32 = u32::MAX - 1;

/// An edge's place in the edge table (edge `k` of slot `g` is `g * max_deps + k`), as the
/// fanout lists link it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct EdgeRef(u32);

impl EdgeRef {
    /// The edge at position `index` of the edge table (the table is smaller than
    /// [`EDGE_SENTINELS`], which the config checks).
    #[inline]
    pub(crate) const fn at(index: u32) -> Self {
        EdgeRef(index)
    }
    /// The edge a fanout word or link names, or `None` for [`EDGE_CLOSED`] and
    /// [`EDGE_EMPTY`] (the end of the list).
    #[inline]
    pub(crate) const fn listed(word: u32) -> Option<Self> {
        if word < EDGE_SENTINELS {
            Some(EdgeRef(word))
        } else {
            None
        }
    }
    /// The edge as a fanout word or link stores it.
    #[inline]
    pub(crate) const fn word(self) -> u32 {
        self.0
    }
}

/// One dependency edge, stored in the consumer's slot row: which producer it holds, and the
/// next edge of that producer's fanout list.
pub(crate) struct Edge {
    pub(crate) producer: AtomicU64,
    pub(crate) next: AtomicU32,
}

impl Edge {
    pub(crate) fn new() -> Self {
        Edge {
            producer: AtomicU64::new(0),
            next: AtomicU32::new(EDGE_EMPTY),
        }
    }
}
