//! Why a builder could not submit its workload.

use pto_runtime_core::{GraphError, SubmitError};

/// A builder's error: a shape it cannot tile, or a submit the runtime refused.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The shape does not divide into its tiles (or has a zero dimension).
    #[error("bad shape: {0}")]
    Shape(String),
    /// Device memory the workload needs (a predicate's counts) could not be had.
    #[error("device memory: {0}")]
    Memory(String),
    /// The orchestrator refused a submit, an allocation or a scope.
    #[error(transparent)]
    Submit(#[from] SubmitError),
    /// A graph's recording or replay was refused.
    #[error(transparent)]
    Graph(#[from] GraphError),
}
