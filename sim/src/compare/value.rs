//! One element of a compared buffer, kept as its dtype and bits so it prints in its own type
//! (an f16 as the shortest decimal that is that f16), and the short form errors print in.

use std::fmt;

use half::{bf16, f16};

use crate::compare::numbers::{brief, serialize_f64};
use crate::dtype::Dtype;
use crate::element::Element;

/// An element's value as a number: every float type is exact in `f64`, every integer type in
/// `i128`.
#[derive(Clone, Copy, PartialEq, Debug)]
pub(crate) enum Number {
    /// A float element.
    Float(f64),
    /// An integer element.
    Int(i128),
}

/// One element of a compared buffer: its dtype and its bits (the element's little-endian
/// bytes as a `u64`, see [`Element::encode`]).
///
/// It prints in its own type: an `f16` as the shortest decimal that reads back as that
/// `f16`, an integer as itself. As JSON it is a number (a float's exact value), or `"NaN"`,
/// `"inf"` or `"-inf"`.
///
/// ```
/// use pto_sim::{Dtype, Element, Value, half::f16};
///
/// let v = Value::new(Dtype::F16, f16::from_f32(1.502).encode());
/// assert_eq!(v.to_string(), "1.502");
/// assert_eq!(v.to_f64(), 1.501953125, "the f16 nearest 1.502");
/// assert_eq!(Value::new(Dtype::I8, 0xff).to_string(), "-1");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Value {
    dtype: Dtype,
    bits: u64,
}

impl Value {
    /// The element of `dtype` whose bytes are the low [`Dtype::size`] bytes of `bits` (the
    /// others are dropped).
    pub fn new(dtype: Dtype, bits: u64) -> Self {
        let bits = match dtype.size() {
            8 => bits,
            n => bits & ((1u64 << (8 * n)) - 1),
        };
        Value { dtype, bits }
    }

    /// Its dtype.
    pub fn dtype(&self) -> Dtype {
        self.dtype
    }

    /// Its bits: its little-endian bytes as a `u64`, the bytes above its size 0.
    pub fn bits(&self) -> u64 {
        self.bits
    }

    /// Its value as the nearest `f64` (exact but for 64-bit integers beyond 2^53).
    pub fn to_f64(&self) -> f64 {
        match self.number() {
            Number::Float(x) => x,
            Number::Int(i) => i as f64,
        }
    }

    /// Its value as a number, exactly.
    pub(crate) fn number(&self) -> Number {
        let b = self.bits;
        match self.dtype {
            Dtype::F32 => Number::Float(f32::decode(b).into()),
            Dtype::F16 => Number::Float(f16::decode(b).to_f64()),
            Dtype::Bf16 => Number::Float(bf16::decode(b).to_f64()),
            Dtype::F64 => Number::Float(f64::decode(b)),
            Dtype::I8 => Number::Int(i8::decode(b).into()),
            Dtype::I16 => Number::Int(i16::decode(b).into()),
            Dtype::I32 => Number::Int(i32::decode(b).into()),
            Dtype::I64 => Number::Int(i64::decode(b).into()),
            Dtype::U8 => Number::Int(u8::decode(b).into()),
            Dtype::U16 => Number::Int(u16::decode(b).into()),
            Dtype::U32 => Number::Int(u32::decode(b).into()),
            Dtype::U64 => Number::Int(u64::decode(b).into()),
        }
    }

    /// Whether `x` (an `f64`) rounds to this very element in its own type.
    fn reads_back_as_self(&self, x: f64) -> bool {
        let bits = match self.dtype {
            Dtype::F32 => (x as f32).encode(),
            Dtype::F16 => f16::from_f64(x).encode(),
            Dtype::Bf16 => bf16::from_f64(x).encode(),
            _ => x.to_bits(),
        };
        bits == self.bits
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let x = match self.number() {
            Number::Int(i) => return write!(f, "{i}"),
            Number::Float(x) if !x.is_finite() => return f.write_str(&brief(x)),
            Number::Float(x) => x,
        };
        // The fewest significant digits that read back as this element; f64's Debug then
        // prints that decimal (plainly, or with an exponent when very large or small).
        let shortest = (0..17)
            .filter_map(|digits| format!("{x:.digits$e}").parse::<f64>().ok())
            .find(|&y| self.reads_back_as_self(y))
            .unwrap_or(x);
        write!(f, "{shortest:?}")
    }
}

impl serde::Serialize for Value {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.number() {
            Number::Int(i) if self.dtype.is_signed_int() => s.serialize_i64(i as i64),
            Number::Int(i) => s.serialize_u64(i as u64),
            Number::Float(x) => serialize_f64(&x, s),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown<T: Element>(v: T) -> String {
        Value::new(T::DTYPE, v.encode()).to_string()
    }

    #[test]
    fn floats_print_as_the_shortest_decimal_of_their_own_type() {
        assert_eq!(shown(f16::from_f32(1.502)), "1.502");
        assert_eq!(shown(f16::from_f32(1.5)), "1.5");
        assert_eq!(shown(f16::from_f32(2.0)), "2.0");
        assert_eq!(shown(f16::MAX), "65500.0");
        assert_eq!(shown(f16::MIN_POSITIVE_SUBNORMAL), "6e-8");
        assert_eq!(shown(bf16::from_f32(std::f32::consts::PI)), "3.14");
        assert_eq!(shown(bf16::from_f32(-1e30)), "-1e30");
        assert_eq!(shown(0.1f32), "0.1");
        assert_eq!(shown(0.1f64), "0.1");
        assert_eq!(shown(-0.0f32), "-0.0");
        assert_eq!(shown(f16::NAN), "NaN");
        assert_eq!(shown(bf16::NEG_INFINITY), "-inf");
        assert_eq!(shown(f64::INFINITY), "inf");
    }

    #[test]
    fn integers_print_as_themselves_in_their_own_sign() {
        assert_eq!(shown(i64::MIN), "-9223372036854775808");
        assert_eq!(shown(u64::MAX), "18446744073709551615");
        assert_eq!(shown(-1i16), "-1");
        assert_eq!(Value::new(Dtype::U16, 0xffff_ffff).to_string(), "65535");
    }

    #[test]
    fn values_serialize_as_numbers_or_named_non_finites() {
        let json = |v: Value| serde_json::to_string(&v).unwrap();
        assert_eq!(
            json(Value::new(Dtype::I64, i64::MIN.encode())),
            "-9223372036854775808"
        );
        assert_eq!(
            json(Value::new(Dtype::U64, u64::MAX)),
            "18446744073709551615"
        );
        assert_eq!(
            json(Value::new(Dtype::F16, f16::from_f32(0.5).encode())),
            "0.5"
        );
        assert_eq!(json(Value::new(Dtype::F32, f32::NAN.encode())), "\"NaN\"");
    }
}
