//! A Rust kernel's panic, reported once: as the kernel's error, in the run's error, with where
//! it panicked. The process's panic hook stays silent for a panic inside a kernel (the
//! simulator catches it and the run reports it) and passes every other panic to the hook
//! that was there before.

use std::cell::RefCell;
use std::sync::Once;

use crate::crash::{self, Running};

thread_local! {
    /// Where the last kernel panic of this thread happened (`file:line:column`).
    static WHERE: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Installs the hook (once per process).
pub(crate) fn install_quiet_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if matches!(crash::current(), Running::Kernel { .. }) {
                let at = info
                    .location()
                    .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()));
                WHERE.with(|w| *w.borrow_mut() = at);
            } else {
                previous(info);
            }
        }));
    });
}

/// The message of a kernel's panic whose payload is `payload`, with where it panicked when
/// the hook saw it (it is taken: the next panic starts afresh).
pub(crate) fn message(payload: &(dyn std::any::Any + Send)) -> String {
    let text = payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str));
    let at = WHERE
        .with(|w| w.borrow_mut().take())
        .map_or_else(String::new, |w| format!(" at {w}"));
    match text {
        Some(t) => format!("the kernel panicked{at}: {t}"),
        None => format!("the kernel panicked{at} (with a payload that is not a string)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_keeps_its_message() {
        let p = std::panic::catch_unwind(|| panic!("tile {} out of range", 7)).unwrap_err();
        assert_eq!(message(&*p), "the kernel panicked: tile 7 out of range");
        let p = std::panic::catch_unwind(|| std::panic::panic_any(5u8)).unwrap_err();
        assert!(message(&*p).contains("not a string"));
    }

    #[test]
    fn a_panic_in_a_kernel_is_silent_and_its_place_joins_the_message() {
        install_quiet_hook();
        let name = "k";
        let _k = crash::kernel(
            pto_runtime_core::KernelId(0),
            name,
            pto_runtime_core::TaskId::from_raw(1),
            pto_runtime_core::CoreId(0),
            0,
        );
        let p = std::panic::catch_unwind(|| panic!("boom")).unwrap_err();
        let m = message(&*p);
        assert!(m.starts_with("the kernel panicked at "), "{m}");
        assert!(
            m.contains("kernel_panic.rs:") && m.ends_with(": boom"),
            "{m}"
        );
    }
}
