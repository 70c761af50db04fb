//! Golden comparison: exact passes, a perturbed element found by index, the NaN and infinity
//! rules, half precision within its default tolerance, integer exactness at the extremes,
//! length errors, and (proptest) the byte and slice paths agreeing.

use half::{bf16, f16};
use proptest::prelude::*;

use super::inputs::compare_elements;
use super::*;
use crate::dtype::Dtype;
use crate::element::Element;

/// The little-endian bytes of `values`.
fn bytes<T: Element>(values: &[T]) -> Vec<u8> {
    values
        .iter()
        .flat_map(|v| v.encode().to_le_bytes()[..T::SIZE].to_vec())
        .collect()
}

fn f16s(values: &[f32]) -> Vec<f16> {
    values.iter().map(|&x| f16::from_f32(x)).collect()
}

#[test]
fn identical_buffers_pass_with_no_error() {
    let v: Vec<f32> = (0..100).map(|i| i as f32 * 0.37 - 5.0).collect();
    let c = compare_bytes(Dtype::F32, &bytes(&v), &bytes(&v), Tolerance::EXACT).unwrap();
    assert!(c.passed());
    assert_eq!((c.elements, c.outside, c.first_outside), (100, 0, None));
    assert_eq!(
        c.max_abs_error,
        Some(ErrorAt {
            index: 0,
            error: 0.0
        })
    );
    assert_eq!(
        c.to_string(),
        "all 100 f32 elements within rtol 0 atol 0; largest abs error 0 at 0, largest rel \
         error 0 at 0"
    );
}

#[test]
fn a_perturbed_element_is_found_with_its_index_and_values() {
    let want: Vec<f16> = f16s(
        &(0..4096)
            .map(|i| 1.0 + i as f32 / 4096.0)
            .collect::<Vec<_>>(),
    );
    let mut got = want.clone();
    got[17] = f16::from_f32(want[17].to_f32() + 0.01);
    got[99] = f16::from_f32(want[99].to_f32() - 0.02);
    let c = expect_close(&got, &want, Tolerance::for_type::<f16>()).unwrap_err();
    let CloseError::Outside(c) = c else {
        panic!("not an Outside error: {c:?}");
    };
    assert_eq!(c.outside, 2);
    let first = c.first_outside.unwrap();
    assert_eq!((first.index, first.actual.dtype()), (17, Dtype::F16));
    assert_eq!(first.expected.to_f64(), want[17].to_f64());
    assert_eq!(
        c.max_abs_error.unwrap().index,
        99,
        "the larger perturbation"
    );
    let text = c.to_string();
    assert!(
        text.starts_with(
            "2 of 4096 f16 elements outside rtol 1e-3 atol 1e-3; first at index 17: 1.014 \
             against 1.004 (abs 9.77e-3, rel 9.73e-3); largest abs error 1.95e-2 at 99"
        ),
        "{text}"
    );
}

#[test]
fn nan_passes_only_against_nan_and_infinity_only_against_itself() {
    let tol = Tolerance::new(1.0, 1.0);
    let want = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 1.0];
    assert!(
        expect_close(&want, &want, tol).is_ok(),
        "each matches itself"
    );
    let cases: [([f32; 1], [f32; 1]); 5] = [
        ([1.0], [f32::NAN]),
        ([f32::NAN], [1.0]),
        ([f32::INFINITY], [f32::NEG_INFINITY]),
        ([f32::MAX], [f32::INFINITY]),
        ([f32::INFINITY], [f32::MAX]),
    ];
    for (got, want) in cases {
        let Err(CloseError::Outside(c)) = expect_close(&got, &want, tol) else {
            panic!("{got:?} passed against {want:?}");
        };
        let m = c.first_outside.unwrap();
        assert_eq!((m.abs_error, m.rel_error), (f64::INFINITY, f64::INFINITY));
    }
    let json =
        serde_json::to_value(compare_elements(&[f32::NAN], &[0.0], Tolerance::EXACT).unwrap())
            .unwrap();
    assert_eq!(json["first_outside"]["actual"], "NaN");
    assert_eq!(json["max_abs_error"]["error"], "inf");
}

#[test]
fn half_precision_rounding_stays_within_the_default_tolerances() {
    // Values computed in f32, stored in f16 or bf16, compared with the f32 values rounded
    // the same way and with the exact ones.
    let exact: Vec<f32> = (1..=1000).map(|i| (i as f32).sqrt() * 0.731).collect();
    let h: Vec<f16> = f16s(&exact);
    let b: Vec<bf16> = exact.iter().map(|&x| bf16::from_f32(x)).collect();
    assert!(expect_close(&h, &h, Tolerance::for_type::<f16>()).is_ok());
    let from_h: Vec<f32> = h.iter().map(|x| x.to_f32()).collect();
    let from_b: Vec<f32> = b.iter().map(|x| x.to_f32()).collect();
    expect_close(&from_h, &exact, Tolerance::for_type::<f16>()).unwrap();
    expect_close(&from_b, &exact, Tolerance::for_type::<bf16>()).unwrap();
    assert!(
        expect_close(&from_b, &exact, Tolerance::for_type::<f16>()).is_err(),
        "bf16's rounding is outside f16's tolerance"
    );
}

#[test]
fn integers_are_exact_at_the_extremes_of_i64_and_u64() {
    let c = compare_bytes(
        Dtype::I64,
        &bytes(&[i64::MAX - 1, i64::MIN, 0]),
        &bytes(&[i64::MAX, i64::MIN, 0]),
        Tolerance::for_type::<i64>(),
    )
    .unwrap();
    assert_eq!(
        c.outside, 1,
        "MAX - 1 is not MAX, though both round to 2^63"
    );
    let m = c.first_outside.unwrap();
    assert_eq!(
        (m.index, m.actual.to_string(), m.expected.to_string()),
        (
            0,
            "9223372036854775806".into(),
            "9223372036854775807".into()
        )
    );
    assert!(expect_close(&[u64::MAX], &[u64::MAX - 1], Tolerance::EXACT).is_err());
    assert!(expect_close(&[u64::MAX], &[u64::MAX], Tolerance::EXACT).is_ok());
    let loose = Tolerance::new(0.0, 2.0);
    assert!(expect_close(&[-3i8, 5], &[-1, 7], loose).is_ok(), "atol 2");
    assert!(expect_close(&[-4i8], &[-1], loose).is_err());
}

#[test]
fn lengths_that_do_not_fit_are_errors_that_say_what_to_check() {
    let tol = Tolerance::default_for(Dtype::F16);
    assert_eq!(
        compare_bytes(Dtype::F16, &[0; 5], &[0; 4], tol),
        Err(CompareError::Ragged {
            what: "actual",
            len: 5,
            dtype: Dtype::F16
        })
    );
    let e = compare_bytes(Dtype::F32, &[0; 8], &[0; 6], tol).unwrap_err();
    assert_eq!(
        e.to_string(),
        "the expected data is 6 bytes, not a whole number of f32 elements (4 bytes each): \
         check the dtype and the data"
    );
    let e = compare_bytes(Dtype::F16, &[0; 4], &[0; 6], tol).unwrap_err();
    assert_eq!(
        e,
        CompareError::ExpectedLonger {
            dtype: Dtype::F16,
            expected: 3,
            actual: 2
        }
    );
    assert_eq!(
        compare_bytes(Dtype::U8, &[1], &[], tol),
        Err(CompareError::NothingExpected)
    );
    assert_eq!(
        expect_close(&[1u32, 2], &[1], Tolerance::EXACT),
        Err(CloseError::Compare(CompareError::LengthsDiffer {
            actual: 2,
            expected: 1
        }))
    );
    for bad in [Tolerance::new(-1e-3, 0.0), Tolerance::new(0.0, f64::NAN)] {
        assert!(
            matches!(
                compare_bytes(Dtype::F16, &[0; 2], &[0; 2], bad),
                Err(CompareError::BadTolerance { .. })
            ),
            "{bad}"
        );
    }
}

#[test]
fn only_the_first_expected_len_bytes_of_the_output_are_compared() {
    let got = bytes(&[1u16, 2, 3, 999]);
    let c = compare_bytes(Dtype::U16, &got, &bytes(&[1u16, 2, 3]), Tolerance::EXACT).unwrap();
    assert!(c.passed());
    assert_eq!(c.elements, 3);
}

#[test]
fn a_comparison_serializes_with_its_dtype_by_name() {
    let c = compare_elements(&f16s(&[1.0, 2.5]), &f16s(&[1.0, 2.0]), Tolerance::EXACT).unwrap();
    let json = serde_json::to_value(&c).unwrap();
    assert_eq!(json["dtype"], "f16");
    assert_eq!(json["elements"], 2);
    assert_eq!(json["outside"], 1);
    assert_eq!(json["first_outside"]["index"], 1);
    assert_eq!(json["first_outside"]["actual"], 2.5);
    assert_eq!(json["tolerance"]["rtol"], 0.0);
}

proptest! {
    #[test]
    fn bytes_and_slices_agree_and_any_buffer_matches_itself(
        bits in prop::collection::vec(any::<u16>(), 1..64),
        rtol in 0.0f64..0.1,
        atol in 0.0f64..0.1,
    ) {
        let tol = Tolerance::new(rtol, atol);
        let h: Vec<f16> = bits.iter().map(|&b| f16::from_bits(b)).collect();
        let same = compare_bytes(Dtype::F16, &bytes(&h), &bytes(&h), tol).unwrap();
        prop_assert!(same.passed(), "{same}");
        let shifted: Vec<f16> = h.iter().rev().copied().collect();
        let by_bytes = compare_bytes(Dtype::F16, &bytes(&shifted), &bytes(&h), tol).unwrap();
        let by_slices = compare_elements(&shifted, &h, tol).unwrap();
        prop_assert_eq!(by_bytes, by_slices);
    }

    #[test]
    fn one_perturbed_element_is_the_one_found(
        values in prop::collection::vec(-1e6f32..1e6, 1..200),
        at in any::<prop::sample::Index>(),
        push in 1e-3f32..1.0,
    ) {
        let i = at.index(values.len());
        let mut got = values.clone();
        got[i] += values[i].abs().max(1.0) * push;
        let tol = Tolerance::for_type::<f32>();
        let Err(CloseError::Outside(c)) = expect_close(&got, &values, tol) else {
            return Err(TestCaseError::fail(format!("element {i} pushed by {push} passed")));
        };
        prop_assert_eq!(c.outside, 1);
        prop_assert_eq!(c.first_outside.unwrap().index, i);
        prop_assert_eq!(c.max_abs_error.unwrap().index, i);
    }

    #[test]
    fn integers_pass_exactly_when_equal(a in any::<i64>(), b in any::<i64>()) {
        let c = compare_elements(&[a], &[b], Tolerance::EXACT).unwrap();
        prop_assert_eq!(c.passed(), a == b);
    }
}
