//! Newtypes for the things that name tasks, cores, kernels and dispatches.
#![forbid(unsafe_code)]

use core::fmt;

/// A task's position in its ring's submission order. Monotonic per ring and never reused
/// within a run; 44 bits fit in a [`TaskId`].
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
pub struct Seq(pub u64);

impl Seq {
    /// The largest sequence number a [`TaskId`] can carry.
    pub const MAX: Seq = Seq((1 << TaskId::SEQ_BITS) - 1);

    /// The slot index of this sequence number in a window of `1 << window_shift` slots.
    #[inline]
    pub const fn index(self, window_shift: u32) -> usize {
        (self.0 & ((1 << window_shift) - 1)) as usize
    }

    /// How many times the slot has been reused before this tenant.
    #[inline]
    pub const fn generation(self, window_shift: u32) -> u64 {
        self.0 >> window_shift
    }
}

/// A task's identity: run epoch, ring and sequence number (which gives slot index and
/// generation). Layout of the `u64`: `[epoch:16][ring:4][seq:44]`.
///
/// The epoch tells ids of one run from those of another run of the same region; the sequence
/// number tells a task from the later tenants of its slot.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct TaskId(u64);

impl TaskId {
    /// Bits of the sequence number.
    pub const SEQ_BITS: u32 = 44;
    const RING_SHIFT: u32 = Self::SEQ_BITS;
    const EPOCH_SHIFT: u32 = Self::SEQ_BITS + 4;

    /// Builds an id. `ring` must be below 16 and `seq` at most [`Seq::MAX`]; extra bits are
    /// masked off.
    #[inline]
    pub const fn new(epoch: u16, ring: u8, seq: Seq) -> Self {
        TaskId(
            ((epoch as u64) << Self::EPOCH_SHIFT)
                | (((ring & 0xf) as u64) << Self::RING_SHIFT)
                | (seq.0 & Seq::MAX.0),
        )
    }
    /// The id as one word (what a kernel payload and the profile carry).
    #[inline]
    pub const fn raw(self) -> u64 {
        self.0
    }
    /// Rebuilds an id from [`TaskId::raw`].
    #[inline]
    pub const fn from_raw(raw: u64) -> Self {
        TaskId(raw)
    }
    /// The run epoch this id was issued in.
    #[inline]
    pub const fn epoch(self) -> u16 {
        (self.0 >> Self::EPOCH_SHIFT) as u16
    }
    /// The ring the task lives in.
    #[inline]
    pub const fn ring(self) -> u8 {
        ((self.0 >> Self::RING_SHIFT) & 0xf) as u8
    }
    /// The task's sequence number in its ring.
    #[inline]
    pub const fn seq(self) -> Seq {
        Seq(self.0 & Seq::MAX.0)
    }
}

impl fmt::Debug for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "task {}:{}@{}", self.ring(), self.seq().0, self.epoch())
    }
}

impl fmt::Display for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// Per-core dispatch token: 31 bits on the wire, compared with wrap-around in mind.
///
/// A core's tokens never repeat across runs: each run continues from the last token the
/// core reported (see [`crate::StatusWord`]). 0 and the top 16 values (which the chip's
/// dispatch register uses for control: idle, exit) are never issued.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Token(u32);

impl Token {
    /// The bits a token occupies.
    pub const MASK: u32 = 0x7fff_ffff;
    /// The first token a core is given after its registers were reset (0 means "nothing
    /// dispatched yet").
    pub const FIRST: Token = Token(1);
    /// The last token issued before the sequence wraps to [`Token::FIRST`].
    pub const LAST: Token = Token(Self::MASK - 16);

    /// A token from its wire bits (extra bits masked off).
    #[inline]
    pub const fn new(bits: u32) -> Self {
        Token(bits & Self::MASK)
    }
    /// The wire bits.
    #[inline]
    pub const fn bits(self) -> u32 {
        self.0
    }
    /// The token after this one: after [`Token::LAST`] (or any reserved value) comes
    /// [`Token::FIRST`].
    #[inline]
    pub const fn next(self) -> Self {
        if self.0 >= Self::LAST.0 {
            Self::FIRST
        } else {
            Token(self.0 + 1)
        }
    }
    /// Signed distance `self - earlier` on the 31-bit circle: positive when `self` was issued
    /// after `earlier` (valid while the two are less than 2^30 apart).
    #[inline]
    pub const fn since(self, earlier: Token) -> i32 {
        // Shift into the top 31 bits so the wrapping subtraction sign-extends correctly.
        ((self.0 << 1).wrapping_sub(earlier.0 << 1) as i32) >> 1
    }
}

/// A core's index in the machine: AIC cores first (`0..aic`), then AIV cores.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct CoreId(pub u16);

impl fmt::Display for CoreId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "core {}", self.0)
    }
}

/// Index of a kernel in the platform's dispatch table.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct KernelId(pub u32);

/// The kind of worker a task needs; each has its own ready queue.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
#[repr(u8)]
pub enum WorkerClass {
    /// One cube core.
    Aic = 0,
    /// One vector core.
    Aiv = 1,
    /// A whole cluster (1 AIC + 2 AIV) at once; the kernel runs on three lanes.
    Mix = 2,
    /// No core: completes in the scheduler as soon as it is ready (joins, barriers).
    Dummy = 3,
}

impl WorkerClass {
    /// Number of classes (and of ready queues).
    pub const COUNT: usize = 4;
    /// Every class, in queue order.
    pub const ALL: [WorkerClass; 4] = [Self::Aic, Self::Aiv, Self::Mix, Self::Dummy];

    /// The class's index in [`WorkerClass::ALL`].
    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }
    /// The class from [`WorkerClass::index`].
    #[inline]
    pub const fn from_index(i: usize) -> Option<Self> {
        match i {
            0 => Some(Self::Aic),
            1 => Some(Self::Aiv),
            2 => Some(Self::Mix),
            3 => Some(Self::Dummy),
            _ => None,
        }
    }
    /// Cores a task of this class occupies at once.
    #[inline]
    pub const fn lanes(self) -> u8 {
        match self {
            Self::Aic | Self::Aiv => 1,
            Self::Mix => 3,
            Self::Dummy => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_id_round_trips_its_fields() {
        let id = TaskId::new(0xbeef, 3, Seq(0x0fff_ffff_ffff));
        assert_eq!(
            (id.epoch(), id.ring(), id.seq()),
            (0xbeef, 3, Seq(0x0fff_ffff_ffff))
        );
        assert_eq!(TaskId::from_raw(id.raw()), id);
        assert_eq!(Seq(37).index(4), 5);
        assert_eq!(Seq(37).generation(4), 2);
    }

    #[test]
    fn token_wraps_past_the_reserved_values_and_compares_across_the_wrap() {
        let last = Token::LAST;
        let first = last.next();
        assert_eq!(
            first,
            Token::FIRST,
            "0 and the control values are never issued"
        );
        assert_eq!(Token::new(Token::MASK).next(), Token::FIRST);
        assert_eq!(Token::new(0).next(), Token::FIRST);
        assert_eq!(
            first.since(last),
            18,
            "the wrap skips 0 and 16 control values"
        );
        assert_eq!(last.since(first), -18);
        assert_eq!(Token::new(10).since(Token::new(7)), 3);
    }
}
