//! Deferred completion conditions: what a kernel asks to hold before its task completes.
//!
//! A kernel whose effects land after it returns (a DMA or RDMA transfer in flight, a
//! notification on the wire) registers conditions; the platform hands them to the scheduler
//! with the FIN ([`crate::Platform::conditions`]), and the task completes only once every one
//! of them holds.
#![forbid(unsafe_code)]

use core::fmt;

/// Most conditions a platform must be able to carry per task lane; [`crate::Config::max_conditions`]
/// may not exceed it.
pub const MAX_CONDITIONS: u16 = 64;

/// A word the scheduler polls: a counter in device memory (or a comm window), or an engine's
/// completion watermark. Conditions on the same word share one read per poll.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Watch {
    /// A 32-bit counter at this device address (4-byte aligned).
    Counter32(u64),
    /// A 64-bit counter at this device address (8-byte aligned).
    Counter64(u64),
    /// The completed post-id watermark of this DMA/RDMA engine.
    Engine(u32),
    /// The completion queue of this DMA/RDMA engine that reports to the watching scheduler
    /// ([`crate::Platform::engine_queue`]). Its value is the highest post id whose entry the
    /// scheduler drained; entries arrive in post order, so every post up to it has reported,
    /// and an error entry fails its task ([`crate::FatalKind::TransferFailed`]).
    Queue(u32),
}

impl Watch {
    /// The address and byte width of the counter, or `None` for an engine.
    pub fn counter(self) -> Option<(u64, usize)> {
        match self {
            Watch::Counter32(a) => Some((a, 4)),
            Watch::Counter64(a) => Some((a, 8)),
            Watch::Engine(_) | Watch::Queue(_) => None,
        }
    }
}

impl fmt::Display for Watch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Watch::Counter32(a) => write!(f, "32-bit counter at {a:#x}"),
            Watch::Counter64(a) => write!(f, "64-bit counter at {a:#x}"),
            Watch::Engine(e) => write!(f, "completion watermark of engine {e}"),
            Watch::Queue(e) => write!(f, "completion queue of engine {e}"),
        }
    }
}

/// One condition: the task may complete once `watch` reads at least `expected`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Condition {
    /// The word polled.
    pub watch: Watch,
    /// The value it must reach (counters and watermarks only grow).
    pub expected: u64,
}

impl Condition {
    /// `*addr >= expected` on a 32-bit counter.
    pub const fn counter32(addr: u64, expected: u32) -> Self {
        Condition {
            watch: Watch::Counter32(addr),
            expected: expected as u64,
        }
    }

    /// `*addr >= expected` on a 64-bit counter.
    pub const fn counter64(addr: u64, expected: u64) -> Self {
        Condition {
            watch: Watch::Counter64(addr),
            expected,
        }
    }

    /// Engine `engine` has completed every post up to `cookie`.
    pub const fn engine(engine: u32, cookie: u64) -> Self {
        Condition {
            watch: Watch::Engine(engine),
            expected: cookie,
        }
    }

    /// The entry of post `post` on engine `engine`'s completion queue has arrived (an error
    /// entry fails the task with [`crate::FatalKind::TransferFailed`]).
    pub const fn entry(engine: u32, post: u64) -> Self {
        Condition {
            watch: Watch::Queue(engine),
            expected: post,
        }
    }

    /// Whether `value` (read from the watch) satisfies the condition.
    #[inline]
    pub fn holds(&self, value: u64) -> bool {
        value >= self.expected
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn watches_round_trip_and_name_themselves() {
        for w in [
            Watch::Counter32(0x40),
            Watch::Counter64(8),
            Watch::Engine(3),
            Watch::Queue(2),
        ] {
            let (k, v) = w.encode();
            assert_eq!(Watch::decode(k, v), Some(w));
        }
        assert_eq!(Watch::decode(0, 1), None);
        assert_eq!(
            std::format!("{}", Watch::Counter32(0x40)),
            "32-bit counter at 0x40"
        );
        assert!(Condition::counter64(8, 5).holds(5));
        assert!(!Condition::engine(0, 6).holds(5));
    }
}
