//! Errors of setting up a simulated run.

use pto_runtime_core::{ClaimError, ConfigError, FatalError};

/// Why a simulated run could not start or finish.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// The runtime config (or the region for it) is unusable.
    #[error("invalid runtime config: {0}")]
    Config(#[from] ConfigError),
    /// A handle was taken twice (a bug in the caller's thread layout).
    #[error("{0}")]
    Claim(#[from] ClaimError),
    /// The OS refused a thread.
    #[error("could not start simulator thread {name}: {source}")]
    Spawn {
        /// The thread's name.
        name: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// The host cannot allocate what the simulated run needs.
    #[error("cannot allocate {bytes} bytes for the {what} on this host: lower {knob}")]
    OutOfMemory {
        /// What was being allocated.
        what: &'static str,
        /// Bytes asked for.
        bytes: u64,
        /// The setting that sizes it.
        knob: &'static str,
    },
    /// The output heap does not fit the simulated device memory.
    #[error(
        "the output heap does not fit device memory: {0}; raise memory_bytes or lower heap_bytes"
    )]
    Heap(String),
    /// A simulated engine could not start.
    #[error("could not start a simulated engine: {0}")]
    Engine(crate::engine::EngineError),
    /// A scheduler thread panicked (a runtime bug: the core never panics by design).
    #[error("scheduler thread {0} panicked")]
    SchedulerPanicked(u8),
    /// The run failed; its first fatal error.
    #[error("the run failed: {0}")]
    Run(FatalError),
}
