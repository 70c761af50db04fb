//! The element types a buffer can hold, by name: what a golden comparison is told the bytes
//! are (`--dtype f16`), and what each [`crate::Element`] type is.

use std::fmt;
use std::str::FromStr;

/// The type of a buffer's elements, named as on a command line (`f16`, `bf16`, `i32`, ...).
///
/// ```
/// use pto_sim::Dtype;
///
/// let d: Dtype = "bf16".parse()?;
/// assert_eq!((d, d.size(), d.to_string()), (Dtype::Bf16, 2, "bf16".to_string()));
/// assert!("fp16".parse::<Dtype>().unwrap_err().to_string().contains("f16, bf16"));
/// # Ok::<(), pto_sim::UnknownDtype>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Dtype {
    /// IEEE 754 binary32.
    F32,
    /// IEEE 754 binary16 (`half::f16`).
    F16,
    /// bfloat16: binary32's exponent, 8 bits of significand (`half::bf16`).
    Bf16,
    /// IEEE 754 binary64.
    F64,
    /// Signed 8-bit integer.
    I8,
    /// Signed 16-bit integer.
    I16,
    /// Signed 32-bit integer.
    I32,
    /// Signed 64-bit integer.
    I64,
    /// Unsigned 8-bit integer.
    U8,
    /// Unsigned 16-bit integer.
    U16,
    /// Unsigned 32-bit integer.
    U32,
    /// Unsigned 64-bit integer.
    U64,
}

impl Dtype {
    /// Every dtype, in the order error messages list them.
    pub const ALL: [Dtype; 12] = [
        Dtype::F32,
        Dtype::F16,
        Dtype::Bf16,
        Dtype::F64,
        Dtype::I8,
        Dtype::I16,
        Dtype::I32,
        Dtype::I64,
        Dtype::U8,
        Dtype::U16,
        Dtype::U32,
        Dtype::U64,
    ];

    /// Its lowercase name, as [`FromStr`] takes it and [`fmt::Display`] prints it.
    pub const fn name(self) -> &'static str {
        match self {
            Dtype::F32 => "f32",
            Dtype::F16 => "f16",
            Dtype::Bf16 => "bf16",
            Dtype::F64 => "f64",
            Dtype::I8 => "i8",
            Dtype::I16 => "i16",
            Dtype::I32 => "i32",
            Dtype::I64 => "i64",
            Dtype::U8 => "u8",
            Dtype::U16 => "u16",
            Dtype::U32 => "u32",
            Dtype::U64 => "u64",
        }
    }

    /// Bytes per element.
    pub const fn size(self) -> usize {
        match self {
            Dtype::I8 | Dtype::U8 => 1,
            Dtype::F16 | Dtype::Bf16 | Dtype::I16 | Dtype::U16 => 2,
            Dtype::F32 | Dtype::I32 | Dtype::U32 => 4,
            Dtype::F64 | Dtype::I64 | Dtype::U64 => 8,
        }
    }

    /// Whether it is a floating-point type.
    pub const fn is_float(self) -> bool {
        matches!(self, Dtype::F32 | Dtype::F16 | Dtype::Bf16 | Dtype::F64)
    }

    /// Whether it is a signed integer type.
    pub const fn is_signed_int(self) -> bool {
        matches!(self, Dtype::I8 | Dtype::I16 | Dtype::I32 | Dtype::I64)
    }
}

impl fmt::Display for Dtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A dtype name [`Dtype`]'s [`FromStr`] does not know.
#[derive(Clone, PartialEq, Eq, Debug, thiserror::Error)]
#[error("unknown dtype `{name}`: use one of {}", ValidNames)]
pub struct UnknownDtype {
    /// The name given.
    pub name: String,
}

/// The valid names, comma separated.
struct ValidNames;

impl fmt::Display for ValidNames {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in Dtype::ALL.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(d.name())?;
        }
        Ok(())
    }
}

impl FromStr for Dtype {
    type Err = UnknownDtype;

    /// The dtype of a lowercase name (`f32`, `f16`, `bf16`, `f64`, `i8` .. `u64`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Dtype::ALL
            .into_iter()
            .find(|d| d.name() == s)
            .ok_or_else(|| UnknownDtype { name: s.into() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_parses_back_to_its_dtype_and_serializes_as_itself() {
        for d in Dtype::ALL {
            assert_eq!(d.name().parse::<Dtype>(), Ok(d));
            assert_eq!(d.to_string(), d.name());
            assert_eq!(
                serde_json::to_string(&d).unwrap(),
                format!("\"{}\"", d.name())
            );
        }
    }

    #[test]
    fn sizes_are_the_element_widths() {
        let sizes = Dtype::ALL.map(Dtype::size);
        assert_eq!(sizes, [4, 2, 2, 8, 1, 2, 4, 8, 1, 2, 4, 8]);
    }

    #[test]
    fn an_unknown_name_lists_the_valid_ones() {
        let e = "F16".parse::<Dtype>().unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown dtype `F16`: use one of f32, f16, bf16, f64, i8, i16, i32, i64, u8, u16, \
             u32, u64"
        );
    }
}
