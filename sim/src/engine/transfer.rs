//! What a kernel posts to an engine: a copy and/or a signal, its latency or loss, and the
//! engine's knobs and errors.

use std::time::Duration;

use crate::memory::MemoryError;

/// Longest delay a transfer waits before landing; longer latencies are cut to this.
pub(super) const MAX_DELAY: Duration = Duration::from_secs(365 * 24 * 3600);

/// Engine knobs.
#[derive(Clone, Copy, Debug)]
pub struct EngineOptions {
    /// Time from posting to landing, unless the transfer sets its own. Default 2 µs.
    pub latency: Duration,
    /// Extra delay drawn uniformly from `0..=jitter` for each transfer. Default 0.
    pub jitter: Duration,
    /// Seed of the jitter generator (mixed with the engine index).
    pub seed: u64,
    /// Records each of the engine's completion queues holds (one queue per scheduler; see
    /// [`Transfer::report_to`]). Default 256; a full queue makes the engine wait.
    pub queue_capacity: usize,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            latency: Duration::from_micros(2),
            jitter: Duration::ZERO,
            seed: 0,
            queue_capacity: 256,
        }
    }
}

/// What a landed transfer does after its copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signal {
    /// Nothing.
    None,
    /// Adds `delta` (wrapping) to the 32-bit word at `addr`, with release ordering.
    Add32 {
        /// Device address of the counter (4-aligned).
        addr: u64,
        /// What to add.
        delta: u32,
    },
    /// Adds `delta` (wrapping) to the 64-bit word at `addr`, with release ordering.
    Add64 {
        /// Device address of the counter (8-aligned).
        addr: u64,
        /// What to add.
        delta: u64,
    },
}

/// One posted transfer.
#[derive(Clone, Copy, Debug)]
pub struct Transfer {
    /// Device address of the first source word (8-aligned).
    pub src: u64,
    /// Device address of the first destination word (8-aligned).
    pub dst: u64,
    /// Number of 64-bit words to copy (0: signal only).
    pub words: usize,
    /// What to do after the copy.
    pub signal: Signal,
    /// Latency of this transfer, overriding the engine's.
    pub latency: Option<Duration>,
    /// Fault injection: the transfer never lands and never signals.
    pub lost: bool,
    /// Fault injection: at its landing time the transfer fails with this status (a
    /// [`pto_runtime_core::transfer_status`] code, nonzero): nothing is copied or signalled,
    /// the watermark stops below it, and its completion entry (if it reports) carries the
    /// status.
    pub fail: Option<u32>,
    /// The scheduler whose completion queue gets this transfer's entry, if any (set by
    /// [`crate::KernelCtx::post_queued`]).
    pub report: Option<u8>,
}

impl Transfer {
    /// Copies `words` words from `src` to `dst`, with no signal and the engine's latency.
    pub fn copy(src: u64, dst: u64, words: usize) -> Self {
        Transfer {
            src,
            dst,
            words,
            signal: Signal::None,
            latency: None,
            lost: false,
            fail: None,
            report: None,
        }
    }

    /// Only signals, copying nothing.
    pub fn signal_only(signal: Signal) -> Self {
        Transfer::copy(0, 0, 0).signal(signal)
    }

    /// The same transfer, signalling `s` after its copy.
    pub fn signal(self, s: Signal) -> Self {
        Transfer { signal: s, ..self }
    }

    /// The same transfer, landing `latency` after it is posted.
    pub fn after(self, latency: Duration) -> Self {
        Transfer {
            latency: Some(latency),
            ..self
        }
    }

    /// The same transfer, lost: it never lands.
    pub fn lost(self) -> Self {
        Transfer { lost: true, ..self }
    }

    /// The same transfer, failing with `status` at its landing time (see [`Transfer::fail`];
    /// a status of 0 is refused at posting).
    pub fn fail(self, status: u32) -> Self {
        Transfer {
            fail: Some(status),
            ..self
        }
    }

    /// The same transfer, reporting its completion entry to scheduler `scheduler`'s queue of
    /// the engine.
    pub fn report_to(self, scheduler: u8) -> Self {
        Transfer {
            report: Some(scheduler),
            ..self
        }
    }
}

/// Why a transfer could not be posted or an engine not started.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The transfer names memory it cannot touch; nothing was posted.
    #[error("transfer rejected: {0}")]
    Memory(#[from] MemoryError),
    /// The OS refused the engine thread.
    #[error("could not start the engine thread: {0}")]
    Spawn(#[source] std::io::Error),
    /// The engine thread has stopped.
    #[error("the engine has stopped")]
    Stopped,
    /// The transfer asks to report to a completion queue the engine does not have.
    #[error(
        "engine {engine} has {queues} completion queue(s), none for scheduler {scheduler}: \
         post with KernelCtx::post_queued on a machine whose engines have queues"
    )]
    NoQueue {
        /// The engine.
        engine: u32,
        /// The scheduler asked for.
        scheduler: u8,
        /// Queues the engine has.
        queues: usize,
    },
    /// A transfer set to fail with status 0, which means success.
    #[error("a transfer cannot fail with status 0 (success): use a nonzero status")]
    ZeroFailStatus,
    /// A kernel named an engine the machine does not have.
    #[error("engine {engine} does not exist: the machine has {engines} engine(s)")]
    NoSuchEngine {
        /// The engine asked for.
        engine: u32,
        /// Engines of the machine.
        engines: usize,
    },
}
