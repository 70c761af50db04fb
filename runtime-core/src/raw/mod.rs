//! The only unsafe code of the crate: turning the caller's bytes into typed tables, and a
//! task's arrays from C into slices.
pub(crate) mod ffi;
pub(crate) mod region;
