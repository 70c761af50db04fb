//! A task record's stamps in 32 bits each: clock ticks after the task's submit stamp, exact up
//! to 2^27 ticks and within one part in 2^26 beyond, so a record fits one cache line.
//!
//! The code is a small float: below 2^27 the offset itself; above, a shift in the top five
//! bits and the offset's leading 27 bits (rounded down) in the rest. Codes keep the order of
//! the offsets they stand for, so the earliest or latest of two stamps is the smaller or
//! larger code. 0 stands for "the event did not happen"; an offset is stored plus one.
#![forbid(unsafe_code)]

/// Bits of an offset kept exactly.
const MANTISSA_BITS: u32 = 27;
const MANTISSA: u64 = (1 << MANTISSA_BITS) - 1;
/// The largest shift the five top bits hold.
const MAX_SHIFT: u32 = 31;

/// The code of no event.
pub(crate) const NONE: u32 = 0;

/// The code of the stamp `now`, `submit` being the task's submit stamp. A stamp before the
/// submit (a lap clock cut a little before the event; an offset past 2^63 ticks) is coded as
/// the submit itself; an offset past 2^58 ticks (centuries at any real clock) as the largest
/// code.
#[inline(always)]
pub(crate) fn encode(now: u64, submit: u64) -> u32 {
    // A stamp before the submit wraps to a huge offset and takes the slow path.
    let off = now.wrapping_sub(submit);
    if off < MANTISSA {
        off as u32 + 1
    } else {
        encode_wide(off)
    }
}

#[cold]
fn encode_wide(off: u64) -> u32 {
    if off > u64::MAX / 2 {
        return 1;
    }
    let v = off + 1;
    let shift = u64::BITS - v.leading_zeros() - MANTISSA_BITS;
    if shift > MAX_SHIFT {
        return u32::MAX;
    }
    (shift << MANTISSA_BITS) | (v >> shift) as u32
}

/// The stamp `code` stands for, `submit` being the task's submit stamp (0: no event).
pub(crate) fn decode(code: u32, submit: u64) -> u64 {
    if code == NONE {
        return 0;
    }
    let shift = code >> MANTISSA_BITS;
    let v = (u64::from(code) & MANTISSA) << shift;
    submit.saturating_add(v - 1)
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn small_offsets_are_exact_and_zero_is_no_event() {
        for off in [0, 1, 2, 1000, MANTISSA - 1] {
            let code = encode(500 + off, 500);
            assert_ne!(code, NONE);
            assert_eq!(decode(code, 500), 500 + off);
        }
        assert_eq!(decode(NONE, 500), 0);
    }

    #[test]
    fn a_stamp_before_the_submit_reads_as_the_submit() {
        assert_eq!(decode(encode(90, 100), 100), 100);
    }

    #[test]
    fn offsets_past_the_widest_code_saturate() {
        assert_eq!(encode(1 << 62, 0), u32::MAX);
        assert_eq!(encode(1 << 60, 0), u32::MAX);
        let top = decode(u32::MAX, 0);
        assert!(top >= MANTISSA << MAX_SHIFT >> 1, "{top}");
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: if cfg!(miri) { 4 } else { 256 },
            // Under miri there is no file system to keep failing cases in.
            failure_persistence: if cfg!(miri) {
                None
            } else {
                ProptestConfig::default().failure_persistence
            },
            ..ProptestConfig::default()
        })]

        #[test]
        fn decoding_rounds_down_by_at_most_one_part_in_2_pow_26(
            submit in 0u64..1 << 62, off in 0u64..1 << 57,
        ) {
            let now = submit + off;
            let back = decode(encode(now, submit), submit);
            prop_assert!(back <= now);
            prop_assert!(now - back <= (off + 1) >> 26, "{now} read back as {back}");
        }

        #[test]
        fn codes_keep_the_order_of_their_stamps(
            submit in 0u64..1 << 40, a in 0u64..1 << 57, b in 0u64..1 << 57,
        ) {
            let (ca, cb) = (encode(submit + a, submit), encode(submit + b, submit));
            prop_assert!(a > b || ca <= cb, "{a} -> {ca}, {b} -> {cb}");
        }
    }
}
