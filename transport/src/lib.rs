//! pto-transport: the transport between hosts, and the bootstrap that forms a job over it.
//!
//! What it holds: a net-adaptor-shaped interface ([`api`]), its TCP implementation
//! ([`tcp`]: non-blocking connect and accept, registered memory, isend/irecv/test, every
//! connection proved by a job secret ([`secret`])), a fault-injecting wrapper for tests
//! ([`faulty`]), and the bootstrap that forms a job over any of them ([`bootstrap`]).
//! `pto-host` re-exports it as `pto_host::transport`; it needs nothing of the runtime.
//!
//! Principles:
//! - Every failure returns an error to the caller and gives back every resource it took
//!   (counted by [`live`]), and a retry with fresh state can succeed.
//! - Every wait is bounded; close is idempotent.
//! - No unsafe but the `ppoll` call (`tcp/poll.rs`), with its SAFETY comment.

#![deny(unsafe_code)]
#![deny(missing_docs)]

pub mod api;
pub mod bootstrap;
pub mod error;
pub mod faulty;
pub mod live;
pub mod registry;
pub mod requests;
pub mod secret;
pub mod tcp;
pub mod wire;

pub use api::{Conn, Progress, Transport};
pub use error::{ErrorKind, TransportError};
pub use live::LiveResources;
pub use registry::{Region, Registration};
pub use requests::{Completion, ReqId};
