//! The region every structure lives in: the config that sizes it, how a table is carved from it,
//! the words of a task slot and of an edge, and (in `raw/`) the crate's unsafe code. The
//! tables made of them are `crate::tables`; the sequence that carves them is `crate::layout`.

pub(crate) mod carve;
pub(crate) mod config;
pub(crate) mod edge;
pub(crate) mod raw;
pub(crate) mod slot;
