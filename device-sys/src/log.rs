//! The logging facade of the device crates: `pto_error!`, `pto_warn!`, `pto_info!` and
//! `pto_debug!` forward to `defmt` when this crate's feature `defmt` is on (device builds
//! that log to a ring), to `log` when `log` is on (host builds), and to nothing otherwise;
//! the choice is made by this crate's features, wherever the macros are used. defmt cannot link into
//! ordinary Linux binaries, so the two never meet: enabling both is a compile error. Use
//! arguments both understand (integers, `bool`, `&str`, `{}`); with `defmt`, the calling
//! crate depends on `defmt` itself (its macros name it).

#[cfg(all(feature = "defmt", feature = "log"))]
compile_error!("features `defmt` (device) and `log` (host) exclude each other");

#[cfg(feature = "log")]
#[doc(hidden)]
pub use log as __log;

/// Logs an error.
#[cfg(feature = "defmt")]
#[macro_export]
macro_rules! pto_error {
    ($($t:tt)*) => { ::defmt::error!($($t)*) };
}

/// Logs an error.
#[cfg(feature = "log")]
#[macro_export]
macro_rules! pto_error {
    ($($t:tt)*) => { $crate::log::__log::error!($($t)*) };
}

/// Logs an error.
#[cfg(not(any(feature = "defmt", feature = "log")))]
#[macro_export]
macro_rules! pto_error {
    ($($t:tt)*) => {{
        if false {
            let _ = ::core::format_args!($($t)*);
        }
    }};
}

/// Logs a warning.
#[cfg(feature = "defmt")]
#[macro_export]
macro_rules! pto_warn {
    ($($t:tt)*) => { ::defmt::warn!($($t)*) };
}

/// Logs a warning.
#[cfg(feature = "log")]
#[macro_export]
macro_rules! pto_warn {
    ($($t:tt)*) => { $crate::log::__log::warn!($($t)*) };
}

/// Logs a warning.
#[cfg(not(any(feature = "defmt", feature = "log")))]
#[macro_export]
macro_rules! pto_warn {
    ($($t:tt)*) => {{
        if false {
            let _ = ::core::format_args!($($t)*);
        }
    }};
}

/// Logs progress.
#[cfg(feature = "defmt")]
#[macro_export]
macro_rules! pto_info {
    ($($t:tt)*) => { ::defmt::info!($($t)*) };
}

/// Logs progress.
#[cfg(feature = "log")]
#[macro_export]
macro_rules! pto_info {
    ($($t:tt)*) => { $crate::log::__log::info!($($t)*) };
}

/// Logs progress.
#[cfg(not(any(feature = "defmt", feature = "log")))]
#[macro_export]
macro_rules! pto_info {
    ($($t:tt)*) => {{
        if false {
            let _ = ::core::format_args!($($t)*);
        }
    }};
}

/// Logs details.
#[cfg(feature = "defmt")]
#[macro_export]
macro_rules! pto_debug {
    ($($t:tt)*) => { ::defmt::debug!($($t)*) };
}

/// Logs details.
#[cfg(feature = "log")]
#[macro_export]
macro_rules! pto_debug {
    ($($t:tt)*) => { $crate::log::__log::debug!($($t)*) };
}

/// Logs details.
#[cfg(not(any(feature = "defmt", feature = "log")))]
#[macro_export]
macro_rules! pto_debug {
    ($($t:tt)*) => {{
        if false {
            let _ = ::core::format_args!($($t)*);
        }
    }};
}
