//! The only unsafe code of the crate: the clock, barriers and cache maintenance of the CPU
//! (`arch`), volatile access to what the AICPU shares with the AICore executors (`chip`:
//! register windows, handshake blocks, payload slots), and reads of device words the
//! scheduler watches (`memory`), and the streams of records and producers to the host
//! (`stream_ring`). Each block states why it is sound.
#![allow(unsafe_code)]

pub mod arch;
pub mod chip;
pub mod memory;
pub mod stream_ring;
