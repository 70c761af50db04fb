//! The check a Rust workload makes of its result: every element close to plain Rust's.

use crate::compare::comparison::Comparison;
use crate::compare::inputs::{CompareError, compare_elements};
use crate::compare::tolerance::Tolerance;
use crate::element::Element;

/// Why [`expect_close`] refused a result.
#[derive(Clone, PartialEq, Debug, thiserror::Error)]
pub enum CloseError {
    /// Some elements are outside the tolerance; the message is the comparison's.
    #[error("{0}")]
    Outside(Box<Comparison>),
    /// The slices could not be compared (lengths differ, a bad tolerance).
    #[error(transparent)]
    Compare(#[from] CompareError),
}

/// Checks that every element of `actual` is within `tol` of the same element of `expected`
/// (the rule of [`crate::compare_bytes`]); the slices must be of one length. The
/// [`Comparison`] comes back either way: as the value, or inside [`CloseError::Outside`],
/// whose message says how many elements were off, the first of them and the largest errors.
///
/// ```
/// use pto_sim::{Tolerance, expect_close, half::f16};
///
/// let want = [1.0f32, 2.0, 3.0];
/// let got = want.map(f16::from_f32).map(|h| h.to_f32() + 1e-4);
/// let c = expect_close(&got, &want, Tolerance::for_type::<f16>())?;
/// assert!(c.passed());
/// let e = expect_close(&[1.0f32, 2.5], &[1.0, 2.0], Tolerance::for_type::<f32>()).unwrap_err();
/// assert!(e.to_string().starts_with("1 of 2 f32 elements outside rtol 1e-5 atol 1e-6; \
///                                    first at index 1: 2.5 against 2.0"));
/// # Ok::<(), pto_sim::CloseError>(())
/// ```
pub fn expect_close<T: Element>(
    actual: &[T],
    expected: &[T],
    tol: Tolerance,
) -> Result<Comparison, CloseError> {
    let c = compare_elements(actual, expected, tol)?;
    if c.passed() {
        Ok(c)
    } else {
        Err(CloseError::Outside(Box::new(c)))
    }
}
