//! Figures and counts as people read them: three significant digits (a benchmark's noise
//! is larger than that), plurals that agree with their count, and rank lists in words.

/// `x` to three significant digits, without an exponent: `812`, `81.2`, `0.812`, `81200`.
pub fn sig3(x: f64) -> String {
    if !x.is_finite() || x == 0.0 {
        return format!("{x}");
    }
    let digits = x.abs().log10().floor() as i32;
    let decimals = (2 - digits).max(0) as usize;
    let scale = 10f64.powi(digits - 2);
    let rounded = if digits > 2 {
        (x / scale).round() * scale
    } else {
        x
    };
    format!("{rounded:.decimals$}")
}

/// A figure with a unit prefix, three significant digits: `980`, `1.23 k`, `45.6 M` (the
/// unit follows after a space: `1.23 M tasks/s`).
pub fn si(x: f64) -> String {
    let (v, prefix) = by_thousands(x, ["", " k", " M", " G"]);
    format!("{}{prefix}", sig3(v))
}

/// A time of `ns` nanoseconds in the unit that reads best, three significant digits:
/// `812 ns`, `4.20 µs`, `17.3 ms`, `2.50 s`.
pub fn nanos(ns: f64) -> String {
    let (v, unit) = by_thousands(ns, ["ns", "µs", "ms", "s"]);
    format!("{} {unit}", sig3(v))
}

/// `x` in the largest of the steps 1, 10^3, 10^6 and 10^9 that its size reaches, with the
/// name `names` gives that step (in that order).
fn by_thousands(x: f64, names: [&'static str; 4]) -> (f64, &'static str) {
    match x.abs() {
        a if a >= 1e9 => (x / 1e9, names[3]),
        a if a >= 1e6 => (x / 1e6, names[2]),
        a if a >= 1e3 => (x / 1e3, names[1]),
        _ => (x, names[0]),
    }
}

/// `n` and `noun`, in the plural unless `n` is 1: `1 rank`, `3 ranks` (`noun` takes an `s`).
pub fn count(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// Ranks in words: `rank 2`, `ranks 1 and 3`, `ranks 0, 1 and 5`.
pub fn ranks(list: &[u32]) -> String {
    match list {
        [] => "no rank".into(),
        [r] => format!("rank {r}"),
        [init @ .., last] => {
            let init: Vec<String> = init.iter().map(u32::to_string).collect();
            format!("ranks {} and {last}", init.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_significant_digits_at_every_scale() {
        let cases = [
            (812.34, "812"),
            (81.234, "81.2"),
            (0.81234, "0.812"),
            (81234.0, "81200"),
            (1.0, "1.00"),
            (999.6, "1000"),
        ];
        for (x, want) in cases {
            assert_eq!(sig3(x), want, "{x}");
        }
        assert_eq!(si(1_234_567.0), "1.23 M");
        assert_eq!(si(980.0), "980");
        assert_eq!(nanos(812.0), "812 ns");
        assert_eq!(nanos(4_200_000.0), "4.20 ms");
        assert_eq!(nanos(2.5e9), "2.50 s");
    }

    #[test]
    fn counts_and_rank_lists_read_as_words() {
        assert_eq!(count(1, "rank"), "1 rank");
        assert_eq!(count(0, "rank"), "0 ranks");
        assert_eq!(count(3, "scheduler"), "3 schedulers");
        assert_eq!(ranks(&[2]), "rank 2");
        assert_eq!(ranks(&[1, 3]), "ranks 1 and 3");
        assert_eq!(ranks(&[0, 1, 5]), "ranks 0, 1 and 5");
    }
}
