//! The flag bits of a task record, one set of names for the device that packs them and for
//! the host and C that read them ([`crate::ffi::PtoRecord::flags`]).
#![forbid(unsafe_code)]

/// A task record's flags. The profile ring's cell keeps them in the low byte of its
/// `written` word (the finishing scheduler in the high byte); a `PtoRecord` carries them in
/// its `flags` word.
#[repr(transparent)]
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
#[cfg_attr(feature = "bytemuck", derive(bytemuck::Pod, bytemuck::Zeroable))]
pub struct RecordFlags(u32);

bitflags::bitflags! {
    impl RecordFlags: u32 {
        /// The task finished cancelled: a transfer it waited on failed, or a task it
        /// depends on was cancelled. Bit 0, so the slot's `failed` word (0 or 1) is the
        /// bit as it is.
        const CANCELLED = 1;
        /// The record is whole: its finisher closed it. Set in every record read back.
        const WRITTEN = 1 << 1;
        /// The task was closed where its FIN was seen, so its FIN stamp is the close's.
        /// Only in the device's cell: a `PtoRecord` never carries it (its `fin` is the stamp).
        const FIN_AT_CLOSE = 1 << 2;
        /// The task's predicate was false when it was about to be dispatched: it finished
        /// without a core, and its consumers ran on.
        const SKIPPED = 1 << 3;
    }
}

/// The flags fit the low byte of the cell's `written` word.
const _: () = assert!(RecordFlags::all().bits() <= 0xff);
