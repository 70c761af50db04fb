//! The element types a buffer can hold, by name: what a golden comparison is told the bytes
//! are (`--dtype f16`), and what each [`crate::Element`] type is. The types are the core's
//! ([`pto_runtime_core::Dtype`]: a tensor argument's element type, the code kernels read).

pub use pto_runtime_core::{Dtype, UnknownDtype};

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
    fn an_unknown_name_lists_the_valid_ones() {
        let e = "F16".parse::<Dtype>().unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown dtype `F16`: use one of f32, f16, bf16, f64, i8, i16, i32, i64, u8, u16, \
             u32, u64"
        );
    }
}
