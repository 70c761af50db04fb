//! Golden comparison: a run's output against an expected output, element by element, within
//! a tolerance. One library for the command line (`--expect N=FILE --dtype D --rtol R
//! --atol A`) and for Rust workloads ([`expect_close`]).
//!
//! The rule, for each element (see [`Tolerance`] for the defaults):
//! - floats pass when `|actual - expected| <= atol + rtol * |expected|`;
//! - a NaN passes only against a NaN, an infinity only against the same infinity;
//! - integers are compared exactly, as integers (no rounding, even for `i64` and `u64`),
//!   unless a non-zero tolerance is given; then by the formula above, in `f64`.

mod close;
mod comparison;
mod inputs;
mod numbers;
mod rule;
mod tolerance;
mod value;

pub use close::{CloseError, expect_close};
pub use comparison::{Comparison, ErrorAt, Mismatch};
pub use inputs::{CompareError, compare_bytes};
pub use tolerance::Tolerance;
pub use value::Value;

#[cfg(test)]
mod tests;
