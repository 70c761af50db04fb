//! Why a job was given up, as the sentence that names its culprit ("rank 2 died").
#![forbid(unsafe_code)]

use pto_runtime_core::PoisonReason;

/// How a rank says why it stopped, naming the culprit: the words after "rank N".
pub fn poison_reason(reason: PoisonReason) -> &'static str {
    match reason {
        PoisonReason::Died => "died",
        PoisonReason::TimedOut => "timed out",
        PoisonReason::Aborted => "aborted",
        PoisonReason::Unresponsive => "stopped responding (hung or stopped: no heartbeat)",
        PoisonReason::NeverJoined => {
            "never joined the job (was it started with the same run id? or did it die first?)"
        }
    }
}
