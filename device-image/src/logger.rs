//! defmt's global logger for the image: frames go to stdout under qemu (feature `qemu`), or
//! into a ring in the image's memory that the host reads (`PTO_LOG_RING`, `PTO_LOG_HEAD`).
#![allow(unsafe_code)]

use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Bytes of the log ring.
const RING: usize = 16 << 10;

/// The log ring (the host reads it through the image's symbols).
#[unsafe(no_mangle)]
static mut PTO_LOG_RING: [u8; RING] = [0; RING];
/// Bytes written to the ring so far (position modulo its size).
#[unsafe(no_mangle)]
static PTO_LOG_HEAD: AtomicUsize = AtomicUsize::new(0);

static TAKEN: AtomicBool = AtomicBool::new(false);

/// Whether a frame is being written now (the panic handler then does not log).
pub fn busy() -> bool {
    TAKEN.load(Ordering::Acquire)
}
static mut ENCODER: defmt::Encoder = defmt::Encoder::new();

fn encoder() -> *mut defmt::Encoder {
    &raw mut ENCODER
}

#[cfg(not(feature = "qemu"))]
fn ring() -> *mut [u8; RING] {
    &raw mut PTO_LOG_RING
}

fn emit(bytes: &[u8]) {
    #[cfg(feature = "qemu")]
    // SAFETY: `write` (64) on fd 1 reads `len` bytes at `ptr`, which `bytes` provides.
    unsafe {
        core::arch::asm!(
            "svc #0",
            in("x8") 64,
            inlateout("x0") 1usize => _,
            in("x1") bytes.as_ptr(),
            in("x2") bytes.len(),
            options(nostack)
        );
    }
    #[cfg(not(feature = "qemu"))]
    for &b in bytes {
        let at = PTO_LOG_HEAD.fetch_add(1, Ordering::Relaxed) % RING;
        // SAFETY: `at < RING`; the logger is taken, so this thread is the only writer.
        unsafe { (*ring())[at] = b };
    }
}

#[defmt::global_logger]
struct Logger;

// SAFETY: `acquire` takes the logger exclusively (a nested or concurrent take ends the image),
// and the encoder is only used between `acquire` and `release`.
unsafe impl defmt::Logger for Logger {
    fn acquire() {
        if TAKEN.swap(true, Ordering::Acquire) {
            // Re-entered (logging from a panic raised while logging): leave, rather than
            // panic again inside the logger.
            crate::exit::pto_aicpu_exit(102);
        }
        // SAFETY: the logger is taken: nothing else uses the encoder.
        unsafe { (*encoder()).start_frame(emit) }
    }

    unsafe fn flush() {}

    unsafe fn release() {
        // SAFETY: the logger is taken (defmt's contract).
        unsafe { (*encoder()).end_frame(emit) };
        TAKEN.store(false, Ordering::Release);
    }

    unsafe fn write(bytes: &[u8]) {
        // SAFETY: the logger is taken (defmt's contract).
        unsafe { (*encoder()).write(bytes, emit) }
    }
}
