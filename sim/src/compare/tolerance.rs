//! How far an element may be from its expected value: a relative and an absolute tolerance,
//! with a default for each dtype.

use std::fmt;

use crate::compare::numbers::brief;
use crate::dtype::Dtype;
use crate::element::Element;

/// An element passes when `|actual - expected| <= atol + rtol * |expected|` (the whole rule
/// is in [`crate::compare_bytes`]).
///
/// ```
/// use pto_sim::{Dtype, Tolerance, half::f16};
///
/// assert_eq!(Tolerance::default_for(Dtype::F16), Tolerance::new(1e-3, 1e-3));
/// assert_eq!(Tolerance::for_type::<f16>(), Tolerance::default_for(Dtype::F16));
/// assert_eq!(Tolerance::for_type::<i32>(), Tolerance::EXACT);
/// assert_eq!(Tolerance::new(1e-5, 1e-6).to_string(), "rtol 1e-5 atol 1e-6");
/// ```
#[derive(Clone, Copy, PartialEq, Debug, serde::Serialize)]
pub struct Tolerance {
    /// Relative tolerance: the share of `|expected|` an element may be off by (finite, at
    /// least 0).
    pub rtol: f64,
    /// Absolute tolerance: what an element may be off by whatever its size (finite, at
    /// least 0).
    pub atol: f64,
}

impl Tolerance {
    /// No difference at all: integers compare as integers, floats must be equal.
    pub const EXACT: Tolerance = Tolerance::new(0.0, 0.0);

    /// `rtol` and `atol` (checked when used: both finite and at least 0).
    pub const fn new(rtol: f64, atol: f64) -> Self {
        Tolerance { rtol, atol }
    }

    /// The default for `dtype`, about a few units in the last place of its precision:
    ///
    /// | dtype | rtol | atol |
    /// | --- | --- | --- |
    /// | `f64` | 1e-9 | 1e-12 |
    /// | `f32` | 1e-5 | 1e-6 |
    /// | `f16` | 1e-3 | 1e-3 |
    /// | `bf16` | 1e-2 | 1e-2 |
    /// | integers | 0 | 0 (exact) |
    pub const fn default_for(dtype: Dtype) -> Self {
        match dtype {
            Dtype::F64 => Tolerance::new(1e-9, 1e-12),
            Dtype::F32 => Tolerance::new(1e-5, 1e-6),
            Dtype::F16 => Tolerance::new(1e-3, 1e-3),
            Dtype::Bf16 => Tolerance::new(1e-2, 1e-2),
            Dtype::I8
            | Dtype::I16
            | Dtype::I32
            | Dtype::I64
            | Dtype::U8
            | Dtype::U16
            | Dtype::U32
            | Dtype::U64 => Tolerance::EXACT,
        }
    }

    /// The default for elements of type `T` ([`Tolerance::default_for`] its dtype).
    pub const fn for_type<T: Element>() -> Self {
        Tolerance::default_for(T::DTYPE)
    }

    /// Whether both tolerances are 0 (integers are then compared as integers, exactly).
    pub fn is_exact(&self) -> bool {
        self.rtol == 0.0 && self.atol == 0.0
    }

    /// Whether both tolerances are finite and at least 0.
    pub fn is_valid(&self) -> bool {
        [self.rtol, self.atol]
            .iter()
            .all(|t| t.is_finite() && *t >= 0.0)
    }
}

impl fmt::Display for Tolerance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "rtol {} atol {}", brief(self.rtol), brief(self.atol))
    }
}
