//! How a fatal error reads: what happened, where, and what to change.
#![forbid(unsafe_code)]

use core::fmt;

use super::{FatalCause, FatalError};
use crate::condition::Watch;
use crate::knob::Knob;

struct WatchName(Option<Watch>);

impl fmt::Display for WatchName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(w) => write!(f, "{w}"),
            None => write!(f, "unknown word"),
        }
    }
}

/// " (task on core)", " (task)", " (core)" or nothing.
struct Where<'a>(&'a FatalError);

impl fmt::Display for Where<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.0.task, self.0.core) {
            (Some(t), Some(c)) => write!(f, " ({t} on {c})"),
            (Some(t), None) => write!(f, " ({t})"),
            (None, Some(c)) => write!(f, " ({c})"),
            (None, None) => Ok(()),
        }
    }
}

impl fmt::Display for FatalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = Where(self);
        match self.cause {
            FatalCause::TaskTimeout { waited_us } => write!(
                f,
                "a task ran for {waited_us} µs without reporting FIN{at}: raise {} or fix the \
                 kernel",
                Knob::TaskTimeout
            ),
            FatalCause::CoreProtocol { seen, newest } => write!(
                f,
                "a core reported token {seen} but the newest token dispatched to it is \
                 {newest}{at}: the core's status word is corrupt or another runtime drives it"
            ),
            FatalCause::BadPredicate { addr, width } => write!(
                f,
                "the {width}-byte predicate at {addr:#x} could not be read at dispatch{at} \
                 (it was readable at submit): its memory went away"
            ),
            FatalCause::StrayCompletion { source, id } => write!(
                f,
                "a completion record names source {source} (id {id}), which this scheduler \
                 does not drive{at}: the queue is shared with another runtime, or its records \
                 are corrupt"
            ),
            FatalCause::CorruptSlot { class } => write!(
                f,
                "a task's slot holds worker class {class}, which no submit writes{at}: the \
                 runtime region was overwritten (a kernel or the host writing out of bounds?)"
            ),
            FatalCause::MissingResult { token, named } => write!(
                f,
                "a core reported token {token} finished without its result word (which names \
                 token {named}){at}: the core's executor does not follow the protocol"
            ),
            FatalCause::DeferredFull {
                capacity,
                waited_us,
            } => write!(
                f,
                "a finished task's deferred conditions waited {waited_us} µs for room in its \
                 scheduler's full deferred set ({capacity} conditions){at}, and the set did not \
                 drain in time: raise {}, or let fewer tasks wait at once",
                Knob::DeferredCapacity
            ),
            FatalCause::TransferFailed {
                watch,
                post,
                status,
            } => write!(
                f,
                "transfer {post} on the {watch} ended with status {status} ({}){at}: the task and \
                 every task depending on it were cancelled without running; the other tasks \
                 completed",
                crate::transfer_status::name(status)
            ),
            FatalCause::KernelFailed { code } => {
                write!(f, "a kernel reported error code {code}{at}")
            }
            FatalCause::ReadyQueueOverflow { class } => write!(
                f,
                "the ready queue of class {class} refused a task{at}: the queue is smaller than \
                 the task windows (a runtime bug; please report it)"
            ),
            FatalCause::Aborted { code } => write!(f, "the run was aborted with code {code}{at}"),
            FatalCause::NoProgress { idle_us, live } => write!(
                f,
                "no task finished for {idle_us} µs, with {live} live{at}: longer than a \
                 kernel may run ({}) and its conditions take ({}): nothing could finish them, \
                 and the stall class below says what they waited for (a runtime bug; please \
                 report it)",
                Knob::TaskTimeout,
                Knob::DeferredTimeout
            ),
            FatalCause::DeferredTimeout {
                watch,
                expected,
                last,
            } => write!(
                f,
                "a deferred task waited past {} for the {watch} to reach {expected} (last value \
                 read: {last}){at}: the transfer or notification never landed, so its consumers \
                 did not run",
                Knob::DeferredTimeout
            ),
            FatalCause::TooManyConditions { registered, limit } => write!(
                f,
                "a task registered {registered} deferred conditions and a task may have \
                 {limit}{at}: raise {} (at most {}) or split the task",
                Knob::MaxConditions,
                crate::MAX_CONDITIONS
            ),
            FatalCause::UnknownCondition { kind } => write!(
                f,
                "a deferred condition record has kind {kind}, which no platform writes{at}: the \
                 core's executor and the runtime disagree on the condition format"
            ),
            FatalCause::BadCondition { watch } => write!(
                f,
                "a deferred condition watches the {}, which the platform cannot read{at}: \
                 register aligned counters in device memory or a comm window, and engines \
                 that exist",
                WatchName(watch)
            ),
        }
    }
}
