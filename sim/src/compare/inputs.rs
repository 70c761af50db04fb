//! The two ways in: bytes read as a dtype, and slices of an [`Element`]. Lengths and the
//! tolerance are checked before any element is compared.

use crate::compare::comparison::{Comparison, compare_bits};
use crate::compare::tolerance::Tolerance;
use crate::dtype::Dtype;
use crate::element::Element;

/// Why two buffers could not be compared.
#[derive(Clone, Copy, PartialEq, Debug, thiserror::Error)]
pub enum CompareError {
    /// `len` bytes are not a whole number of `dtype` elements.
    #[error(
        "the {what} data is {len} bytes, not a whole number of {dtype} elements ({} bytes \
         each): check the dtype and the data",
        dtype.size()
    )]
    Ragged {
        /// `"actual"` or `"expected"`.
        what: &'static str,
        /// Its length in bytes.
        len: usize,
        /// The dtype it was read as.
        dtype: Dtype,
    },
    /// The expected data is empty: there is nothing to compare with.
    #[error("the expected data is empty: give at least one element to compare with")]
    NothingExpected,
    /// More elements were expected than the run produced.
    #[error(
        "{expected} {dtype} elements were expected but the output holds only {actual}: \
         check the dtype, the buffer and the expected data"
    )]
    ExpectedLonger {
        /// The dtype compared.
        dtype: Dtype,
        /// Elements expected.
        expected: usize,
        /// Elements in the output.
        actual: usize,
    },
    /// Slices of different lengths given to [`crate::expect_close`].
    #[error("{actual} values compared with {expected} expected ones: give slices of one length")]
    LengthsDiffer {
        /// Values given.
        actual: usize,
        /// Values expected.
        expected: usize,
    },
    /// A tolerance that is negative, infinite or NaN.
    #[error("{tolerance} is not a tolerance: rtol and atol must be finite and at least 0")]
    BadTolerance {
        /// The tolerance given.
        tolerance: Tolerance,
    },
}

/// Compares `actual` with `expected`, both little-endian `dtype` elements, within `tol`.
///
/// Only the first `expected.len()` bytes of `actual` are compared: an output buffer may be
/// longer than its golden data (its tail is not looked at), never shorter. Errors: a length
/// that is not a whole number of elements, empty expected data, expected data longer than
/// `actual`, an invalid tolerance. Elements outside the tolerance are not an error: see
/// [`Comparison::passed`].
///
/// ```
/// use pto_sim::{Dtype, Tolerance, compare_bytes, half::f16};
///
/// let bytes = |v: &[f32]| -> Vec<u8> {
///     v.iter().flat_map(|&x| f16::from_f32(x).to_le_bytes()).collect()
/// };
/// let (out, want) = (bytes(&[1.0, 2.0, 3.01]), bytes(&[1.0, 2.0, 3.0]));
/// let c = compare_bytes(Dtype::F16, &out, &want, Tolerance::default_for(Dtype::F16))?;
/// assert!(!c.passed());
/// assert_eq!(c.first_outside.unwrap().index, 2);
/// assert!(c.to_string().starts_with("1 of 3 f16 elements outside rtol 1e-3 atol 1e-3; \
///                                    first at index 2: 3.01 against 3.0"));
/// # Ok::<(), pto_sim::CompareError>(())
/// ```
pub fn compare_bytes(
    dtype: Dtype,
    actual: &[u8],
    expected: &[u8],
    tol: Tolerance,
) -> Result<Comparison, CompareError> {
    check_tolerance(tol)?;
    let size = dtype.size();
    for (what, len) in [("actual", actual.len()), ("expected", expected.len())] {
        if len % size != 0 {
            return Err(CompareError::Ragged { what, len, dtype });
        }
    }
    if expected.is_empty() {
        return Err(CompareError::NothingExpected);
    }
    if expected.len() > actual.len() {
        return Err(CompareError::ExpectedLonger {
            dtype,
            expected: expected.len() / size,
            actual: actual.len() / size,
        });
    }
    let bits = |element: &[u8]| {
        let mut le = [0u8; 8];
        le[..size].copy_from_slice(element);
        u64::from_le_bytes(le)
    };
    let pairs = actual
        .chunks_exact(size)
        .zip(expected.chunks_exact(size))
        .map(|(a, e)| (bits(a), bits(e)));
    Ok(compare_bits(dtype, pairs, tol))
}

/// Compares two slices of one element type within `tol` (of one length, else
/// [`CompareError::LengthsDiffer`]); empty slices compare as passing.
pub(crate) fn compare_elements<T: Element>(
    actual: &[T],
    expected: &[T],
    tol: Tolerance,
) -> Result<Comparison, CompareError> {
    check_tolerance(tol)?;
    if actual.len() != expected.len() {
        return Err(CompareError::LengthsDiffer {
            actual: actual.len(),
            expected: expected.len(),
        });
    }
    let pairs = actual
        .iter()
        .zip(expected)
        .map(|(a, e)| (a.encode(), e.encode()));
    Ok(compare_bits(T::DTYPE, pairs, tol))
}

fn check_tolerance(tolerance: Tolerance) -> Result<(), CompareError> {
    if tolerance.is_valid() {
        Ok(())
    } else {
        Err(CompareError::BadTolerance { tolerance })
    }
}
