//! The one place a run id becomes the name of a job's shared-memory object. The launcher
//! (which poisons, watches and removes the object) and every rank (which creates or opens it)
//! go through here, so they always mean the same object.

use std::ffi::CString;

use super::error::CommError;

/// Longest run id a user's one is cut down to: room is left for what a rendezvous appends
/// (`-<pid>-<ms>`) within [`MAX_RUN_ID`].
pub const USER_RUN_ID: usize = 100;
/// Longest run id the communicator takes.
pub const MAX_RUN_ID: usize = 200;

/// Turns any string a user (or a launcher's environment) gives into a valid run id: every
/// character other than an ASCII letter, digit, `-` or `_` becomes `_`, and one longer than
/// [`USER_RUN_ID`] characters keeps a prefix and a hash of the whole, so two long ids that
/// differ only at the end still differ. An empty one is an error.
pub fn sanitize_run_id(user: &str) -> Result<String, CommError> {
    if user.is_empty() {
        return Err(CommError::BadRunId(user.to_string()));
    }
    let clean: String = user
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if clean.len() <= USER_RUN_ID {
        return Ok(clean);
    }
    // FNV-1a over the user's bytes (not the cleaned ones: `a/b` and `a.b` stay apart).
    let hash = user.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    });
    // The cleaned string is ASCII, so any byte index is a character boundary.
    Ok(format!("{}-{hash:016x}", &clean[..USER_RUN_ID - 17]))
}

/// The POSIX name (`/pto-<run id>`) of the object of the job `run_id`, as text and as a C
/// string. `run_id` must be a valid run id (what [`sanitize_run_id`] returns, or a name a
/// rendezvous made of one): 1 to [`MAX_RUN_ID`] letters, digits, `-` or `_`.
pub fn object_name(run_id: &str) -> Result<(String, CString), CommError> {
    if run_id.is_empty()
        || run_id.len() > MAX_RUN_ID
        || !run_id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return Err(CommError::BadRunId(run_id.to_string()));
    }
    let label = format!("/pto-{run_id}");
    let name = CString::new(label.clone()).map_err(|_| CommError::BadRunId(run_id.into()))?;
    Ok((label, name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_user_string_becomes_a_valid_run_id() {
        for user in [
            "plain-id_1",
            "a/b",
            "a.b",
            "10.0.0.1:29500",
            "rdzv-127.0.0.1:0",
            "ünïcödé",
            &"x".repeat(101),
            &"y/".repeat(300),
        ] {
            let id = sanitize_run_id(user).unwrap();
            assert!(id.len() <= USER_RUN_ID, "{id}");
            assert!(object_name(&id).is_ok(), "{user:?} -> {id:?}");
        }
        assert_eq!(sanitize_run_id("plain-id_1").unwrap(), "plain-id_1");
        assert_eq!(sanitize_run_id("a/b").unwrap(), "a_b");
        assert_eq!(sanitize_run_id("10.0.0.1:29500").unwrap(), "10_0_0_1_29500");
        let (a, b) = ("x".repeat(150) + "a", "x".repeat(150) + "b");
        assert_ne!(sanitize_run_id(&a).unwrap(), sanitize_run_id(&b).unwrap());
        assert_eq!(
            sanitize_run_id(&a).unwrap(),
            sanitize_run_id(&a).unwrap(),
            "every rank derives the same"
        );
        assert!(sanitize_run_id("").is_err());
    }

    #[test]
    fn object_names_refuse_what_is_not_a_run_id() {
        assert_eq!(object_name("job-1").unwrap().0, "/pto-job-1");
        for bad in ["", "a/b", "a.b", "a\0b", &"z".repeat(MAX_RUN_ID + 1)] {
            assert!(
                matches!(object_name(bad), Err(CommError::BadRunId(_))),
                "{bad:?}"
            );
        }
    }
}
