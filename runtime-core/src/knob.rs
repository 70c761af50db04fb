//! The closed set of settings an error may tell a user to change.
//!
//! Every message of this crate (and of the simulator and the host built on it) that says
//! "raise X" or "lower X" names X through a [`Knob`], never as free text. A knob prints as
//! its Rust name in backticks (`` `max_deps` ``): the field of [`crate::Config`], or of the
//! simulator's or host's options, that a library user sets. A front end whose users set the
//! knob some other way (a command-line flag) replaces each backticked name with its own
//! word, and can check that it knows every knob by walking [`Knob::ALL`].
#![forbid(unsafe_code)]

use core::fmt;

/// A setting that sizes or bounds a run. A new knob goes at the end, and into [`Knob::ALL`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Knob {
    /// [`crate::Config::rings`].
    Rings,
    /// [`crate::Config::task_window`].
    TaskWindow,
    /// [`crate::Config::max_deps`].
    MaxDeps,
    /// [`crate::Config::max_args`].
    MaxArgs,
    /// [`crate::Config::max_tensors`].
    MaxTensors,
    /// [`crate::Config::schedulers`].
    Schedulers,
    /// [`crate::Config::submit_timeout_us`].
    SubmitTimeout,
    /// [`crate::Config::task_timeout_us`].
    TaskTimeout,
    /// [`crate::Config::profile_capacity`].
    ProfileCapacity,
    /// [`crate::Config::max_conditions`].
    MaxConditions,
    /// [`crate::Config::deferred_capacity`].
    DeferredCapacity,
    /// [`crate::Config::deferred_poll_budget`].
    DeferredPollBudget,
    /// [`crate::Config::deferred_timeout_us`].
    DeferredTimeout,
    /// [`crate::Config::completion`].
    Completion,
    /// The platform's output heap per ring, in bytes (the simulator's
    /// `SimOptions::heap_bytes`, a program's `RunSpec` on the host).
    HeapBytes,
    /// The simulated device memory, in bytes (`SimOptions::memory_bytes`).
    MemoryBytes,
    /// Each rank's communication window, in bytes (the host's comm backends).
    WindowBytes,
}

impl Knob {
    /// Every knob, in declaration order.
    pub const ALL: [Knob; 17] = [
        Knob::Rings,
        Knob::TaskWindow,
        Knob::MaxDeps,
        Knob::MaxArgs,
        Knob::MaxTensors,
        Knob::Schedulers,
        Knob::SubmitTimeout,
        Knob::TaskTimeout,
        Knob::ProfileCapacity,
        Knob::MaxConditions,
        Knob::DeferredCapacity,
        Knob::DeferredPollBudget,
        Knob::DeferredTimeout,
        Knob::Completion,
        Knob::HeapBytes,
        Knob::MemoryBytes,
        Knob::WindowBytes,
    ];

    /// The knob's Rust name: the field a library user sets.
    pub const fn name(self) -> &'static str {
        match self {
            Knob::Rings => "rings",
            Knob::TaskWindow => "task_window",
            Knob::MaxDeps => "max_deps",
            Knob::MaxArgs => "max_args",
            Knob::MaxTensors => "max_tensors",
            Knob::Schedulers => "schedulers",
            Knob::SubmitTimeout => "submit_timeout_us",
            Knob::TaskTimeout => "task_timeout_us",
            Knob::ProfileCapacity => "profile_capacity",
            Knob::MaxConditions => "max_conditions",
            Knob::DeferredCapacity => "deferred_capacity",
            Knob::DeferredPollBudget => "deferred_poll_budget",
            Knob::DeferredTimeout => "deferred_timeout_us",
            Knob::Completion => "completion",
            Knob::HeapBytes => "heap_bytes",
            Knob::MemoryBytes => "memory_bytes",
            Knob::WindowBytes => "window_bytes",
        }
    }
}

impl fmt::Display for Knob {
    /// The Rust name in backticks, as messages print it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`", self.name())
    }
}

/// Knobs as a sentence lists them: `` `a` ``, `` `a` or `b` ``, `` `a`, `b` or `c` ``.
#[derive(Clone, Copy, Debug)]
pub struct AnyOf(pub &'static [Knob]);

impl fmt::Display for AnyOf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0.len();
        for (i, k) in self.0.iter().enumerate() {
            match i {
                0 => {}
                i if i + 1 == n => f.write_str(" or ")?,
                _ => f.write_str(", ")?,
            }
            write!(f, "{k}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::string::ToString;

    #[test]
    fn every_knob_is_listed_once_with_a_distinct_name() {
        for (i, a) in Knob::ALL.iter().enumerate() {
            assert_eq!(*a as usize, i, "ALL lists the knobs in declaration order");
            for b in &Knob::ALL[i + 1..] {
                assert_ne!(a, b);
                assert_ne!(a.name(), b.name());
            }
        }
        assert_eq!(Knob::MaxDeps.to_string(), "`max_deps`");
    }

    #[test]
    fn a_list_of_knobs_reads_as_a_sentence() {
        use Knob::*;
        assert_eq!(AnyOf(&[MaxArgs]).to_string(), "`max_args`");
        assert_eq!(
            AnyOf(&[MaxArgs, MaxTensors]).to_string(),
            "`max_args` or `max_tensors`"
        );
        assert_eq!(
            AnyOf(&[Rings, TaskWindow, MaxDeps]).to_string(),
            "`rings`, `task_window` or `max_deps`"
        );
    }
}
