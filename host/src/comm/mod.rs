//! Communicators: ranks that see each other's windows. The simulator backend maps one POSIX
//! shared-memory object per communicator.

mod error;
mod raw_shm;
mod shm;

pub use error::CommError;
pub use shm::{ShmComm, ShmConfig};
