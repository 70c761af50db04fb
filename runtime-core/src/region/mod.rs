//! The region every structure lives in: the config that sizes it, the layout that carves it,
//! the tables and task slots it holds, how slots are reclaimed, and (in `raw/`) the crate's
//! unsafe code.

pub(crate) mod config;
pub(crate) mod layout;
mod live;
pub(crate) mod raw;
pub(crate) mod reclaim;
pub(crate) mod slot;
pub(crate) mod tables;

#[cfg(all(test, loom))]
mod loom_reclaim;
