//! Communicators: ranks that see each other's windows. The simulator backend maps one POSIX
//! shared-memory object per communicator; [`capi`] exports the six calls to C
//! (`host/include/pto_comm.h`). The [`hccl`] backend (feature `cann`) maps windows in NPU
//! memory through CANN. [`sweep_stale`] removes the objects of jobs killed whole.

pub mod capi;
mod error;
#[cfg(feature = "cann")]
pub mod hccl;
mod header;
mod heartbeat;
mod identity;
mod last_words;
mod liveness;
mod name;
mod poison;
mod raw_shm;
mod shm;
mod sweep;
mod watch;

pub use error::CommError;
pub use liveness::{HUNG_AFTER, MAX_UNSEEN, NAMED_WITHIN};
pub use name::{MAX_RUN_ID, USER_RUN_ID, object_name, sanitize_run_id};
pub use poison::poison_reason;
pub use shm::{ShmComm, ShmConfig};
pub use sweep::{StaleObject, sweep_stale};
pub use watch::JobWatch;
