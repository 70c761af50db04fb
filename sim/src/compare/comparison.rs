//! What a comparison found, how it is gathered element by element, and how it reads.

use std::fmt;

use crate::compare::numbers::{brief, serialize_f64};
use crate::compare::rule::judge;
use crate::compare::tolerance::Tolerance;
use crate::compare::value::Value;
use crate::dtype::Dtype;

/// What comparing a buffer with its expected contents found. Its [`std::fmt::Display`] is a
/// line a user can act on (the caller adds which buffer it was):
///
/// `3 of 4096 f16 elements outside rtol 1e-3 atol 1e-3; first at index 17: 1.502 against 1.5
/// (abs 2e-3, rel 1.3e-3); largest abs error 4e-3 at 99, largest rel error 2.1e-3 at 17`
#[derive(Clone, PartialEq, Debug, serde::Serialize)]
pub struct Comparison {
    /// The elements' type.
    pub dtype: Dtype,
    /// Elements compared.
    pub elements: usize,
    /// The tolerance they were compared with.
    pub tolerance: Tolerance,
    /// The largest `|actual - expected|` and the first element with it (`None` when no
    /// element was compared). Infinite for a NaN or infinity that does not match.
    pub max_abs_error: Option<ErrorAt>,
    /// The largest `|actual - expected| / |expected|` and the first element with it (`None`
    /// when no element was compared). Infinite where only `expected` is 0.
    pub max_rel_error: Option<ErrorAt>,
    /// Elements outside the tolerance.
    pub outside: usize,
    /// The first element outside the tolerance, if any.
    pub first_outside: Option<Mismatch>,
}

impl Comparison {
    /// Whether every element is within the tolerance.
    pub fn passed(&self) -> bool {
        self.outside == 0
    }
}

/// An error and the index of the element that has it.
#[derive(Clone, Copy, PartialEq, Debug, serde::Serialize)]
pub struct ErrorAt {
    /// The element's index (from 0).
    pub index: usize,
    /// The error (as JSON, `"inf"` when infinite).
    #[serde(serialize_with = "serialize_f64")]
    pub error: f64,
}

/// An element outside the tolerance.
#[derive(Clone, Copy, PartialEq, Debug, serde::Serialize)]
pub struct Mismatch {
    /// Its index (from 0).
    pub index: usize,
    /// What the run produced.
    pub actual: Value,
    /// What was expected.
    pub expected: Value,
    /// `|actual - expected|` (infinite for a NaN or infinity that does not match).
    #[serde(serialize_with = "serialize_f64")]
    pub abs_error: f64,
    /// `|actual - expected| / |expected|` (infinite where only `expected` is 0).
    #[serde(serialize_with = "serialize_f64")]
    pub rel_error: f64,
}

/// Compares `(actual, expected)` pairs of `dtype` element bits.
pub(crate) fn compare_bits(
    dtype: Dtype,
    pairs: impl Iterator<Item = (u64, u64)>,
    tol: Tolerance,
) -> Comparison {
    let mut c = Comparison {
        dtype,
        elements: 0,
        tolerance: tol,
        max_abs_error: None,
        max_rel_error: None,
        outside: 0,
        first_outside: None,
    };
    for (index, (a, e)) in pairs.enumerate() {
        let (actual, expected) = (Value::new(dtype, a), Value::new(dtype, e));
        let v = judge(actual.number(), expected.number(), tol);
        c.elements += 1;
        raise(&mut c.max_abs_error, index, v.abs);
        raise(&mut c.max_rel_error, index, v.rel);
        if !v.within {
            c.outside += 1;
            c.first_outside.get_or_insert(Mismatch {
                index,
                actual,
                expected,
                abs_error: v.abs,
                rel_error: v.rel,
            });
        }
    }
    c
}

/// Makes `max` the error at `index` if it is the first or larger than the one there.
fn raise(max: &mut Option<ErrorAt>, index: usize, error: f64) {
    if max.is_none_or(|m| error > m.error) {
        *max = Some(ErrorAt { index, error });
    }
}

impl fmt::Display for Comparison {
    /// `3 of 4096 f16 elements outside rtol 1e-3 atol 1e-3; first at index 17: 1.502 against
    /// 1.5 (abs 2e-3, rel 1.3e-3); largest abs error 4e-3 at 99, largest rel error 2.1e-3 at
    /// 17`, or `all 4096 f16 elements within rtol 1e-3 atol 1e-3; largest abs error ...`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (n, dtype, tol) = (self.elements, self.dtype, self.tolerance);
        match &self.first_outside {
            None if n == 0 => return write!(f, "no {dtype} elements compared"),
            None => write!(f, "all {n} {dtype} elements within {tol}")?,
            Some(m) => write!(
                f,
                "{} of {n} {dtype} elements outside {tol}; first at index {}: {} against {} \
                 (abs {}, rel {})",
                self.outside,
                m.index,
                m.actual,
                m.expected,
                brief(m.abs_error),
                brief(m.rel_error)
            )?,
        }
        if let (Some(abs), Some(rel)) = (self.max_abs_error, self.max_rel_error) {
            write!(
                f,
                "; largest abs error {}, largest rel error {}",
                At(abs),
                At(rel)
            )?;
        }
        Ok(())
    }
}

/// `4e-3 at 99`.
struct At(ErrorAt);

impl fmt::Display for At {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at {}", brief(self.0.error), self.0.index)
    }
}
