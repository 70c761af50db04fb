//! The only unsafe code of the crate: turning the caller's bytes into typed tables.
pub(crate) mod region;
