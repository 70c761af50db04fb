//! Leaving the image: under qemu (feature `qemu`) through Linux's `exit_group`, on the
//! device by parking the CPU. Panics leave through here too, with status 101.
#![allow(unsafe_code)]

/// Ends the image with `code`.
#[unsafe(no_mangle)]
pub extern "C" fn pto_aicpu_exit(code: i32) -> ! {
    #[cfg(feature = "qemu")]
    // SAFETY: `exit_group` (94) takes the status in x0 and does not return.
    unsafe {
        core::arch::asm!("svc #0", in("x8") 94, in("x0") code, options(noreturn));
    }
    #[cfg(not(feature = "qemu"))]
    {
        let _ = code;
        loop {
            // SAFETY: waiting for an event has no other effect.
            unsafe { core::arch::asm!("wfe", options(nomem, nostack, preserves_flags)) };
        }
    }
}

#[panic_handler]
fn panic(_info: &core::panic::PanicInfo<'_>) -> ! {
    // Not from inside the logger: that would re-enter it.
    #[cfg(feature = "defmt")]
    if !crate::logger::busy() {
        pto_device_sys::pto_error!("panic in the device image");
    }
    pto_aicpu_exit(101)
}
