//! Value parsers for the numeric flags a range alone cannot describe: a task window (a power
//! of two), a 64-bit pattern given signed or unsigned (a seed, an orchestration argument).

use pto_host::orch_config::{TASK_WINDOW_MAX, TASK_WINDOW_MIN};

/// `run --task-window`: a power of two from [`TASK_WINDOW_MIN`] to [`TASK_WINDOW_MAX`], as
/// the runtime's rings index their slots by mask.
pub fn task_window(s: &str) -> Result<u32, String> {
    power_of_two(s, TASK_WINDOW_MIN, TASK_WINDOW_MAX)
}

/// `bench --task-window`: a power of two from 2 (the runtime's least) to 2^20.
pub fn bench_task_window(s: &str) -> Result<u32, String> {
    power_of_two(s, 2, 1 << 20)
}

/// A power of two from `min` to `max`; a value between two in range is told both.
fn power_of_two(s: &str, min: u32, max: u32) -> Result<u32, String> {
    let want = format!(
        "want a power of two from {min} to {max} (the runtime indexes a ring's slots by mask)"
    );
    let n: u64 = s.parse().map_err(|_| want.clone())?;
    if !(u64::from(min)..=u64::from(max)).contains(&n) {
        return Err(format!("{n} is not in {min}..={max}: {want}"));
    }
    if !n.is_power_of_two() {
        return Err(format!(
            "{n} is not a power of two: {want}, e.g. {} or {}",
            prev_power_of_two(n),
            n.next_power_of_two()
        ));
    }
    Ok(n as u32)
}

fn prev_power_of_two(n: u64) -> u64 {
    1 << (63 - n.leading_zeros())
}

/// A 64-bit pattern: `0` to `2^64 - 1`, `0x` hex, or a negative decimal from `-2^63`, taken
/// as its two's complement (`-1` is `0xffffffffffffffff`).
pub fn bits64(s: &str) -> Result<u64, String> {
    let parsed = if let Some(h) = s.strip_prefix("0x") {
        u64::from_str_radix(h, 16).ok()
    } else if s.starts_with('-') {
        s.parse::<i64>().ok().map(|v| v as u64)
    } else {
        s.parse::<u64>().ok()
    };
    parsed.ok_or_else(|| {
        format!(
            "want a 64-bit number: 0 to {}, 0x hex, or -{} to -1 (its two's complement)",
            u64::MAX,
            1u64 << 63
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_window_is_a_power_of_two_in_range_and_a_near_miss_names_its_neighbours() {
        assert_eq!(task_window("4"), Ok(4));
        assert_eq!(task_window("1048576"), Ok(1 << 20));
        let e = task_window("1000").unwrap_err();
        assert!(
            e.contains("power of two") && e.contains("e.g. 512 or 1024"),
            "{e}"
        );
        assert!(task_window("2").is_err());
        assert!(task_window("2097152").is_err());
        assert!(task_window("-4").is_err());
        assert!(task_window(&u64::MAX.to_string()).is_err());
        assert_eq!(bench_task_window("2"), Ok(2));
        assert!(bench_task_window("24").unwrap_err().contains("16 or 32"));
        assert!(
            task_window("2")
                .unwrap_err()
                .contains("is not in 4..=1048576")
        );
    }

    #[test]
    fn a_64_bit_pattern_takes_either_sign_and_refuses_what_does_not_fit() {
        assert_eq!(bits64("-1"), Ok(u64::MAX));
        assert_eq!(bits64("-256"), Ok(0xffff_ffff_ffff_ff00));
        assert_eq!(bits64("-9223372036854775808"), Ok(1 << 63));
        assert_eq!(bits64("18446744073709551615"), Ok(u64::MAX));
        assert_eq!(bits64("0x10"), Ok(16));
        for bad in ["-9223372036854775809", "18446744073709551616", "x", "", "-"] {
            assert!(bits64(bad).is_err(), "{bad}");
        }
    }
}
