//! Typed errors: what went wrong, and what to change.
#![forbid(unsafe_code)]

mod claim;
mod fatal;
mod fatal_display;
mod graph;
mod submit;

pub use claim::ClaimError;
pub use fatal::{FatalCause, FatalError, FatalKind};
pub use graph::GraphError;
pub use submit::SubmitError;
