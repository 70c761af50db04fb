//! The only unsafe code of the crate: turning the caller's bytes into typed tables, and a
//! task's arrays from C into slices. The crate denies `unsafe_code` everywhere else.
#![allow(unsafe_code)]
pub(crate) mod ffi;
pub(crate) mod region;
