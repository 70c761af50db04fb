//! Communicators: ranks that see each other's windows. The simulator backend maps one POSIX
//! shared-memory object per communicator; [`capi`] exports the six calls to C
//! (`host/include/pto_comm.h`).

pub mod capi;
mod error;
mod raw_shm;
mod shm;

pub use error::CommError;
pub use shm::{ShmComm, ShmConfig};
