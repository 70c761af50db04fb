//! Element types: what a tensor argument's elements are, so a kernel can read it (the
//! descriptor's `dtype` byte), a golden comparison can decode it (`--dtype f16`), and a
//! tensor whose element size disagrees with its type is refused at submit.
#![forbid(unsafe_code)]

use core::fmt;
use core::str::FromStr;

/// The type of a tensor's elements, named as on a command line (`f16`, `bf16`, `i32`, ...).
/// Its discriminant is the code C and kernels see (`PTO_DTYPE_*`); 0 means untyped.
///
/// cbindgen:rename-all=QualifiedScreamingSnakeCase
///
/// ```
/// use pto_runtime_core::Dtype;
///
/// let d: Dtype = "bf16".parse()?;
/// assert_eq!((d, d.size(), d.code()), (Dtype::Bf16, 2, 3));
/// assert_eq!(Dtype::from_code(3), Some(d));
/// # Ok::<(), pto_runtime_core::UnknownDtype>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
#[repr(u8)]
pub enum Dtype {
    /// IEEE 754 binary32.
    F32 = 1,
    /// IEEE 754 binary16.
    F16 = 2,
    /// bfloat16: binary32's exponent, 8 bits of significand.
    Bf16 = 3,
    /// IEEE 754 binary64.
    F64 = 4,
    /// Signed 8-bit integer.
    I8 = 5,
    /// Signed 16-bit integer.
    I16 = 6,
    /// Signed 32-bit integer.
    I32 = 7,
    /// Signed 64-bit integer.
    I64 = 8,
    /// Unsigned 8-bit integer.
    U8 = 9,
    /// Unsigned 16-bit integer.
    U16 = 10,
    /// Unsigned 32-bit integer.
    U32 = 11,
    /// Unsigned 64-bit integer.
    U64 = 12,
}

impl Dtype {
    /// Every dtype, in the order of their codes (and of the names error messages list).
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

    /// The code C and kernels see (1 to 12).
    pub const fn code(self) -> u8 {
        self as u8
    }

    /// The dtype of `code`, or `None` for 0 (untyped) and codes no dtype has.
    pub const fn from_code(code: u8) -> Option<Dtype> {
        if code == 0 || code as usize > Self::ALL.len() {
            None
        } else {
            Some(Self::ALL[code as usize - 1])
        }
    }

    /// Whether a tensor of `elem`-byte elements may be of `dtype`: any size when it has
    /// none, else its size (one table load, no branch: submit asks for every tensor).
    #[inline(always)]
    pub(crate) fn fits(dtype: Option<Dtype>, elem: u32) -> bool {
        /// Bytes per element by code; 0 (untyped) fits any size.
        const SIZES: [u8; 16] = [0, 4, 2, 2, 8, 1, 2, 4, 8, 1, 2, 4, 8, 0, 0, 0];
        let size = SIZES[Dtype::code_of(dtype) as usize & 15] as u32;
        (size == 0) | (size == elem)
    }

    /// The code of an optional dtype: 0 for `None`.
    pub const fn code_of(dtype: Option<Dtype>) -> u8 {
        match dtype {
            Some(d) => d.code(),
            None => 0,
        }
    }
}

impl fmt::Display for Dtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A dtype name [`Dtype`]'s [`FromStr`] does not know (its first 32 bytes kept).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct UnknownDtype {
    name: heapless::String<32>,
}

impl UnknownDtype {
    /// The name given (its first 32 bytes).
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl fmt::Display for UnknownDtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown dtype `{}`: use one of ", self.name)?;
        for (i, d) in Dtype::ALL.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(d.name())?;
        }
        Ok(())
    }
}

impl core::error::Error for UnknownDtype {}

impl FromStr for Dtype {
    type Err = UnknownDtype;

    /// The dtype of a lowercase name (`f32`, `f16`, `bf16`, `f64`, `i8` .. `u64`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Dtype::ALL
            .into_iter()
            .find(|d| d.name() == s)
            .ok_or_else(|| {
                let mut name = heapless::String::new();
                for c in s.chars() {
                    if name.push(c).is_err() {
                        break;
                    }
                }
                UnknownDtype { name }
            })
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn codes_and_names_go_both_ways() {
        for (i, d) in Dtype::ALL.into_iter().enumerate() {
            assert_eq!(d.code() as usize, i + 1);
            assert_eq!(Dtype::from_code(d.code()), Some(d));
            assert_eq!(d.name().parse::<Dtype>(), Ok(d));
        }
        assert_eq!(Dtype::from_code(0), None);
        assert_eq!(Dtype::from_code(13), None);
        assert_eq!(Dtype::code_of(None), 0);
        assert_eq!(core::mem::size_of::<Option<Dtype>>(), 1);
    }

    #[test]
    fn sizes_are_the_element_widths() {
        let sizes = Dtype::ALL.map(Dtype::size);
        assert_eq!(sizes, [4, 2, 2, 8, 1, 2, 4, 8, 1, 2, 4, 8]);
        for d in Dtype::ALL {
            for elem in 0..=16 {
                assert_eq!(
                    Dtype::fits(Some(d), elem),
                    d.size() == elem as usize,
                    "{d} {elem}"
                );
            }
        }
        assert!(Dtype::fits(None, 3));
    }

    #[test]
    fn an_unknown_name_keeps_its_start() {
        let long = "x".repeat(40);
        let e = long.parse::<Dtype>().unwrap_err();
        assert_eq!(e.name().len(), 32);
    }
}
