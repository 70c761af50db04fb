//! The element types simulated memory reads and writes as slices: their size and their
//! little-endian encoding, the one thing the memory and the golden comparison need to know.

use half::{bf16, f16};

use crate::dtype::Dtype;

mod sealed {
    /// Only this crate implements [`super::Element`]: the memory's cell packing relies on
    /// every element being 1, 2, 4 or 8 bytes.
    pub trait Sealed {}
}

/// A type device memory holds as a slice element: `u8`, `i8`, `u16`, `i16`, `u32`, `i32`,
/// `u64`, `i64`, [`half::f16`], [`half::bf16`], `f32` and `f64`. Sealed: its size is 1, 2, 4
/// or 8 bytes and its memory alignment its size.
///
/// ```
/// use pto_sim::{Dtype, Element, half::f16};
///
/// assert_eq!((f16::SIZE, f16::DTYPE), (2, Dtype::F16));
/// let x = f16::from_f32(1.5);
/// assert_eq!(x.encode(), 0x3e00);
/// assert_eq!(f16::decode(0x3e00), x);
/// assert_eq!((-1i8).encode(), 0xff, "only the element's own bytes");
/// ```
pub trait Element:
    Copy + Default + PartialEq + std::fmt::Debug + Send + Sync + 'static + sealed::Sealed
{
    /// Its dtype.
    const DTYPE: Dtype;
    /// Bytes per element (1, 2, 4 or 8): also its alignment in device memory.
    const SIZE: usize = Self::DTYPE.size();

    /// Its bytes in memory order, as the low [`Element::SIZE`] bytes of a little-endian
    /// `u64`; the other bytes are 0.
    fn encode(self) -> u64;

    /// The element whose little-endian bytes are the low [`Element::SIZE`] bytes of `bits`
    /// (the others are ignored).
    fn decode(bits: u64) -> Self;
}

/// Implements [`Element`] for a type whose bits are the unsigned integer `$bits`, converted
/// by `$to` and `$from`.
macro_rules! element {
    ($t:ty, $dtype:ident, $bits:ty, $to:expr, $from:expr) => {
        impl sealed::Sealed for $t {}

        impl Element for $t {
            const DTYPE: Dtype = Dtype::$dtype;

            #[inline]
            fn encode(self) -> u64 {
                let to: fn($t) -> $bits = $to;
                u64::from(to(self))
            }

            #[inline]
            fn decode(bits: u64) -> Self {
                let from: fn($bits) -> $t = $from;
                from(bits as $bits)
            }
        }
    };
}

element!(u8, U8, u8, |v| v, |b| b);
element!(i8, I8, u8, |v| v as u8, |b| b as i8);
element!(u16, U16, u16, |v| v, |b| b);
element!(i16, I16, u16, |v| v as u16, |b| b as i16);
element!(u32, U32, u32, |v| v, |b| b);
element!(i32, I32, u32, |v| v as u32, |b| b as i32);
element!(u64, U64, u64, |v| v, |b| b);
element!(i64, I64, u64, |v| v as u64, |b| b as i64);
element!(f16, F16, u16, f16::to_bits, f16::from_bits);
element!(bf16, Bf16, u16, bf16::to_bits, bf16::from_bits);
element!(f32, F32, u32, f32::to_bits, f32::from_bits);
element!(f64, F64, u64, f64::to_bits, f64::from_bits);

#[cfg(test)]
mod tests {
    use super::*;

    /// `v` survives encode and decode, and its encoding is its little-endian bytes.
    fn round_trips<T: Element>(v: T, le_bytes: &[u8]) {
        assert_eq!(T::SIZE, le_bytes.len(), "{:?}", T::DTYPE);
        let bits = v.encode();
        let mut want = [0u8; 8];
        want[..T::SIZE].copy_from_slice(le_bytes);
        assert_eq!(bits.to_le_bytes(), want, "{v:?} as {:?}", T::DTYPE);
        assert_eq!(T::decode(bits), v);
        if T::SIZE < 8 {
            let above = !0u64 << (8 * T::SIZE);
            assert_eq!(T::decode(bits | above), v, "bytes above it are ignored");
        }
    }

    #[test]
    fn every_element_encodes_as_its_little_endian_bytes() {
        round_trips(0xabu8, &[0xab]);
        round_trips(-2i8, &(-2i8).to_le_bytes());
        round_trips(0x1234u16, &0x1234u16.to_le_bytes());
        round_trips(i16::MIN, &i16::MIN.to_le_bytes());
        round_trips(0xdead_beefu32, &0xdead_beefu32.to_le_bytes());
        round_trips(-7i32, &(-7i32).to_le_bytes());
        round_trips(u64::MAX - 1, &(u64::MAX - 1).to_le_bytes());
        round_trips(i64::MIN, &i64::MIN.to_le_bytes());
        let h = f16::from_f32(-0.333);
        round_trips(h, &h.to_le_bytes());
        let b = bf16::from_f32(3.0e38);
        round_trips(b, &b.to_le_bytes());
        round_trips(1.25f32, &1.25f32.to_le_bytes());
        round_trips(-1e-300f64, &(-1e-300f64).to_le_bytes());
    }

    #[test]
    fn sizes_match_the_rust_types() {
        assert_eq!(f16::SIZE, size_of::<f16>());
        assert_eq!(bf16::SIZE, size_of::<bf16>());
        assert_eq!(i64::SIZE, size_of::<i64>());
        assert_eq!(u8::SIZE, size_of::<u8>());
    }
}
