//! The loop of one simulated AICore core.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::Ordering;
use std::time::Duration;

use pto_runtime_core::{
    Completion, CompletionQueue, CoreId, KernelTensor, MAX_ARGS, MAX_TENSORS, Outcome, Platform,
    ResultWord, StatusWord, Token,
};

use crate::kernel_error::{KernelError, KernelFailure, error_code, panic_message};
use crate::kernels::KernelCtx;
use crate::platform::{SimCore, SimPlatform, read_payload};

/// Runs core `id` until the machine shuts down: takes each rung token in order, runs its
/// kernel, writes the token's result word (done, or failed with a code) and then reports FIN
/// in its status word. Parks when idle.
///
/// The core reports no separate ACK: on the simulator a kernel starts the moment its token is
/// seen, and one status write per token halves the traffic on the status line.
pub(crate) fn core_loop(p: &SimPlatform, id: CoreId, spin_before_park: u32) {
    let core = &p.cores[id.0 as usize];
    let mut next = Token::FIRST;
    let mut args = [0u64; MAX_ARGS as usize];
    let mut tensors = Vec::with_capacity(MAX_TENSORS as usize);
    loop {
        if rung(core, next) {
            run_token(p, core, id, next, &mut args, &mut tensors);
            next = next.next();
            continue;
        }
        if p.shutdown.load(Ordering::Acquire) {
            return;
        }
        if !wait_for_doorbell(p, core, next, spin_before_park) {
            return;
        }
    }
}

/// Whether `token` was rung (its buffer's doorbell word holds it).
#[inline]
fn rung(core: &SimCore, token: Token) -> bool {
    core.payload[(token.bits() & 1) as usize]
        .rung
        .load(Ordering::Acquire)
        == token.bits()
}

fn run_token(
    p: &SimPlatform,
    core: &SimCore,
    id: CoreId,
    token: Token,
    args: &mut [u64; MAX_ARGS as usize],
    tensors: &mut Vec<KernelTensor>,
) {
    let (task, kernel, lane, lanes, n) = read_payload(core, token, args, tensors);
    let slab = &core.slabs[(token.bits() & 1) as usize];
    slab.clear();
    let ctx = KernelCtx {
        task,
        core: id,
        lane,
        lanes,
        args: &args[..n],
        tensors,
        memory: &p.memory,
        engines: &p.engines,
        slab,
    };
    let buf = &core.payload[(token.bits() & 1) as usize];
    let timed = buf.shape.load(Ordering::Relaxed) >> 24 & 1 == 1;
    let times = &core.status.0.times[(token.bits() & 1) as usize];
    if timed {
        times.0.store(p.now(), Ordering::Relaxed);
    }
    let result = match p.kernels.get(kernel) {
        None => Err(KernelError::sim(
            error_code::UNKNOWN_KERNEL,
            format!("no kernel is registered as id {}", kernel.0),
        )),
        Some(f) => catch_unwind(AssertUnwindSafe(|| f(&ctx))).unwrap_or_else(|payload| {
            Err(KernelError::sim(
                error_code::KERNEL_PANICKED,
                panic_message(&*payload),
            ))
        }),
    };
    if timed {
        times.1.store(p.now(), Ordering::Relaxed);
    }
    let outcome = match result {
        Ok(()) => ResultWord::done(token),
        Err(error) => {
            let code = error.code();
            let failure = KernelFailure {
                task,
                kernel,
                name: p.kernels.name(kernel).map(str::to_owned),
                core: id,
                lane,
                error,
            };
            log::warn!("{id}: {failure} (code {code}, {task})");
            p.failures.push(failure);
            ResultWord::failed(token, code)
        }
    };
    let line = &core.status.0;
    line.results[(token.bits() & 1) as usize].store(outcome.bits(), Ordering::Relaxed);
    // Release: the result word, the times, the conditions and the kernel's own writes are
    // visible to whoever reads this FIN (or any later report).
    line.word
        .store(StatusWord::fin(token).bits(), Ordering::Release);
    if let Some(q) = core.queue.and_then(|q| p.queues.get(q)) {
        post(p, &q.view(), id, token, outcome);
    }
}

/// Appends the completion of `token` to the scheduler's queue, after its FIN: the record's
/// publication carries the status word with it. The queue is sized so that it cannot be full
/// (two records per core at most are outstanding); if it were, the core waits, it never
/// drops a record.
fn post(p: &SimPlatform, q: &CompletionQueue<'_>, id: CoreId, token: Token, r: ResultWord) {
    let mut c = Completion {
        source: id.0 as u32,
        status: u32::from(r.outcome(token) != Some(Outcome::Done)),
        id: token.bits() as u64,
        time: p.now(),
    };
    while let Err(back) = q.push(c) {
        c = back;
        if p.shutdown.load(Ordering::Acquire) {
            return;
        }
        std::thread::yield_now();
    }
}

/// Spins a little, then parks until `token` is rung. Returns `false` on shutdown.
fn wait_for_doorbell(p: &SimPlatform, core: &SimCore, token: Token, spin_before_park: u32) -> bool {
    let bell = &core.payload[(token.bits() & 1) as usize].rung;
    for _ in 0..spin_before_park {
        if bell.load(Ordering::Relaxed) == token.bits() {
            return true;
        }
        std::hint::spin_loop();
    }
    core.sleeping.0.store(true, Ordering::SeqCst);
    p.parks.fetch_add(1, Ordering::Relaxed);
    while bell.load(Ordering::SeqCst) != token.bits() {
        if p.shutdown.load(Ordering::Acquire) {
            core.sleeping.0.store(false, Ordering::Relaxed);
            return false;
        }
        // The timeout only bounds a missed wake-up; wake-ups come from `ring_doorbell`.
        std::thread::park_timeout(Duration::from_millis(1));
    }
    core.sleeping.0.store(false, Ordering::Relaxed);
    true
}
