//! The transport between hosts: a net-adaptor-shaped interface ([`api`]), its TCP
//! implementation ([`tcp`]), a fault-injecting wrapper for tests ([`faulty`]), and the
//! bootstrap that forms a job over any of them ([`bootstrap`]).
//!
//! The contract that shapes all of it: every failure returns an error to the caller and
//! gives back every resource it took (counted by [`live`]), and a retry with fresh state
//! can succeed.

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
