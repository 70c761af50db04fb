//! The job secret: 128 random bits every rank of a job holds and no one else, so that a
//! caller who merely knows the run id cannot take a rank. The hello proves knowledge of it
//! by a keyed MAC (BLAKE3 in keyed mode) over both sides' fresh nonces, the run id, both
//! ranks and the wire version; the secret itself never crosses the wire, and proofs are
//! compared in constant time.
//!
//! Where it comes from: `PTO_JOB_SECRET` (32 hex digits) in the environment, or a file only
//! its owner can read (`--secret-file`); never the command line, which every local user can
//! read in `/proc/PID/cmdline`.
#![forbid(unsafe_code)]

use std::fmt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Once;

use super::wire::VERSION;

/// The environment variable that carries the job secret, as 32 hex digits.
pub const SECRET_ENV: &str = "PTO_JOB_SECRET";
/// Set to `1` (or `true`, `yes`) to refuse to run without a job secret.
pub const REQUIRE_ENV: &str = "PTO_REQUIRE_SECRET";
/// Bytes of a job secret.
pub const SECRET_BYTES: usize = 16;
/// Bytes of a handshake nonce.
pub const NONCE_BYTES: usize = 16;
/// Bytes of a proof (a keyed MAC).
pub const PROOF_BYTES: usize = 32;

/// A handshake nonce.
pub type Nonce = [u8; NONCE_BYTES];
/// A proof of the job secret.
pub type Proof = [u8; PROOF_BYTES];

/// Why a job secret could not be had.
#[derive(Debug, thiserror::Error)]
pub enum SecretError {
    /// Not 32 hex digits.
    #[error("{what}: a job secret is 32 hex digits (128 bits), e.g. from `openssl rand -hex 16`")]
    Malformed {
        /// Where the bad value came from.
        what: String,
    },
    /// The file lets others than its owner read it.
    #[error(
        "{}: mode {mode:03o} lets others read the job secret; `chmod 600` it",
        path.display()
    )]
    Exposed {
        /// The file.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// The file could not be read.
    #[error("reading the job secret from {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The system's random source failed.
    #[error("drawing random bytes for the job secret: {0}")]
    Random(#[source] getrandom::Error),
    /// No secret, and one is required.
    #[error(
        "no job secret, and --require-secret or {REQUIRE_ENV} asks for one: export \
         {SECRET_ENV} (32 hex digits) to every rank, or pass --secret-file"
    )]
    Required,
}

/// A job secret, with the MAC key derived from it. Its `Debug` shows nothing of it.
#[derive(Clone, PartialEq, Eq)]
pub struct JobSecret {
    raw: [u8; SECRET_BYTES],
    key: [u8; 32],
}

impl fmt::Debug for JobSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("JobSecret(..)")
    }
}

/// Who a proof speaks for: the two sides' proofs differ, so one cannot be reflected as the
/// other.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The side that dialed.
    Caller,
    /// The side that accepted.
    Listener,
}

/// What a proof covers besides the secret.
#[derive(Clone, Copy, Debug)]
pub struct Transcript<'a> {
    /// The caller's nonce.
    pub caller_nonce: &'a Nonce,
    /// The listener's nonce.
    pub listener_nonce: &'a Nonce,
    /// The job's run id.
    pub run_id: &'a str,
    /// The caller's rank.
    pub caller_rank: u32,
    /// The listener's rank.
    pub listener_rank: u32,
}

impl JobSecret {
    /// A secret from 16 bytes.
    pub fn from_bytes(raw: [u8; SECRET_BYTES]) -> Self {
        let key = blake3::derive_key("pto-host 2026 job secret: hello proof", &raw);
        JobSecret { raw, key }
    }

    /// 128 fresh random bits.
    pub fn generate() -> Result<Self, SecretError> {
        let mut raw = [0u8; SECRET_BYTES];
        getrandom::fill(&mut raw).map_err(SecretError::Random)?;
        Ok(Self::from_bytes(raw))
    }

    /// A secret from 32 hex digits (surrounding white space ignored); `what` names the
    /// source in the error.
    pub fn from_hex(s: &str, what: &str) -> Result<Self, SecretError> {
        let s = s.trim().as_bytes();
        let bad = || SecretError::Malformed { what: what.into() };
        if s.len() != 2 * SECRET_BYTES {
            return Err(bad());
        }
        let digit = |c: u8| (c as char).to_digit(16).map(|d| d as u8).ok_or_else(bad);
        let mut raw = [0u8; SECRET_BYTES];
        for (i, b) in raw.iter_mut().enumerate() {
            *b = digit(s[2 * i])? << 4 | digit(s[2 * i + 1])?;
        }
        Ok(Self::from_bytes(raw))
    }

    /// The secret as 32 hex digits, for a child's environment.
    pub fn to_hex(&self) -> String {
        self.raw.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// The secret in `path`, refused if the file's mode lets group or others read it.
    pub fn from_file(path: &Path) -> Result<Self, SecretError> {
        let io = |source| SecretError::Io {
            path: path.into(),
            source,
        };
        let meta = std::fs::metadata(path).map_err(io)?;
        let mode = meta.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            return Err(SecretError::Exposed {
                path: path.into(),
                mode,
            });
        }
        let text = std::fs::read_to_string(path).map_err(io)?;
        Self::from_hex(&text, &path.display().to_string())
    }

    /// The secret in [`SECRET_ENV`], if set.
    pub fn from_env() -> Result<Option<Self>, SecretError> {
        match std::env::var(SECRET_ENV) {
            Ok(v) => Self::from_hex(&v, SECRET_ENV).map(Some),
            Err(std::env::VarError::NotPresent) => Ok(None),
            Err(std::env::VarError::NotUnicode(_)) => Err(SecretError::Malformed {
                what: SECRET_ENV.into(),
            }),
        }
    }

    /// `role`'s proof of this secret over `t`.
    pub fn prove(&self, role: Role, t: &Transcript<'_>) -> Proof {
        let mut h = blake3::Hasher::new_keyed(&self.key);
        h.update(match role {
            Role::Caller => b"caller  ",
            Role::Listener => b"listener",
        });
        h.update(t.caller_nonce);
        h.update(t.listener_nonce);
        h.update(&[t.run_id.len().min(255) as u8]);
        h.update(t.run_id.as_bytes());
        h.update(&t.caller_rank.to_le_bytes());
        h.update(&t.listener_rank.to_le_bytes());
        h.update(&VERSION.to_le_bytes());
        *h.finalize().as_bytes()
    }

    /// Whether `proof` is `role`'s proof of this secret over `t`, compared in constant time.
    pub fn check(&self, role: Role, t: &Transcript<'_>, proof: &Proof) -> bool {
        // blake3::Hash compares in constant time.
        blake3::Hash::from_bytes(self.prove(role, t)) == blake3::Hash::from_bytes(*proof)
    }
}

/// A fresh random nonce.
pub fn fresh_nonce() -> Result<Nonce, SecretError> {
    let mut n = [0u8; NONCE_BYTES];
    getrandom::fill(&mut n).map_err(SecretError::Random)?;
    Ok(n)
}

/// Whether [`REQUIRE_ENV`] asks for a secret.
pub fn required_by_env() -> bool {
    std::env::var(REQUIRE_ENV)
        .is_ok_and(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "1" | "true" | "yes"))
}

/// The job secret a rank runs with: from `file` if given, else from [`SECRET_ENV`]. None
/// at all is an error when `require` (or [`REQUIRE_ENV`]) asks for one, and otherwise
/// warns, once per process, that the job is unauthenticated.
pub fn resolve(file: Option<&Path>, require: bool) -> Result<Option<JobSecret>, SecretError> {
    let secret = match file {
        Some(p) => Some(JobSecret::from_file(p)?),
        None => JobSecret::from_env()?,
    };
    if secret.is_none() {
        if require || required_by_env() {
            return Err(SecretError::Required);
        }
        static WARNED: Once = Once::new();
        WARNED.call_once(|| {
            log::warn!(
                "no job secret ({SECRET_ENV} or --secret-file): this job's bootstrap is \
                 unauthenticated, and any local user who reaches rank 0's port can take a rank"
            )
        });
    }
    Ok(secret)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_round_trip_through_hex_and_bad_ones_are_refused() {
        let s = JobSecret::generate().unwrap();
        assert_eq!(JobSecret::from_hex(&s.to_hex(), "x").unwrap(), s);
        assert_eq!(format!("{s:?}"), "JobSecret(..)");
        for bad in ["", "00", &"g".repeat(32), &"0".repeat(33)] {
            assert!(JobSecret::from_hex(bad, "x").is_err(), "{bad}");
        }
        assert_ne!(JobSecret::generate().unwrap(), s, "fresh bits each time");
    }

    #[test]
    fn a_proof_binds_the_role_both_nonces_the_run_and_the_ranks() {
        let s = JobSecret::from_bytes([7; 16]);
        let (a, b) = ([1u8; 16], [2u8; 16]);
        let t = Transcript {
            caller_nonce: &a,
            listener_nonce: &b,
            run_id: "job",
            caller_rank: 3,
            listener_rank: 0,
        };
        let p = s.prove(Role::Caller, &t);
        assert!(s.check(Role::Caller, &t, &p));
        assert!(!s.check(Role::Listener, &t, &p));
        assert!(!JobSecret::from_bytes([8; 16]).check(Role::Caller, &t, &p));
        for other in [
            Transcript {
                listener_nonce: &a,
                ..t
            },
            Transcript {
                caller_nonce: &b,
                ..t
            },
            Transcript { run_id: "jab", ..t },
            Transcript {
                caller_rank: 4,
                ..t
            },
        ] {
            assert!(!s.check(Role::Caller, &other, &p));
        }
    }

    #[test]
    fn a_secret_file_others_can_read_is_refused() {
        let dir = std::env::temp_dir().join(format!("pto-secret-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("secret");
        let s = JobSecret::generate().unwrap();
        std::fs::write(&p, s.to_hex() + "\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
        let e = JobSecret::from_file(&p).unwrap_err();
        assert!(matches!(e, SecretError::Exposed { mode: 0o640, .. }), "{e}");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(JobSecret::from_file(&p).unwrap(), s);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
