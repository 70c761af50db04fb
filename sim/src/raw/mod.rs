//! The simulator's unsafe code, and nothing else: loading a user's shared object, calling a
//! C kernel through its payload slot, and the signal handler that names a crash in user code.
//! Everything outside this folder forbids `unsafe`.
#![allow(unsafe_code)]

pub(crate) mod altstack;
pub(crate) mod c_call;
pub(crate) mod signals;
pub mod so;
