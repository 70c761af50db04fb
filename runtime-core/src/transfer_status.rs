//! The status codes of an engine completion entry ([`crate::Completion::status`] of a
//! transfer): 0 for success, a small code for how a transfer failed. Platforms may report
//! codes of their own above [`FIRST_PLATFORM_CODE`]; every nonzero code fails the task with
//! [`crate::FatalKind::TransferFailed`].
#![forbid(unsafe_code)]

/// The transfer landed whole.
pub const OK: u32 = 0;
/// The remote side refused the access (an address outside its window, a protection error).
pub const REMOTE_ACCESS: u32 = 1;
/// The engine gave the transfer up as lost (retries exhausted).
pub const LOST: u32 = 2;
/// The engine timed the transfer out.
pub const TIMED_OUT: u32 = 3;
/// Codes from here up are the platform's own.
pub const FIRST_PLATFORM_CODE: u32 = 16;

/// A short name of `status`, for error messages and traces.
pub const fn name(status: u32) -> &'static str {
    match status {
        OK => "ok",
        REMOTE_ACCESS => "remote access error",
        LOST => "lost",
        TIMED_OUT => "timed out",
        _ => "platform error code",
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    #[test]
    fn every_code_has_a_name() {
        assert_eq!(super::name(super::LOST), "lost");
        assert_eq!(super::name(99), "platform error code");
    }
}
