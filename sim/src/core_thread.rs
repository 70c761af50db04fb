//! The loop of one simulated AICore core.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::Ordering;
use std::time::Duration;

use pto_runtime_core::{CoreId, MAX_ARGS, Token};

use crate::kernels::{KernelCtx, error_code};
use crate::platform::{SimCore, SimPlatform, phase, read_payload, status_word};

/// Runs core `id` until the machine shuts down: takes each rung token in order, runs its
/// kernel, reports ACK then FIN (or ERROR with a code). Parks when idle.
pub(crate) fn core_loop(p: &SimPlatform, id: CoreId, spin_before_park: u32) {
    let core = &p.cores[id.0 as usize];
    let mut last = Token::new(0);
    let mut args = [0u64; MAX_ARGS as usize];
    loop {
        let rung = Token::new(core.doorbell.load(Ordering::Acquire));
        if rung != last {
            // Tokens are consecutive per core; run the next one (the doorbell may already
            // show the one after it).
            let token = if last.bits() == 0 { Token::FIRST } else { last.next() };
            run_token(p, core, id, token, &mut args);
            last = token;
            continue;
        }
        if p.shutdown.load(Ordering::Acquire) {
            return;
        }
        if !wait_for_doorbell(p, core, last, spin_before_park) {
            return;
        }
    }
}

fn run_token(p: &SimPlatform, core: &SimCore, id: CoreId, token: Token, args: &mut [u64; MAX_ARGS as usize]) {
    core.status.store(status_word(token, phase::ACK, 0), Ordering::Release);
    let (task, kernel, lane, lanes, n) = read_payload(core, token, args);
    let ctx = KernelCtx { task, core: id, lane, lanes, args: &args[..n] };
    let result = match p.kernels.get(kernel) {
        None => Err(error_code::UNKNOWN_KERNEL),
        Some(f) => catch_unwind(AssertUnwindSafe(|| f(&ctx))).unwrap_or(Err(error_code::KERNEL_PANICKED)),
    };
    let word = match result {
        Ok(()) => status_word(token, phase::FIN, 0),
        Err(code) => {
            log::warn!("{id}: kernel {} of {task} failed with code {code}", kernel.0);
            status_word(token, phase::ERROR, code)
        }
    };
    core.status.store(word, Ordering::Release);
}

/// Spins a little, then parks until the doorbell moves past `last`. Returns `false` on
/// shutdown.
fn wait_for_doorbell(p: &SimPlatform, core: &SimCore, last: Token, spin_before_park: u32) -> bool {
    for _ in 0..spin_before_park {
        if core.doorbell.load(Ordering::Relaxed) != last.bits() {
            return true;
        }
        std::hint::spin_loop();
    }
    core.sleeping.store(true, Ordering::SeqCst);
    while core.doorbell.load(Ordering::SeqCst) == last.bits() {
        if p.shutdown.load(Ordering::Acquire) {
            core.sleeping.store(false, Ordering::Relaxed);
            return false;
        }
        // The timeout only bounds a missed wake-up; wake-ups come from `ring_doorbell`.
        std::thread::park_timeout(Duration::from_millis(50));
    }
    core.sleeping.store(false, Ordering::Relaxed);
    true
}
