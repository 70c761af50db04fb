//! The loop of one simulated AICore core.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use pto_runtime_core::{
    Completion, CompletionQueue, CoreId, KernelId, KernelTensor, MAX_ARGS, MAX_TENSORS, Outcome,
    Platform, ResultWord, StatusWord, Token,
};

use crate::access_check;
use crate::kernel_error::{KernelError, KernelFailure, error_code};
use crate::kernel_panic;
use crate::kernels::KernelCtx;
use crate::platform::{SimCore, SimPlatform, read_payload};
use crate::silicon::{SiliconSums, SiliconTicks};

/// Runs the simulated cores `ids` on this thread until the machine shuts down, as an event
/// loop: each pass looks at every core's doorbell and runs the kernel of each token rung.
/// For every core, tokens are taken in order, the kernel runs, the token's result word is
/// written (done, or failed with a code) and then FIN is reported in the core's status word.
/// When no core had work for `spin_before_park` passes, the thread parks until a doorbell
/// of one of its cores wakes it.
///
/// With one core per thread this is the classic simulated core; with many, no core parks
/// while another of its thread has work, but a kernel that blocks holds up its thread's
/// other cores (so tests that want kernels truly concurrent use one thread per core).
///
/// A core reports no separate ACK: on the simulator a kernel starts the moment its token is
/// seen, and one status write per token halves the traffic on the status line.
pub(crate) fn core_loop(p: &SimPlatform, ids: &[CoreId], spin_before_park: u32) {
    let mut cores: Vec<CoreState> = ids.iter().map(|&id| CoreState::new(id)).collect();
    let mut args = [0u64; MAX_ARGS as usize];
    let mut tensors = Vec::with_capacity(MAX_TENSORS as usize);
    // Each core's two doorbells, so a pass without the cost model is a tight scan: one load
    // and one compare per core (with many cores a pass is long, and a token rung just after
    // its core was looked at waits for the rest of the pass).
    let bells: Vec<[&AtomicU32; 2]> = ids
        .iter()
        .map(|id| {
            let core = &p.cores[id.0 as usize];
            [&core.payload[0].rung, &core.payload[1].rung]
        })
        .collect();
    // The core that ran last: the scheduler gives the next task to the lowest idle core, so
    // a chain's next token is most likely rung there (see `HOT_EVERY`).
    let mut hot = 0usize;
    loop {
        let ran = match &p.silicon {
            None => {
                let mut ran = false;
                for i in 0..cores.len() {
                    if run_if_rung(p, &mut cores[i], bells[i], &mut args, &mut tensors) {
                        ran = true;
                        hot = i;
                    }
                    if i % HOT_EVERY == HOT_EVERY - 1
                        && run_if_rung(p, &mut cores[hot], bells[hot], &mut args, &mut tensors)
                    {
                        ran = true;
                    }
                }
                ran
            }
            Some(s) => {
                let (ran, waiting) = modelled_pass(p, s, &mut cores, &mut args, &mut tensors);
                if waiting && !ran {
                    std::hint::spin_loop();
                    continue;
                }
                ran
            }
        };
        if ran {
            continue;
        }
        if p.shutdown.load(Ordering::Acquire) {
            return;
        }
        // Nothing to do: watch the doorbells alone for a while, then park.
        if spin_until_rung(&cores, &bells, hot, spin_before_park) {
            continue;
        }
        let next: Vec<Token> = cores.iter().map(|c| c.next).collect();
        if !park_until_rung(p, ids, &next) {
            return;
        }
    }
}

/// One pass over `cores` with the chip's costs `s` modelled: shows what is due and starts
/// the kernels whose modelled start has come. Whether anything ran or showed, and whether
/// something is still to come (a FIN or record not due yet, a kernel not started yet).
fn modelled_pass(
    p: &SimPlatform,
    s: &SiliconTicks,
    cores: &mut [CoreState],
    args: &mut [u64; MAX_ARGS as usize],
    tensors: &mut Vec<KernelTensor>,
) -> (bool, bool) {
    let (mut ran, mut waiting) = (false, false);
    // One clock read a pass decides what is due.
    let now = p.now();
    for c in cores {
        let core = &p.cores[c.id.0 as usize];
        ran |= c.report_due(p, core, now, s.late);
        if rung(core, c.next) {
            let rung_at = core.payload[(c.next.bits() & 1) as usize]
                .rung_at
                .load(Ordering::Relaxed);
            // The modelled core starts the kernel `dispatch` after the doorbell (or when its
            // kernel before ends), whenever this thread gets to look: a pass that comes late
            // runs the kernel's function late but keeps the modelled times, so the host's
            // delays are not charged as the chip's.
            let start = rung_at.saturating_add(s.dispatch).max(c.busy_until);
            if start > now {
                waiting = true;
                continue;
            }
            SiliconSums::add(&p.silicon_sums.0.dispatch, start - rung_at);
            p.silicon_sums.0.late(now - start, s.late);
            let (outcome, kernel) = execute(p, core, c.id, c.next, args, tensors);
            c.busy_until = start.saturating_add(s.kernel(kernel));
            // The modelled kernel times, not the host's: read after the FIN.
            let times = &core.status.0.times[(c.next.bits() & 1) as usize];
            times.0.store(start, Ordering::Relaxed);
            times.1.store(c.busy_until, Ordering::Relaxed);
            let fin = c.schedule(s, c.next, outcome, core.queue.is_some());
            SiliconSums::add(&p.silicon_sums.0.fin, fin - c.busy_until);
            c.next = c.next.next();
            ran = true;
        }
        waiting |= !c.due.is_empty();
    }
    (ran, waiting)
}

/// A FIN, or a completion record, the modelled chip shows at `at`.
struct Due {
    at: u64,
    token: Token,
    outcome: ResultWord,
    /// The FIN (written first); else the record.
    fin: bool,
}

/// One simulated core as its thread drives it.
struct CoreState {
    id: CoreId,
    /// The token it takes next.
    next: Token,
    /// With the chip's costs: until when its current kernel runs.
    busy_until: u64,
    /// With the chip's costs: what it will show, in time order.
    due: std::collections::VecDeque<Due>,
}

impl CoreState {
    fn new(id: CoreId) -> Self {
        CoreState {
            id,
            next: Token::FIRST,
            busy_until: 0,
            due: std::collections::VecDeque::new(),
        }
    }

    /// Queues the FIN of `token`, whose kernel ends at `busy_until`, and (with a completion
    /// queue, `ring`) its record: each no sooner than the one before it (a core's reports
    /// keep their order), the record no sooner than its FIN. Returns when the FIN shows.
    fn schedule(&mut self, s: &SiliconTicks, token: Token, outcome: ResultWord, ring: bool) -> u64 {
        let seed = (self.id.0 as u64) << 32 | token.bits() as u64;
        let last = self.due.back().map_or(0, |d| d.at);
        let fin = (self.busy_until + s.fin(seed)).max(last);
        let record = (self.busy_until + s.record(seed)).max(fin);
        self.due.push_back(Due {
            at: fin,
            token,
            outcome,
            fin: true,
        });
        // Polling schedulers get no records: none is due (so none delays the next FIN).
        if !ring {
            return fin;
        }
        self.due.push_back(Due {
            at: record,
            token,
            outcome,
            fin: false,
        });
        fin
    }

    /// Shows what is due by `now` (counting how late, `late` ticks being late); whether
    /// anything was.
    fn report_due(&mut self, p: &SimPlatform, core: &SimCore, now: u64, late: u64) -> bool {
        let mut any = false;
        while let Some(d) = self.due.front().filter(|d| d.at <= now) {
            p.silicon_sums.0.late(now - d.at, late);
            if d.fin {
                write_fin(core, d.token, d.outcome);
            } else {
                post_record(p, core, self.id, d.token, d.outcome);
            }
            self.due.pop_front();
            any = true;
        }
        any
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

/// How many other doorbells a thread of many cores looks at between two looks at the core
/// that ran last. A pass over 72 cores is a few hundred ns; a chain's next token, rung on
/// the core its last one ran on, is seen after at most this many others instead.
const HOT_EVERY: usize = 8;

/// If core `c`'s next token is rung (`bell` holds its doorbells), runs its kernel, reports
/// it and moves on to the token after; whether it ran.
#[inline]
fn run_if_rung(
    p: &SimPlatform,
    c: &mut CoreState,
    bell: [&AtomicU32; 2],
    args: &mut [u64; MAX_ARGS as usize],
    tensors: &mut Vec<KernelTensor>,
) -> bool {
    let token = c.next;
    if bell[(token.bits() & 1) as usize].load(Ordering::Acquire) != token.bits() {
        return false;
    }
    let core = &p.cores[c.id.0 as usize];
    let (outcome, _) = execute(p, core, c.id, token, args, tensors);
    report(p, core, c.id, token, outcome);
    c.next = token.next();
    true
}

/// Runs the kernel of `token` on core `id` and says how it ended (and which kernel it was).
fn execute(
    p: &SimPlatform,
    core: &SimCore,
    id: CoreId,
    token: Token,
    args: &mut [u64; MAX_ARGS as usize],
    tensors: &mut Vec<KernelTensor>,
) -> (ResultWord, KernelId) {
    let head = read_payload(core, token, args, tensors);
    let (task, kernel) = (head.task, head.kernel);
    let slab = &core.slabs[(token.bits() & 1) as usize];
    slab.clear();
    let ctx = KernelCtx {
        task,
        core: id,
        lane: head.lane,
        lanes: head.lanes,
        block: head.block,
        blocks: head.blocks,
        args: &args[..head.nargs],
        scheduler: core.scheduler,
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
    let result = match p.kernels.entry(kernel) {
        None => Err(KernelError::sim(
            error_code::UNKNOWN_KERNEL,
            format!("no kernel is registered as id {}", kernel.0),
        )),
        Some((name, f)) => {
            // A fatal signal in the kernel names it, its task and its core.
            let _running = crate::crash::kernel(kernel, name, task, id, head.lane);
            if p.checker.is_some() {
                access_check::begin();
            }
            let result = catch_unwind(AssertUnwindSafe(|| f(&ctx))).unwrap_or_else(|payload| {
                Err(KernelError::sim(
                    error_code::KERNEL_PANICKED,
                    kernel_panic::message(&*payload),
                ))
            });
            if let Some(c) = &p.checker {
                c.ran(task, access_check::end());
            }
            result
        }
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
                lane: head.lane,
                error,
            };
            // The run's error reports it; this is for a run that failed for another reason.
            log::debug!("{id}: {failure} (code {code}, {task})");
            p.failures.push(failure);
            ResultWord::failed(token, code)
        }
    };
    (outcome, kernel)
}

/// Reports `token` finished with `outcome`: its result word, then FIN in the status word,
/// then (in ring mode) a record in the scheduler's completion queue.
fn report(p: &SimPlatform, core: &SimCore, id: CoreId, token: Token, outcome: ResultWord) {
    write_fin(core, token, outcome);
    post_record(p, core, id, token, outcome);
}

/// The result word of `token`, then FIN in the status word.
fn write_fin(core: &SimCore, token: Token, outcome: ResultWord) {
    let line = &core.status.0;
    line.results[(token.bits() & 1) as usize].store(outcome.bits(), Ordering::Relaxed);
    // Release: the result word, the times, the conditions and the kernel's own writes are
    // visible to whoever reads this FIN (or any later report).
    line.word
        .store(StatusWord::fin(token).bits(), Ordering::Release);
}

/// In ring mode, the completion record of `token`, after its FIN.
fn post_record(p: &SimPlatform, core: &SimCore, id: CoreId, token: Token, outcome: ResultWord) {
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

/// Spins up to `spins` rounds over the doorbells `bells` of `cores` (relaxed loads only, one
/// load and one compare per core), looking again at core `hot` every [`HOT_EVERY`] others;
/// whether one of them rang.
fn spin_until_rung(cores: &[CoreState], bells: &[[&AtomicU32; 2]], hot: usize, spins: u32) -> bool {
    let rung = |i: usize| {
        let token = cores[i].next.bits();
        bells[i][(token & 1) as usize].load(Ordering::Relaxed) == token
    };
    for _ in 0..spins {
        for i in 0..cores.len() {
            if rung(i) || (i % HOT_EVERY == HOT_EVERY - 1 && rung(hot)) {
                return true;
            }
        }
        std::hint::spin_loop();
    }
    false
}

/// Parks until one of `ids` has its next token rung. Returns `false` on shutdown.
fn park_until_rung(p: &SimPlatform, ids: &[CoreId], next: &[Token]) -> bool {
    let cores = || ids.iter().map(|id| &p.cores[id.0 as usize]);
    // SeqCst, as the doorbell's store and its check of `sleeping`: either a ringer sees a
    // core asleep and wakes this thread, or the re-check below sees its token.
    for core in cores() {
        core.sleeping.0.store(true, Ordering::SeqCst);
    }
    p.parks.0.fetch_add(1, Ordering::Relaxed);
    let any_rung = || {
        cores().zip(next).any(|(core, &token)| {
            core.payload[(token.bits() & 1) as usize]
                .rung
                .load(Ordering::SeqCst)
                == token.bits()
        })
    };
    let mut running = true;
    while !any_rung() {
        if p.shutdown.load(Ordering::Acquire) {
            running = false;
            break;
        }
        // The timeout only bounds a missed wake-up; wake-ups come from `ring_doorbell`.
        std::thread::park_timeout(Duration::from_millis(1));
    }
    for core in cores() {
        core.sleeping.0.store(false, Ordering::Relaxed);
    }
    running
}
