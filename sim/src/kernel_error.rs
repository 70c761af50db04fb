//! Why a kernel failed: a code for the task's result word and a message for the run's error.
//!
//! The runtime core carries only a 32-bit code from a core to the run status; the message
//! stays in the simulator ([`KernelFailure`], a bounded table per run) and joins the run's
//! error ([`crate::SimError::Run`]) when the run ends.

use std::borrow::Cow;
use std::sync::{Mutex, PoisonError};

use pto_runtime_core::{CoreId, KernelId, TaskId};

use crate::engine::EngineError;
use crate::memory::MemoryError;
use crate::slab::SlabFull;

/// Error codes the simulator reports in a task's result word. Codes below
/// [`KernelError::FIRST_USER_CODE`] are the simulator's own; a kernel's own codes start there.
pub mod error_code {
    /// The payload named a kernel that is not registered.
    pub const UNKNOWN_KERNEL: u32 = 1;
    /// The kernel panicked (the message is the panic's).
    pub const KERNEL_PANICKED: u32 = 2;
    /// The kernel failed with a message and no code of its own ([`super::KernelError::msg`]).
    pub const FAILED: u32 = 3;
    /// A device memory access was refused ([`crate::MemoryError`]).
    pub const MEMORY: u32 = 4;
    /// A transfer could not be posted ([`crate::EngineError`]).
    pub const ENGINE: u32 = 5;
    /// The kernel registered more deferred conditions than a lane may ([`crate::SlabFull`]).
    pub const TOO_MANY_CONDITIONS: u32 = 6;
    /// The kernel used a code reserved for the simulator (the message names it).
    pub const RESERVED_CODE: u32 = 7;
    /// The task has fewer scalar arguments than the kernel reads.
    pub const MISSING_ARGS: u32 = 8;
    /// The kernel used a tensor argument the task does not have, or used one wrongly
    /// (another element type, a write to an input, the wrong number of values).
    pub const BAD_TENSOR: u32 = 9;
}

/// Why a kernel failed: a code (what the task's result word carries; [`error_code`] lists the
/// simulator's own, a kernel's start at [`KernelError::FIRST_USER_CODE`]) and a message (what
/// the run's error shows).
///
/// The simulator's own errors convert, so `?` works in a kernel:
///
/// ```
/// use pto_sim::{KernelCtx, KernelError};
///
/// fn double(ctx: &KernelCtx<'_>) -> Result<(), KernelError> {
///     let [at] = ctx.args_array()?; // MISSING_ARGS if the task has no argument
///     let v = ctx.memory().load64(at)?; // a MemoryError: out of range, misaligned
///     if v > u64::MAX / 2 {
///         return Err(KernelError::new(16, format!("{v} would overflow")));
///     }
///     ctx.memory().store64(at, 2 * v)?;
///     Ok(())
/// }
/// # let _ = double;
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message} (kernel error code {code})")]
pub struct KernelError {
    code: u32,
    message: Cow<'static, str>,
}

impl KernelError {
    /// The first code a kernel may use for its own errors; the ones below are the
    /// simulator's ([`error_code`]).
    pub const FIRST_USER_CODE: u32 = 16;

    /// A kernel's own error `code` with `message`. A code below
    /// [`KernelError::FIRST_USER_CODE`] is reserved: the error becomes
    /// [`error_code::RESERVED_CODE`], and its message names the code the kernel used.
    ///
    /// ```
    /// use pto_sim::{KernelError, error_code};
    ///
    /// assert_eq!(KernelError::new(42, "bad tile").code(), 42);
    /// let reserved = KernelError::new(2, "bad tile");
    /// assert_eq!(reserved.code(), error_code::RESERVED_CODE);
    /// assert!(reserved.message().contains("code 2 is reserved"));
    /// ```
    pub fn new(code: u32, message: impl Into<Cow<'static, str>>) -> Self {
        let message = message.into();
        if code < Self::FIRST_USER_CODE {
            return KernelError::sim(
                error_code::RESERVED_CODE,
                format!(
                    "{message} (the kernel used error code {code}, but code {code} is reserved \
                     for the simulator: use {} or above)",
                    Self::FIRST_USER_CODE
                ),
            );
        }
        KernelError { code, message }
    }

    /// The code a kernel of the device ABI reported (`pto_kernel_fail` in a C kernel), kept
    /// as it is, reserved codes included, so the simulator reports the code the chip would.
    ///
    /// ```
    /// use pto_sim::KernelError;
    ///
    /// assert_eq!(KernelError::device(7, "gave up").code(), 7);
    /// ```
    pub fn device(code: u32, message: impl Into<Cow<'static, str>>) -> Self {
        KernelError::sim(code, message)
    }

    /// An error with `message` and no code of its own ([`error_code::FAILED`]).
    pub fn msg(message: impl Into<Cow<'static, str>>) -> Self {
        KernelError::sim(error_code::FAILED, message)
    }

    /// One of the simulator's own errors.
    pub(crate) fn sim(code: u32, message: impl Into<Cow<'static, str>>) -> Self {
        KernelError {
            code,
            message: message.into(),
        }
    }

    /// The code the task's result word carries.
    pub fn code(&self) -> u32 {
        self.code
    }

    /// What went wrong, in words.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl From<MemoryError> for KernelError {
    fn from(e: MemoryError) -> Self {
        KernelError::sim(error_code::MEMORY, e.to_string())
    }
}

impl From<EngineError> for KernelError {
    fn from(e: EngineError) -> Self {
        KernelError::sim(error_code::ENGINE, e.to_string())
    }
}

impl From<SlabFull> for KernelError {
    fn from(e: SlabFull) -> Self {
        KernelError::sim(error_code::TOO_MANY_CONDITIONS, e.to_string())
    }
}

impl From<&'static str> for KernelError {
    /// [`KernelError::msg`].
    fn from(message: &'static str) -> Self {
        KernelError::msg(message)
    }
}

impl From<String> for KernelError {
    /// [`KernelError::msg`].
    fn from(message: String) -> Self {
        KernelError::msg(message)
    }
}

/// A kernel that failed, as the simulator recorded it: which task, kernel, core and lane, and
/// its error (code and message).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelFailure {
    /// The task.
    pub task: TaskId,
    /// The kernel id in the payload.
    pub kernel: KernelId,
    /// The kernel's registered name (`None` if no kernel is registered as that id).
    pub name: Option<String>,
    /// The core the lane ran on.
    pub core: CoreId,
    /// The lane (0 for single-core tasks).
    pub lane: u8,
    /// What the kernel returned (or the simulator's own error).
    pub error: KernelError,
}

impl std::fmt::Display for KernelFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.name {
            Some(name) => write!(f, "kernel `{name}` ({})", self.kernel.0)?,
            None => write!(f, "kernel {}", self.kernel.0)?,
        }
        if self.lane != 0 {
            write!(f, " lane {}", self.lane)?;
        }
        write!(f, ": {}", self.error.message)
    }
}

/// The failures of one run, the first [`Failures::CAPACITY`] kept (a run stops at its first
/// fatal error, so only the few kernels that failed meanwhile are recorded).
#[derive(Default)]
pub(crate) struct Failures(Mutex<Vec<KernelFailure>>);

impl Failures {
    /// Failures kept per run.
    pub(crate) const CAPACITY: usize = 64;

    /// Records `f` unless the table is full.
    pub(crate) fn push(&self, f: KernelFailure) {
        let mut all = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if all.len() < Self::CAPACITY {
            all.push(f);
        }
    }

    /// The first failure recorded for `task` with `code`.
    pub(crate) fn find(&self, task: TaskId, code: u32) -> Option<KernelFailure> {
        let all = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        all.iter()
            .find(|f| f.task == task && f.error.code == code)
            .cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserved_codes_are_refused_and_the_message_says_so() {
        for code in 0..KernelError::FIRST_USER_CODE {
            let e = KernelError::new(code, "boom");
            assert_eq!(e.code(), error_code::RESERVED_CODE, "code {code}");
            assert!(e.message().starts_with("boom"), "{e}");
            assert!(
                e.message().contains(&format!("code {code} is reserved")),
                "{e}"
            );
        }
        let e = KernelError::new(16, "boom");
        assert_eq!((e.code(), e.message()), (16, "boom"));
        assert_eq!(e.to_string(), "boom (kernel error code 16)");
    }

    #[test]
    fn the_simulators_errors_convert_with_their_messages() {
        let m: KernelError = MemoryError::Misaligned {
            addr: 0x13,
            align: 8,
        }
        .into();
        assert_eq!(m.code(), error_code::MEMORY);
        assert!(m.message().contains("0x13 is not 8-byte aligned"), "{m}");
        let s: KernelError = SlabFull.into();
        assert_eq!(s.code(), error_code::TOO_MANY_CONDITIONS);
        let e: KernelError = EngineError::NoSuchEngine {
            engine: 3,
            engines: 2,
        }
        .into();
        assert_eq!(e.code(), error_code::ENGINE);
        let t: KernelError = "plain".into();
        assert_eq!((t.code(), t.message()), (error_code::FAILED, "plain"));
    }

    #[test]
    fn the_table_is_bounded_and_found_by_task_and_code() {
        let t = Failures::default();
        let f = |seq: u64, code: u32| KernelFailure {
            task: TaskId::from_raw(seq),
            kernel: KernelId(1),
            name: Some("k".into()),
            core: CoreId(0),
            lane: 0,
            error: KernelError::new(code, "x"),
        };
        for i in 0..100 {
            t.push(f(i, 20));
        }
        assert!(t.find(TaskId::from_raw(63), 20).is_some());
        assert!(
            t.find(TaskId::from_raw(64), 20).is_none(),
            "past the capacity"
        );
        assert!(t.find(TaskId::from_raw(3), 21).is_none(), "another code");
        assert_eq!(f(1, 20).to_string(), "kernel `k` (1): x");
    }
}
