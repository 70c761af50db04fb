//! What the TCP transport puts on the wire: the listen handle a rank publishes, the hello
//! that opens every connection, and the header of length-prefixed frames with sequence
//! numbers (reassembled by the TCP transport's inbox). Decoding never trusts the peer:
//! every length is bounded and every field checked.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use super::secret::{NONCE_BYTES, Nonce, PROOF_BYTES, Proof};

/// First bytes of every handle and hello: "PTOT".
pub const MAGIC: u32 = 0x5054_4f54;
/// Wire version; a peer with another one is refused. Version 2 added the caller's
/// [`CONFIRM`] after the listener's hello, and the hello's flags, nonce and proof.
pub const VERSION: u16 = 2;
/// What a caller sends once it has checked the listener's hello: it is still there and takes
/// the connection. A listener hands out no connection before this arrives, so a caller that
/// gave up while it waited in the listen backlog is never taken for a rank. With a job
/// secret, the caller's proof of it ([`PROOF_BYTES`]) follows.
pub const CONFIRM: [u8; 4] = *b"PTOC";
/// Bytes of a serialised listen handle, the most a caller must reserve.
pub const HANDLE_BYTES: usize = 64;
/// Longest run id a hello carries.
pub const MAX_RUN_ID: usize = 64;
/// Largest frame payload.
pub const MAX_FRAME: u32 = 64 << 20;
/// Bytes of a frame header: payload length (u32) and sequence number (u64), little endian.
pub const FRAME_HEADER: usize = 12;

/// Why bytes from a peer were refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// Not ours: another protocol, or garbage.
    #[error("bad magic {0:#010x}: the peer does not speak this transport")]
    Magic(u32),
    /// Ours, another version.
    #[error(
        "the peer speaks wire version {theirs}, this rank {ours}: run the same pto-launch on every host"
    )]
    Version {
        /// The peer's version.
        theirs: u16,
        /// Ours.
        ours: u16,
    },
    /// A peer of another job.
    #[error(
        "the peer belongs to job {theirs:?}, this rank to {ours:?}: two jobs share a rendezvous address"
    )]
    WrongJob {
        /// The peer's run id.
        theirs: String,
        /// Ours.
        ours: String,
    },
    /// Too few bytes for what the header announces.
    #[error("{0} truncated")]
    Truncated(&'static str),
    /// A field out of range.
    #[error("{0}")]
    Invalid(&'static str),
    /// A frame longer than [`MAX_FRAME`].
    #[error("a frame of {0} bytes exceeds the {MAX_FRAME}-byte limit")]
    FrameTooLong(u32),
    /// The job secret check failed; the sentence says how.
    #[error("{0}")]
    Auth(&'static str),
    /// A frame out of sequence: lost, duplicated or reordered.
    #[error("frame {got} arrived where {expected} was due")]
    OutOfSequence {
        /// The sequence number received.
        got: u64,
        /// The one due.
        expected: u64,
    },
}

/// Where a rank listens, as it publishes it to its peers: immutable bytes of bounded size
/// (`HANDLE_BYTES`), separate from any connection progress.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListenHandle {
    /// The listening rank.
    pub rank: u32,
    /// Its address.
    pub addr: SocketAddr,
}

impl ListenHandle {
    /// The handle as wire bytes: magic, version, rank, address family, port, address.
    pub fn encode(&self) -> [u8; HANDLE_BYTES] {
        let mut b = [0u8; HANDLE_BYTES];
        b[0..4].copy_from_slice(&MAGIC.to_le_bytes());
        b[4..6].copy_from_slice(&VERSION.to_le_bytes());
        b[6..10].copy_from_slice(&self.rank.to_le_bytes());
        b[12..14].copy_from_slice(&self.addr.port().to_le_bytes());
        match self.addr.ip() {
            IpAddr::V4(ip) => {
                b[10] = 4;
                b[16..20].copy_from_slice(&ip.octets());
            }
            IpAddr::V6(ip) => {
                b[10] = 6;
                b[16..32].copy_from_slice(&ip.octets());
            }
        }
        b
    }

    /// A handle from wire bytes, checked.
    pub fn decode(b: &[u8]) -> Result<Self, WireError> {
        if b.len() < HANDLE_BYTES {
            return Err(WireError::Truncated("listen handle"));
        }
        check_magic_version(b)?;
        let rank = u32::from_le_bytes(b[6..10].try_into().unwrap_or_default());
        let port = u16::from_le_bytes([b[12], b[13]]);
        let ip = match b[10] {
            4 => IpAddr::V4(Ipv4Addr::new(b[16], b[17], b[18], b[19])),
            6 => {
                let mut o = [0u8; 16];
                o.copy_from_slice(&b[16..32]);
                IpAddr::V6(Ipv6Addr::from(o))
            }
            _ => return Err(WireError::Invalid("listen handle: unknown address family")),
        };
        Ok(ListenHandle {
            rank,
            addr: SocketAddr::new(ip, port),
        })
    }
}

fn check_magic_version(b: &[u8]) -> Result<(), WireError> {
    let magic = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    if magic != MAGIC {
        return Err(WireError::Magic(magic));
    }
    let version = u16::from_le_bytes([b[4], b[5]]);
    if version != VERSION {
        return Err(WireError::Version {
            theirs: version,
            ours: VERSION,
        });
    }
    Ok(())
}

/// The hello carries a nonce ([`Hello::nonce`]).
const HAS_NONCE: u8 = 1;
/// The hello carries a proof ([`Hello::proof`]).
const HAS_PROOF: u8 = 2;

/// The first message on every connection, each way: who is calling, for which job, and,
/// with a job secret, a fresh nonce (and, from the listener, its proof of the secret).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hello {
    /// The caller's rank.
    pub rank: u32,
    /// Its job's run id (at most [`MAX_RUN_ID`] bytes).
    pub run_id: String,
    /// A fresh nonce: present when this side holds a job secret.
    pub nonce: Option<Nonce>,
    /// The listener's proof of the job secret over both nonces (see
    /// [`super::secret::JobSecret::prove`]).
    pub proof: Option<Proof>,
}

impl Hello {
    /// Bytes of the fixed part: magic, version, rank, flags, run id length.
    pub const FIXED: usize = 4 + 2 + 4 + 1 + 1;

    /// A hello without a nonce or proof (a job without a secret).
    pub fn plain(rank: u32, run_id: impl Into<String>) -> Self {
        Hello {
            rank,
            run_id: run_id.into(),
            nonce: None,
            proof: None,
        }
    }

    /// The hello as wire bytes.
    pub fn encode(&self) -> Result<Vec<u8>, WireError> {
        let id = self.run_id.as_bytes();
        if id.len() > MAX_RUN_ID {
            return Err(WireError::Invalid("run id longer than 64 bytes"));
        }
        let flags = if self.nonce.is_some() { HAS_NONCE } else { 0 }
            | if self.proof.is_some() { HAS_PROOF } else { 0 };
        let mut b = Vec::with_capacity(Self::FIXED + id.len() + NONCE_BYTES + PROOF_BYTES);
        b.extend_from_slice(&MAGIC.to_le_bytes());
        b.extend_from_slice(&VERSION.to_le_bytes());
        b.extend_from_slice(&self.rank.to_le_bytes());
        b.push(flags);
        b.push(id.len() as u8);
        b.extend_from_slice(id);
        if let Some(n) = &self.nonce {
            b.extend_from_slice(n);
        }
        if let Some(p) = &self.proof {
            b.extend_from_slice(p);
        }
        Ok(b)
    }

    /// Bytes a hello needs, once its fixed part is in `b`; `None` until then.
    pub fn wanted(b: &[u8]) -> Option<usize> {
        (b.len() >= Self::FIXED).then(|| {
            let flags = b[Self::FIXED - 2];
            Self::FIXED
                + b[Self::FIXED - 1] as usize
                + if flags & HAS_NONCE != 0 {
                    NONCE_BYTES
                } else {
                    0
                }
                + if flags & HAS_PROOF != 0 {
                    PROOF_BYTES
                } else {
                    0
                }
        })
    }

    /// A hello from wire bytes, checked against this rank's job: another magic, version or
    /// run id is refused with an error that says which.
    pub fn decode(b: &[u8], our_run_id: &str) -> Result<Self, WireError> {
        // Another protocol shows in the first four bytes: say so, however short.
        if let Some(m) = b.get(..4) {
            let magic = u32::from_le_bytes([m[0], m[1], m[2], m[3]]);
            if magic != MAGIC {
                return Err(WireError::Magic(magic));
            }
        }
        let need = Self::wanted(b).ok_or(WireError::Truncated("hello"))?;
        check_magic_version(b)?;
        let flags = b[Self::FIXED - 2];
        if flags & !(HAS_NONCE | HAS_PROOF) != 0 {
            return Err(WireError::Invalid("hello: unknown flags"));
        }
        let id_len = b[Self::FIXED - 1] as usize;
        if id_len > MAX_RUN_ID {
            return Err(WireError::Invalid("hello: run id longer than 64 bytes"));
        }
        if b.len() < need {
            return Err(WireError::Truncated("hello"));
        }
        let rank = u32::from_le_bytes([b[6], b[7], b[8], b[9]]);
        let mut at = Self::FIXED + id_len;
        let run_id = std::str::from_utf8(&b[Self::FIXED..at])
            .map_err(|_| WireError::Invalid("hello: run id is not UTF-8"))?
            .to_string();
        if run_id != our_run_id {
            return Err(WireError::WrongJob {
                theirs: run_id,
                ours: our_run_id.to_string(),
            });
        }
        let mut take = |present: bool, n: usize| {
            let part = present.then(|| &b[at..at + n]);
            at += if present { n } else { 0 };
            part
        };
        let nonce = take(flags & HAS_NONCE != 0, NONCE_BYTES).map(|p| {
            let mut n = [0u8; NONCE_BYTES];
            n.copy_from_slice(p);
            n
        });
        let proof = take(flags & HAS_PROOF != 0, PROOF_BYTES).map(|p| {
            let mut n = [0u8; PROOF_BYTES];
            n.copy_from_slice(p);
            n
        });
        Ok(Hello {
            rank,
            run_id,
            nonce,
            proof,
        })
    }
}

/// A frame's header and payload as wire bytes.
pub fn encode_frame(seq: u64, payload: &[u8]) -> Result<Vec<u8>, WireError> {
    let len = u32::try_from(payload.len())
        .ok()
        .filter(|&n| n <= MAX_FRAME)
        .ok_or(WireError::FrameTooLong(
            payload.len().min(u32::MAX as usize) as u32,
        ))?;
    let mut b = Vec::with_capacity(FRAME_HEADER + payload.len());
    b.extend_from_slice(&len.to_le_bytes());
    b.extend_from_slice(&seq.to_le_bytes());
    b.extend_from_slice(payload);
    Ok(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_round_trip_for_both_address_families_and_refuse_strangers() {
        for addr in ["127.0.0.1:29500", "[::1]:8080", "[fe80::1]:1"] {
            let h = ListenHandle {
                rank: 7,
                addr: addr.parse().unwrap(),
            };
            assert_eq!(ListenHandle::decode(&h.encode()), Ok(h));
        }
        let mut b = ListenHandle {
            rank: 0,
            addr: "10.0.0.2:1".parse().unwrap(),
        }
        .encode();
        assert_eq!(
            ListenHandle::decode(&b[..10]),
            Err(WireError::Truncated("listen handle"))
        );
        b[4] = 9; // version 9
        assert!(matches!(
            ListenHandle::decode(&b),
            Err(WireError::Version { theirs: 9, .. })
        ));
        b[0] = 0;
        assert!(matches!(ListenHandle::decode(&b), Err(WireError::Magic(_))));
    }

    #[test]
    fn a_hello_from_another_job_or_version_is_refused_by_name() {
        let h = Hello::plain(3, "job-a");
        let b = h.encode().unwrap();
        let with = Hello {
            nonce: Some([5; NONCE_BYTES]),
            proof: Some([6; PROOF_BYTES]),
            ..h.clone()
        };
        let wb = with.encode().unwrap();
        assert_eq!(Hello::wanted(&wb), Some(wb.len()));
        assert_eq!(Hello::decode(&wb, "job-a"), Ok(with));
        assert_eq!(
            Hello::decode(&wb[..wb.len() - 1], "job-a"),
            Err(WireError::Truncated("hello"))
        );
        assert_eq!(Hello::wanted(&b[..4]), None);
        assert_eq!(Hello::wanted(&b), Some(b.len()));
        assert_eq!(Hello::decode(&b, "job-a"), Ok(h));
        let e = Hello::decode(&b, "job-b").unwrap_err();
        assert!(e.to_string().contains("\"job-a\"") && e.to_string().contains("\"job-b\""));
        let mut old = b.clone();
        old[4] = 0;
        assert!(e.to_string().contains("rendezvous"));
        assert!(
            Hello::decode(&old, "job-a")
                .unwrap_err()
                .to_string()
                .contains("version 0")
        );
        assert_eq!(
            Hello::decode(&b[..b.len() - 1], "job-a"),
            Err(WireError::Truncated("hello"))
        );
        let long = Hello::plain(0, "x".repeat(65));
        assert!(long.encode().is_err());
    }
}
