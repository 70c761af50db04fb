//! How the numbers of a comparison print (errors and tolerances, briefly) and serialize
//! (non-finite ones by name, as JSON has no number for them).

/// `x` as a JSON number when finite, else as `"NaN"`, `"inf"` or `"-inf"` (JSON has no
/// number for them).
pub(crate) fn serialize_f64<S: serde::Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
    if x.is_finite() {
        s.serialize_f64(*x)
    } else {
        s.serialize_str(&brief(*x))
    }
}

/// `x` to three significant digits, trailing zeros dropped: plainly from 0.1 to 9990
/// (`0.25`, `1230`), with an exponent outside (`1e-2`, `1.3e-3`, `4e6`); `NaN`, `inf`,
/// `-inf`.
pub(crate) fn brief(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.into();
    }
    if x == 0.0 {
        return "0".into();
    }
    let sci = format!("{x:.2e}");
    let Some((mantissa, exp)) = sci.split_once('e') else {
        return sci;
    };
    let mantissa = mantissa.trim_end_matches('0').trim_end_matches('.');
    match exp.parse::<i32>() {
        Ok(e) if (-1..=3).contains(&e) => {
            let rounded: f64 = format!("{mantissa}e{e}").parse().unwrap_or(x);
            format!("{rounded}")
        }
        _ => format!("{mantissa}e{exp}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brief_numbers_keep_three_digits() {
        let cases = [
            (0.0, "0"),
            (1e-3, "1e-3"),
            (0.00134, "1.34e-3"),
            (0.002, "2e-3"),
            (0.01, "1e-2"),
            (0.0195, "1.95e-2"),
            (0.1, "0.1"),
            (0.25, "0.25"),
            (1234.5, "1230"),
            (123456.0, "1.23e5"),
            (1e-9, "1e-9"),
            (f64::NEG_INFINITY, "-inf"),
        ];
        for (x, want) in cases {
            assert_eq!(brief(x), want, "{x}");
        }
    }
}
