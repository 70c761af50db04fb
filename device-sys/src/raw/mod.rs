//! The only unsafe code of the crate: the clock, barriers and cache maintenance of the CPU
//! (`arch`), volatile access to the cores' register blocks (`regs`), and reads of device
//! words the scheduler watches (`memory`). Each block states why it is sound.
#![allow(unsafe_code)]

pub mod arch;
pub mod chip;
pub mod memory;
pub mod regs;
