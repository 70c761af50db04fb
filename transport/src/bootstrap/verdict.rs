//! Rank 0's answer to a caller whose connection came out of the accept: taken as its rank, or
//! why not. The caller's `join` waits for it, so a rank whose number another caller holds
//! learns so at once, with the holder's address, instead of at its first collective.
#![forbid(unsafe_code)]

use crate::wire::WireError;

/// What rank 0 tells a caller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Verdict {
    /// Taken as the rank it claimed.
    Welcome,
    /// Another caller, from `holder`, holds the rank already.
    Taken {
        /// The holder's address, as rank 0 saw it.
        holder: String,
    },
    /// Rank 0's job has only `ranks` ranks, or the caller claimed rank 0.
    NoSuchRank {
        /// Ranks in rank 0's job.
        ranks: u32,
    },
}

const WELCOME: u8 = 1;
const TAKEN: u8 = 2;
const NO_SUCH_RANK: u8 = 3;

/// Longest holder address carried (an IPv6 address with scope and port fits).
const MAX_HOLDER: usize = 128;

impl Verdict {
    /// The verdict as a message (never empty).
    pub(super) fn encode(&self) -> Vec<u8> {
        match self {
            Verdict::Welcome => vec![WELCOME],
            Verdict::Taken { holder } => {
                let h = holder.as_bytes();
                let mut b = vec![TAKEN];
                b.extend_from_slice(&h[..h.len().min(MAX_HOLDER)]);
                b
            }
            Verdict::NoSuchRank { ranks } => {
                let mut b = vec![NO_SUCH_RANK];
                b.extend_from_slice(&ranks.to_le_bytes());
                b
            }
        }
    }

    /// A verdict from a message, checked.
    pub(super) fn decode(b: &[u8]) -> Result<Self, WireError> {
        match b.split_first() {
            Some((&WELCOME, [])) => Ok(Verdict::Welcome),
            Some((&TAKEN, h)) if h.len() <= MAX_HOLDER => Ok(Verdict::Taken {
                holder: String::from_utf8_lossy(h).into_owned(),
            }),
            Some((&NO_SUCH_RANK, &[a, b, c, d])) => Ok(Verdict::NoSuchRank {
                ranks: u32::from_le_bytes([a, b, c, d]),
            }),
            _ => Err(WireError::Invalid(
                "rank 0's verdict on this rank is malformed",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_round_trip_and_garbage_is_refused() {
        for v in [
            Verdict::Welcome,
            Verdict::Taken {
                holder: "127.0.0.1:4000".into(),
            },
            Verdict::NoSuchRank { ranks: 9 },
        ] {
            assert_eq!(Verdict::decode(&v.encode()), Ok(v));
        }
        for bad in [&[][..], &[0], &[WELCOME, 0], &[NO_SUCH_RANK, 1, 2], &[9, 9]] {
            assert!(Verdict::decode(bad).is_err(), "{bad:?}");
        }
    }
}
