//! The only unsafe code of the crate: turning the caller's bytes into typed tables, and a
//! task's arrays from C into slices (and, for tests, a region in heap memory). The crate denies `unsafe_code` everywhere else.
#![allow(unsafe_code)]
pub(crate) mod ffi;
#[cfg(test)]
pub(crate) mod heap_region;
pub(crate) mod region;
