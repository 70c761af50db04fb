//! Communicators: ranks that see each other's windows. The simulator backend maps one POSIX
//! shared-memory object per communicator; [`capi`] exports the six calls to C
//! (`host/include/pto_comm.h`). The [`hccl`] backend (feature `cann`) maps windows in NPU
//! memory through CANN.

pub mod capi;
mod error;
#[cfg(feature = "cann")]
pub mod hccl;
mod raw_shm;
mod shm;

pub use error::CommError;
pub use shm::{ShmComm, ShmConfig};
