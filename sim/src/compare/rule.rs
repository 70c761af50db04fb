//! The rule that says whether one element is close enough to its expected value, and how far
//! off it is.

use crate::compare::tolerance::Tolerance;
use crate::compare::value::Number;

/// How far one element is from its expected value, and whether that is within tolerance.
#[derive(Clone, Copy, PartialEq, Debug)]
pub(crate) struct Verdict {
    /// `|actual - expected|`; infinite for a NaN or infinity that does not match.
    pub(crate) abs: f64,
    /// `abs / |expected|`: 0 when `abs` is 0, infinite when only `expected` is 0.
    pub(crate) rel: f64,
    /// Whether the element passes.
    pub(crate) within: bool,
}

impl Verdict {
    /// Equal (a NaN against a NaN, an infinity against the same infinity).
    const SAME: Verdict = Verdict {
        abs: 0.0,
        rel: 0.0,
        within: true,
    };

    /// A NaN or an infinity against anything else.
    const APART: Verdict = Verdict {
        abs: f64::INFINITY,
        rel: f64::INFINITY,
        within: false,
    };

    /// `abs` off from an expected value of magnitude `expected`.
    fn off_by(abs: f64, expected: f64, within: bool) -> Self {
        let rel = if abs == 0.0 { 0.0 } else { abs / expected };
        Verdict { abs, rel, within }
    }
}

/// Judges `actual` against `expected` (both of one dtype):
/// - floats pass when `|actual - expected| <= atol + rtol * |expected|`; a NaN only against
///   a NaN, an infinity only against the same infinity;
/// - integers are compared as integers, exactly, when the tolerance is [`Tolerance::EXACT`];
///   otherwise by the same formula as floats, in `f64`.
pub(crate) fn judge(actual: Number, expected: Number, tol: Tolerance) -> Verdict {
    match (actual, expected) {
        (Number::Float(a), Number::Float(e)) => {
            if !a.is_finite() || !e.is_finite() {
                let same = (a.is_nan() && e.is_nan()) || a == e;
                return if same { Verdict::SAME } else { Verdict::APART };
            }
            let abs = (a - e).abs();
            Verdict::off_by(abs, e.abs(), abs <= tol.atol + tol.rtol * e.abs())
        }
        (Number::Int(a), Number::Int(e)) => {
            let diff = (a - e).unsigned_abs();
            let (abs, mag) = (diff as f64, e.unsigned_abs() as f64);
            let within = if tol.is_exact() {
                diff == 0
            } else {
                abs <= tol.atol + tol.rtol * mag
            };
            Verdict::off_by(abs, mag, within)
        }
        // One dtype never decodes to both kinds.
        _ => Verdict::APART,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const F16: Tolerance = Tolerance::new(1e-3, 1e-3);

    fn floats(a: f64, e: f64, tol: Tolerance) -> Verdict {
        judge(Number::Float(a), Number::Float(e), tol)
    }

    #[test]
    fn a_float_passes_within_atol_plus_rtol_times_expected() {
        // Bound at 100: 1e-3 + 1e-3 * 100 = 0.101.
        assert!(floats(100.1, 100.0, F16).within);
        assert!(!floats(100.102, 100.0, F16).within);
        let v = floats(1.5, 2.0, F16);
        assert_eq!((v.abs, v.rel, v.within), (0.5, 0.25, false));
        assert_eq!(floats(0.0005, 0.0, F16).rel, f64::INFINITY);
        assert!(
            floats(0.0005, 0.0, F16).within,
            "atol covers a zero expected"
        );
        assert_eq!(floats(-0.0, 0.0, Tolerance::EXACT), Verdict::SAME);
    }

    #[test]
    fn nan_matches_only_nan_and_infinity_only_the_same_infinity() {
        let inf = f64::INFINITY;
        let wide = Tolerance::new(1e300, 1e300);
        assert_eq!(floats(f64::NAN, f64::NAN, F16), Verdict::SAME);
        assert_eq!(floats(1.0, f64::NAN, wide), Verdict::APART);
        assert_eq!(floats(f64::NAN, 1.0, wide), Verdict::APART);
        assert_eq!(floats(inf, inf, F16), Verdict::SAME);
        assert_eq!(floats(-inf, inf, wide), Verdict::APART);
        assert_eq!(floats(f64::MAX, inf, wide), Verdict::APART);
        assert_eq!(floats(inf, f64::NAN, wide), Verdict::APART);
    }

    #[test]
    fn integers_compare_exactly_even_at_the_extremes_of_i64_and_u64() {
        let int = |a: i128, e: i128, tol| judge(Number::Int(a), Number::Int(e), tol);
        let (min, max) = (i64::MIN as i128, i64::MAX as i128);
        assert!(int(max, max, Tolerance::EXACT).within);
        assert!(
            !int(max - 1, max, Tolerance::EXACT).within,
            "in f64 they are equal"
        );
        assert!(!int(min + 1, min, Tolerance::EXACT).within);
        let top = u64::MAX as i128;
        assert!(!int(top, top - 1, Tolerance::EXACT).within);
        assert_eq!(int(min, max, Tolerance::EXACT).abs, u64::MAX as f64);
        assert!(
            int(98, 100, Tolerance::new(0.0, 2.0)).within,
            "tolerances given"
        );
        assert!(!int(97, 100, Tolerance::new(0.0, 2.0)).within);
    }
}
