//! What `pto-launch run` adds to a status the orchestration returned (a refusal it passed
//! on): the limit this run's flags set and the flag that changes it. The runtime's sentence
//! for the status says what was wrong; only the launcher knows which of its flags shaped the
//! machine.
#![forbid(unsafe_code)]

use pto_runtime_core::ffi::PtoStatus;

/// The line to print under the error of a run whose orchestration returned `code`, on a
/// machine of `clusters` clusters (`None`: not known here), if the run's flags bear on it.
pub fn hint(code: i32, clusters: Option<u32>) -> Option<String> {
    match PtoStatus::from_code(code)? {
        PtoStatus::PtoErrBadBlocks => Some(match clusters {
            Some(c) => format!(
                "this run has {c} clusters ({c} AIC and {} AIV cores): a task may have 1 to {} \
                 blocks if AIV, 1 to {c} if AIC or MIX, 1 if DUMMY; raise --clusters or submit \
                 fewer blocks",
                2 * c,
                2 * c
            ),
            None => "a task may have up to 2 blocks per cluster if AIV, 1 per cluster if AIC \
                     or MIX, 1 if DUMMY; raise --clusters or submit fewer blocks"
                .to_owned(),
        }),
        _ => None,
    }
}

/// `error` with [`hint`]'s line under it, if there is one.
pub fn with_hint(error: String, code: Option<i32>, clusters: Option<u32>) -> String {
    match code.and_then(|c| hint(c, clusters)) {
        Some(h) => format!("{error}\n  {h}"),
        None => error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn too_many_blocks_names_the_limits_and_the_flag() {
        let h = hint(PtoStatus::PtoErrBadBlocks as i32, Some(2)).unwrap();
        assert!(
            h.contains("1 to 4 blocks if AIV, 1 to 2 if AIC or MIX"),
            "{h}"
        );
        assert!(h.contains("--clusters"), "{h}");
        let h = hint(PtoStatus::PtoErrBadBlocks as i32, None).unwrap();
        assert!(h.contains("2 blocks per cluster if AIV"), "{h}");
    }

    #[test]
    fn other_statuses_and_own_codes_add_nothing() {
        assert_eq!(hint(PtoStatus::PtoErrHeapFull as i32, Some(2)), None);
        assert_eq!(hint(7, Some(2)), None);
        assert_eq!(with_hint("e".into(), Some(7), None), "e");
        assert_eq!(with_hint("e".into(), None, None), "e");
    }
}
