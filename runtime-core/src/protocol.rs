//! The words a scheduler and its cores exchange, encoded once for every platform.
//!
//! Per core, the scheduler writes a payload into the slot its token's parity selects and rings
//! the doorbell with the token. The core answers in two places:
//! - its **result word** for that slot ([`ResultWord`]): the token and its outcome, done or
//!   failed with a code, written *before* any status report about the token or a later one;
//! - its **status word** ([`StatusWord`]), the chip's `COND` register: a token and a phase,
//!   ACK (took it) or FIN (finished it), and nothing else.
//!
//! A later report overwrites the status word, never a result: when the status names the
//! pending token, the scheduler retires the running one by reading that token's result word,
//! so a failure followed at once by the next token's FIN is still seen. A result word that does
//! not name the token retired is a protocol error, never taken for success.
//!
//! Deferred conditions travel as [`RawCondition`] records; an unknown kind is an error.
//! Platforms only move these words; the scheduler alone decodes them.
#![forbid(unsafe_code)]

use crate::condition::{Condition, Watch};
use crate::ids::Token;

/// A core's status word (the chip's 32-bit `COND` register): the token in bits 0..31, FIN in
/// bit 31 (clear: ACK). Zero means nothing was ever reported (token 0 is never issued).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct StatusWord(u32);

impl StatusWord {
    /// Bit 31: the core finished the token (clear: it took it and runs it).
    ///
    /// cbindgen:ignore
    pub const FIN: u32 = 1 << 31;
    /// Nothing reported since the core's registers were reset.
    pub const NONE: StatusWord = StatusWord(0);

    /// The core took `token` and runs it.
    #[inline]
    pub const fn ack(token: Token) -> Self {
        StatusWord(token.bits())
    }
    /// The core finished `token`; its result word was written before this report.
    #[inline]
    pub const fn fin(token: Token) -> Self {
        StatusWord(token.bits() | Self::FIN)
    }
    /// The word as the register holds it.
    #[inline]
    pub const fn bits(self) -> u32 {
        self.0
    }
    /// A word read from the register.
    #[inline]
    pub const fn from_bits(bits: u32) -> Self {
        StatusWord(bits)
    }
    /// The token the report is about.
    #[inline]
    pub const fn token(self) -> Token {
        Token::new(self.0)
    }
    /// Whether the report is a FIN (else an ACK, or nothing at all for token 0).
    #[inline]
    pub const fn is_fin(self) -> bool {
        self.0 & Self::FIN != 0
    }
}

/// What a token's kernel came to, as its result word says.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Outcome {
    /// The kernel returned normally (its deferred conditions, if any, are in its slab).
    Done,
    /// The kernel failed with this platform error code.
    Failed(u32),
}

/// The result of the token in one payload slot: the token in bits 0..31, bit 31 set if the
/// kernel failed, its error code in bits 32..64. The core writes it before it reports the
/// token's FIN (or anything later), so it is there for every token the scheduler retires.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct ResultWord(u64);

impl ResultWord {
    const FAILED: u64 = 1 << 31;

    /// `token` finished normally.
    #[inline]
    pub const fn done(token: Token) -> Self {
        ResultWord(token.bits() as u64)
    }
    /// `token`'s kernel failed with `code`.
    #[inline]
    pub const fn failed(token: Token, code: u32) -> Self {
        ResultWord(token.bits() as u64 | Self::FAILED | (code as u64) << 32)
    }
    /// The word as memory holds it.
    #[inline]
    pub const fn bits(self) -> u64 {
        self.0
    }
    /// A word read from memory.
    #[inline]
    pub const fn from_bits(bits: u64) -> Self {
        ResultWord(bits)
    }
    /// The token this result is for.
    #[inline]
    pub const fn token(self) -> Token {
        Token::new(self.0 as u32)
    }
    /// The outcome of `token`, or `None` if this word is about another token (the core
    /// reported past `token` without leaving its result).
    #[inline]
    pub const fn outcome(self, token: Token) -> Option<Outcome> {
        if self.token().bits() != token.bits() {
            None
        } else if self.0 & Self::FAILED != 0 {
            Some(Outcome::Failed((self.0 >> 32) as u32))
        } else {
            Some(Outcome::Done)
        }
    }
}

/// A deferred condition as a core writes it (`repr(C)`, 24 bytes): the watch kind, the
/// counter's device address or the engine's index, and the value it must reach.
#[repr(C)]
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct RawCondition {
    /// [`RawCondition::COUNTER32`], [`RawCondition::COUNTER64`], [`RawCondition::ENGINE`] or
    /// [`RawCondition::QUEUE`].
    pub kind: u32,
    /// Zero.
    pub reserved: u32,
    /// The counter's device address, or the engine's index.
    pub word: u64,
    /// The value the word must reach.
    pub expected: u64,
}

impl RawCondition {
    /// `*(u32 *)word >= expected`.
    pub const COUNTER32: u32 = 1;
    /// `*(u64 *)word >= expected`.
    pub const COUNTER64: u32 = 2;
    /// The completed post-id watermark of engine `word` reached `expected`.
    pub const ENGINE: u32 = 3;
    /// The entry of post `expected` arrived on engine `word`'s completion queue.
    pub const QUEUE: u32 = 4;

    /// The record of `c`.
    pub const fn encode(c: Condition) -> Self {
        let (kind, word) = match c.watch {
            Watch::Counter32(a) => (Self::COUNTER32, a),
            Watch::Counter64(a) => (Self::COUNTER64, a),
            Watch::Engine(e) => (Self::ENGINE, e as u64),
            Watch::Queue(e) => (Self::QUEUE, e as u64),
        };
        RawCondition {
            kind,
            reserved: 0,
            word,
            expected: c.expected,
        }
    }

    /// The condition this record describes, or `Err(kind)` for a record no platform writes
    /// (an unknown kind, or an engine index beyond 32 bits).
    pub const fn decode(self) -> Result<Condition, u32> {
        match self.kind {
            // A 32-bit counter's expected value above u32::MAX could never hold: kept as
            // given, so the deadline reports it rather than a silent truncation.
            Self::COUNTER32 => Ok(Condition {
                watch: Watch::Counter32(self.word),
                expected: self.expected,
            }),
            Self::COUNTER64 => Ok(Condition::counter64(self.word, self.expected)),
            Self::ENGINE if self.word <= u32::MAX as u64 => {
                Ok(Condition::engine(self.word as u32, self.expected))
            }
            Self::QUEUE if self.word <= u32::MAX as u64 => {
                Ok(Condition::entry(self.word as u32, self.expected))
            }
            kind => Err(kind),
        }
    }
}

/// A watch as the kind and word of its wire record, and back: how error records keep it.
impl Watch {
    /// The kind and word of its [`RawCondition`] record.
    pub(crate) fn encode(self) -> (u8, u64) {
        let raw = RawCondition::encode(Condition {
            watch: self,
            expected: 0,
        });
        (raw.kind as u8, raw.word)
    }

    /// The inverse of [`Watch::encode`].
    pub(crate) fn decode(kind: u8, value: u64) -> Option<Self> {
        let raw = RawCondition {
            kind: kind as u32,
            word: value,
            ..RawCondition::default()
        };
        raw.decode().ok().map(|c| c.watch)
    }
}

impl From<Condition> for RawCondition {
    fn from(c: Condition) -> Self {
        Self::encode(c)
    }
}

const _: () = {
    assert!(core::mem::size_of::<RawCondition>() == 24);
    assert!(core::mem::offset_of!(RawCondition, word) == 8);
    assert!(core::mem::offset_of!(RawCondition, expected) == 16);
};

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn status_words_carry_a_token_and_a_phase_only() {
        let t = Token::new(0x1234_5678);
        assert_eq!(StatusWord::fin(t).bits(), 0x9234_5678);
        assert_eq!(StatusWord::ack(t).bits(), 0x1234_5678);
        assert!(StatusWord::fin(t).is_fin() && !StatusWord::ack(t).is_fin());
        assert_eq!(StatusWord::from_bits(0x9234_5678).token(), t);
        assert_eq!(StatusWord::NONE.token(), Token::new(0));
    }

    #[test]
    fn a_result_names_its_token_and_outcome() {
        let t = Token::new(7);
        assert_eq!(ResultWord::done(t).outcome(t), Some(Outcome::Done));
        let f = ResultWord::failed(t, u32::MAX);
        assert_eq!(f.outcome(t), Some(Outcome::Failed(u32::MAX)));
        assert_eq!(
            ResultWord::failed(t, 0).outcome(t),
            Some(Outcome::Failed(0))
        );
        assert_eq!(f.outcome(Token::new(9)), None, "another token's result");
        assert_eq!(ResultWord::default().outcome(t), None, "nothing written");
        assert_eq!(ResultWord::from_bits(f.bits()), f);
    }

    #[test]
    fn conditions_round_trip_and_unknown_kinds_are_refused() {
        for c in [
            Condition::counter32(0x40, 3),
            Condition::counter64(0x48, u64::MAX),
            Condition::engine(u32::MAX, 9),
        ] {
            assert_eq!(RawCondition::from(c).decode(), Ok(c));
        }
        let bad = RawCondition {
            kind: 7,
            ..RawCondition::default()
        };
        assert_eq!(bad.decode(), Err(7));
        assert_eq!(RawCondition::default().decode(), Err(0));
        let engine = RawCondition {
            kind: RawCondition::ENGINE,
            word: 1 << 32,
            ..RawCondition::default()
        };
        assert_eq!(
            engine.decode(),
            Err(RawCondition::ENGINE),
            "no such engine index"
        );
    }
}
