//! The crate's unsafe code for the region: turning the caller's bytes into typed tables
//! (and, for tests, a region in heap memory), and power-of-two tables read without bounds
//! checks ([`masked`]). The crate denies `unsafe_code` everywhere
//! else but in `ffi/raw.rs` (the C side's pointers).
#![allow(unsafe_code)]
#[cfg(test)]
pub(crate) mod heap_region;
pub(crate) mod masked;
pub(crate) mod region;
