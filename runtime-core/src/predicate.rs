//! Predicated dispatch: a task may carry a test of one element of device memory, read when
//! a scheduler is about to dispatch it (its producers have finished). A false test retires
//! the task as a DUMMY one: no core runs it, its outputs stay untouched, its consumers are
//! released, and the run counts it skipped.
#![forbid(unsafe_code)]

use core::fmt;

use crate::sync::{AtomicU32, AtomicU64, Ordering};

/// How a predicate compares the element it reads with its target.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
#[repr(u8)]
pub enum CmpOp {
    /// `value == target`
    Eq = 0,
    /// `value != target`
    Ne = 1,
    /// `value < target`
    Lt = 2,
    /// `value <= target`
    Le = 3,
    /// `value > target`
    Gt = 4,
    /// `value >= target`
    Ge = 5,
}

impl CmpOp {
    /// Every operator, in the order of their codes.
    pub const ALL: [CmpOp; 6] = [
        CmpOp::Eq,
        CmpOp::Ne,
        CmpOp::Lt,
        CmpOp::Le,
        CmpOp::Gt,
        CmpOp::Ge,
    ];

    /// The operator of `code` (0 to 5), as C gives it.
    pub const fn from_code(code: u8) -> Option<CmpOp> {
        if (code as usize) < Self::ALL.len() {
            Some(Self::ALL[code as usize])
        } else {
            None
        }
    }

    /// Its symbol.
    pub const fn symbol(self) -> &'static str {
        match self {
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
        }
    }
}

/// A test of the `width`-byte element at device address `addr` against `target`: the task
/// runs if it holds, and is skipped if not. The element is read as an unsigned integer, or
/// as a signed one ([`Predicate::signed`]).
///
/// ```
/// use pto_runtime_core::{CmpOp, Predicate};
///
/// // Run only if the u32 count at 0x1000 is above 0.
/// let p = Predicate::new(0x1000, 4, CmpOp::Gt, 0);
/// assert!(p.holds(3) && !p.holds(0));
/// // Run only if the i8 at 0x2000 is negative.
/// let neg = Predicate::new(0x2000, 1, CmpOp::Lt, 0).signed();
/// assert!(neg.holds(0xff) && !neg.holds(0x7f));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub struct Predicate {
    /// The element's device address (aligned to `width`).
    pub addr: u64,
    /// The element's bytes: 1, 2, 4 or 8.
    pub width: u8,
    /// The comparison.
    pub op: CmpOp,
    /// What the element is compared with (its low `width` bytes, sign-extended when
    /// `is_signed`).
    pub target: u64,
    /// Whether the element and the target compare as signed integers.
    pub is_signed: bool,
}

/// Why a [`Predicate`] cannot be used.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum PredicateError {
    /// A width other than 1, 2, 4 or 8 bytes.
    Width {
        /// The width given.
        width: u8,
    },
    /// The address is not a multiple of the width.
    Misaligned {
        /// The address.
        addr: u64,
        /// The width.
        width: u8,
    },
    /// The platform cannot read the element there (outside device memory).
    Unreadable {
        /// The address.
        addr: u64,
    },
}

impl fmt::Display for PredicateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Width { width } => {
                write!(f, "a predicate of {width} bytes: read 1, 2, 4 or 8")
            }
            Self::Misaligned { addr, width } => write!(
                f,
                "a predicate's {width}-byte element at {addr:#x} is not aligned to its width"
            ),
            Self::Unreadable { addr } => write!(
                f,
                "a predicate's element at {addr:#x} is outside the memory this platform reads"
            ),
        }
    }
}

impl core::error::Error for PredicateError {}

impl Predicate {
    /// `*addr op target`, the `width`-byte element read as an unsigned integer.
    pub const fn new(addr: u64, width: u8, op: CmpOp, target: u64) -> Self {
        Predicate {
            addr,
            width,
            op,
            target,
            is_signed: false,
        }
    }

    /// The same test, comparing signed integers.
    pub const fn signed(self) -> Self {
        Predicate {
            is_signed: true,
            ..self
        }
    }

    /// The width and alignment checked (the platform's reach is the orchestrator's to ask).
    pub const fn check(&self) -> Result<(), PredicateError> {
        if !matches!(self.width, 1 | 2 | 4 | 8) {
            return Err(PredicateError::Width { width: self.width });
        }
        if !self.addr.is_multiple_of(self.width as u64) {
            return Err(PredicateError::Misaligned {
                addr: self.addr,
                width: self.width,
            });
        }
        Ok(())
    }

    /// Whether the test holds for `raw`, the element's bytes as a little-endian integer
    /// (bytes past `width` are ignored).
    pub const fn holds(&self, raw: u64) -> bool {
        // A width other than 1, 2 or 4 is refused at submit; it reads as 8 here.
        let shift = match self.width {
            1 => 56,
            2 => 48,
            4 => 32,
            _ => 0,
        };
        let ord = if self.is_signed {
            // Both sign-extended from the element's width.
            let v = ((raw << shift) as i64) >> shift;
            let t = ((self.target << shift) as i64) >> shift;
            compare(v < t, v == t)
        } else {
            let (v, t) = ((raw << shift) >> shift, (self.target << shift) >> shift);
            compare(v < t, v == t)
        };
        match self.op {
            CmpOp::Eq => ord == 0,
            CmpOp::Ne => ord != 0,
            CmpOp::Lt => ord < 0,
            CmpOp::Le => ord <= 0,
            CmpOp::Gt => ord > 0,
            CmpOp::Ge => ord >= 0,
        }
    }

    /// The word the slot keeps besides the address and target: width, op, signedness.
    pub(crate) const fn pack_spec(&self) -> u32 {
        self.width as u32 | (self.op as u32) << 8 | (self.is_signed as u32) << 16
    }

    /// The predicate of an address, a target and a [`Predicate::pack_spec`] word.
    pub(crate) const fn unpack(addr: u64, target: u64, spec: u32) -> Self {
        Predicate {
            addr,
            width: spec as u8,
            op: match CmpOp::from_code((spec >> 8) as u8) {
                Some(op) => op,
                None => CmpOp::Eq,
            },
            target,
            is_signed: (spec >> 16) & 1 == 1,
        }
    }
}

/// A slot's predicate, in atomic words: written at submit when the task's meta says
/// `predicated`, read at dispatch. Relaxed: the task's publication orders them.
pub(crate) struct PredicateCell {
    addr: AtomicU64,
    target: AtomicU64,
    spec: AtomicU32,
}

impl PredicateCell {
    /// A cell holding nothing in particular.
    pub(crate) fn new() -> Self {
        PredicateCell {
            addr: AtomicU64::new(0),
            target: AtomicU64::new(0),
            spec: AtomicU32::new(0),
        }
    }

    /// Stores `p`.
    pub(crate) fn store(&self, p: &Predicate) {
        self.addr.store(p.addr, Ordering::Relaxed);
        self.target.store(p.target, Ordering::Relaxed);
        self.spec.store(p.pack_spec(), Ordering::Relaxed);
    }

    /// What the last [`PredicateCell::store`] stored.
    pub(crate) fn load(&self) -> Predicate {
        Predicate::unpack(
            self.addr.load(Ordering::Relaxed),
            self.target.load(Ordering::Relaxed),
            self.spec.load(Ordering::Relaxed),
        )
    }
}

/// -1, 0 or 1 from `less` and `equal`.
const fn compare(less: bool, equal: bool) -> i8 {
    if less {
        -1
    } else if equal {
        0
    } else {
        1
    }
}

impl fmt::Display for Predicate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = if self.is_signed { 'i' } else { 'u' };
        write!(
            f,
            "*({kind}{} *){:#x} {} {}",
            8 * self.width as u32,
            self.addr,
            self.op.symbol(),
            self.target
        )
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// The reference: the comparison on i128 values of the element and the target.
    fn reference(p: &Predicate, raw: u64) -> bool {
        let bits = 8 * p.width as u32;
        let value = |x: u64| -> i128 {
            let low = if bits == 64 {
                x
            } else {
                x & ((1u64 << bits) - 1)
            };
            if p.is_signed && low >> (bits - 1) & 1 == 1 {
                low as i128 - (1i128 << bits)
            } else {
                low as i128
            }
        };
        let (v, t) = (value(raw), value(p.target));
        match p.op {
            CmpOp::Eq => v == t,
            CmpOp::Ne => v != t,
            CmpOp::Lt => v < t,
            CmpOp::Le => v <= t,
            CmpOp::Gt => v > t,
            CmpOp::Ge => v >= t,
        }
    }

    #[test]
    fn every_operator_at_every_width_signed_or_not_matches_the_reference_both_ways() {
        let samples = [
            0u64,
            1,
            2,
            0x7f,
            0x80,
            0xff,
            0x7fff,
            0x8000,
            0xffff_ffff,
            u64::MAX,
        ];
        for width in [1u8, 2, 4, 8] {
            for op in CmpOp::ALL {
                for is_signed in [false, true] {
                    let (mut yes, mut no) = (0, 0);
                    for &target in &samples {
                        let p = Predicate {
                            addr: 0,
                            width,
                            op,
                            target,
                            is_signed,
                        };
                        assert_eq!(Predicate::unpack(0, target, p.pack_spec()), p);
                        for &raw in &samples {
                            let want = reference(&p, raw);
                            assert_eq!(p.holds(raw), want, "{p} for {raw:#x}");
                            if want { yes += 1 } else { no += 1 }
                        }
                    }
                    assert!(
                        yes > 0 && no > 0,
                        "{width} {op:?} {is_signed}: both outcomes"
                    );
                }
            }
        }
    }

    #[test]
    fn bad_widths_and_misaligned_addresses_are_named() {
        let p = Predicate::new(0x1002, 4, CmpOp::Eq, 0);
        assert_eq!(
            p.check(),
            Err(PredicateError::Misaligned {
                addr: 0x1002,
                width: 4
            })
        );
        assert_eq!(
            Predicate::new(0x1000, 3, CmpOp::Eq, 0).check(),
            Err(PredicateError::Width { width: 3 })
        );
        assert!(Predicate::new(0x1002, 2, CmpOp::Eq, 0).check().is_ok());
        assert_eq!(
            std::format!("{}", Predicate::new(0x10, 2, CmpOp::Le, 5).signed()),
            "*(i16 *)0x10 <= 5"
        );
    }
}
