//! A run's life on the AICPU threads, and the SO's state between runs.
//!
//! Each `exec` thread takes a ticket (at most `threads` are handed out). Ticket 0 formats
//! the run and opens the cores (`setup.rs`), then waits, bounded, for the other threads;
//! ticket `threads - 1` orchestrates (`orch.rs`); the others are scheduler `ticket`. Every
//! thread departs, and the one that makes the count is the last out: it sends every opened
//! core the exit, writes the report and clears the state, so the next run starts clean.
//! Threads that arrive after arrivals closed (too many, or later than the handshake
//! timeout) take no part.

use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use pto_device_sys::abi::{PtoAicpuCode, PtoAicpuExecArgs, PtoAicpuReport};
use pto_device_sys::chip::{
    ChipCore, ChipError, ChipPlatform, PtoStallEntry, StallLog, close_core,
};
use pto_device_sys::raw::arch;
use pto_runtime_core::ffi::{PtoRecord, PtoReport, records_c};
use pto_runtime_core::{Runtime, Stall};

use crate::settings::Settings;

/// Cores a run can open (24 AIC + 48 AIV on A2/A3, with room).
pub(crate) const MAX_CORES: usize = 80;

const EMPTY: u32 = 0;
const SETTING_UP: u32 = 1;
const READY: u32 = 2;
const FAILED: u32 = 3;
/// Set in `ARRIVED` once no more tickets are handed out.
const CLOSED: u32 = 1 << 31;

/// What the threads of a run share once ticket 0 set it up.
pub(crate) struct Run {
    /// The runtime in the run's region.
    pub rt: Runtime<'static>,
    /// The chip platform over the opened cores.
    pub platform: ChipPlatform<'static>,
    /// The run's arguments (ticket 0's copy).
    pub args: PtoAicpuExecArgs,
    /// The settings `init` made.
    pub settings: Settings,
    /// When setup began (system counter).
    pub start: u64,
}

/// A static only the protocol of this module shares out (see each access).
pub(crate) struct Shared<T>(UnsafeCell<T>);

// SAFETY: every access follows the ticket protocol: ticket 0 writes before publishing
// `STATE` (Release), the others read after observing it (Acquire), and the last out takes
// the contents after every other thread departed (`DEPARTED`, AcqRel).
unsafe impl<T> Sync for Shared<T> {}

impl<T> Shared<T> {
    /// The contents' address.
    pub(crate) fn get(&self) -> *mut T {
        self.0.get()
    }
}

static ARRIVED: AtomicU32 = AtomicU32::new(0);
static DEPARTED: AtomicU32 = AtomicU32::new(0);
static EXPECT: AtomicU32 = AtomicU32::new(0);
static STATE: AtomicU32 = AtomicU32::new(EMPTY);
static RUNS: AtomicU64 = AtomicU64::new(0);
static ERR_CODE: AtomicU32 = AtomicU32::new(0);
static ERR_CORE: AtomicU32 = AtomicU32::new(0xffff);
static ERR_VALUE: AtomicU64 = AtomicU64::new(0);

/// The opened cores of the run (ticket 0 fills it; the platform borrows it).
pub(crate) static CORES: Shared<heapless::Vec<ChipCore<'static>, MAX_CORES>> =
    Shared(UnsafeCell::new(heapless::Vec::new()));
/// What the live tasks of a failed run waited for (the schedulers tell, the last out adds
/// what the task slots say).
pub(crate) static STALLS: StallLog = StallLog::new();
/// The run, once set up.
pub(crate) static RUN: Shared<Option<Run>> = Shared(UnsafeCell::new(None));

/// Which run of the loaded SO this is (1 for the first).
pub(crate) fn run_number() -> u64 {
    RUNS.load(Ordering::Relaxed)
}

/// Records the run's first problem; later ones are dropped.
pub(crate) fn record(code: PtoAicpuCode, core: u32, value: u64) {
    if ERR_CODE
        .compare_exchange(0, code as u32, Ordering::AcqRel, Ordering::Acquire)
        .is_ok()
    {
        ERR_CORE.store(core, Ordering::Relaxed);
        ERR_VALUE.store(value, Ordering::Relaxed);
    }
}

/// Records a core's handshake failure.
pub(crate) fn record_chip(e: ChipError) {
    let (code, core, value) = match e {
        ChipError::CoreNotUp { core, waited_us } => (PtoAicpuCode::CoreNotUp, core, waited_us),
        ChipError::BadCoreId { core, id } => (PtoAicpuCode::BadCoreId, core, id as u64),
        ChipError::WrongCoreType { core, got, .. } => {
            (PtoAicpuCode::WrongCoreType, core, got as u64)
        }
        ChipError::StaleCond { core, value } => (PtoAicpuCode::StaleCond, core, value as u64),
        ChipError::ExitNotAcked { core, cond, .. } => {
            (PtoAicpuCode::ExitNotAcked, core, cond as u64)
        }
    };
    record(code, core as u32, value);
}

/// Whether a problem was recorded.
pub(crate) fn failed() -> bool {
    ERR_CODE.load(Ordering::Acquire) != 0
}

/// Threads expected to depart.
pub(crate) fn others_departed() -> bool {
    DEPARTED.load(Ordering::Acquire) + 1 >= EXPECT.load(Ordering::Acquire)
}

/// Writes `r` where the run's arguments say.
pub(crate) fn write_report(a: &PtoAicpuExecArgs, r: PtoAicpuReport) {
    let p = a.report as usize as *mut PtoAicpuReport;
    // SAFETY: `report` is non-null (checked by `exec`) and names device memory the host
    // gave for the report (the ABI's contract); an unaligned one is written bytewise.
    unsafe { p.write_unaligned(r) };
    if a.coherence == 1 {
        arch::clean(p as usize, size_of::<PtoAicpuReport>());
    }
}

/// Copies the run's task records where its arguments say: (copied, held in all).
fn copy_records(r: &Run) -> (u32, u32) {
    let a = &r.args;
    let out = a.records as usize as *mut PtoRecord;
    let (mut n, mut total) = (0usize, 0usize);
    // SAFETY: `records` is null (cap 0, checked at setup) or names `records_cap` aligned
    // records of device memory the host gave for them (the ABI's contract).
    unsafe {
        records_c(
            &r.rt,
            out,
            a.records_cap as usize,
            &raw mut n,
            &raw mut total,
        )
    };
    if a.coherence == 1 && n > 0 {
        arch::clean(out as usize, n * size_of::<PtoRecord>());
    }
    (n as u32, total.min(u32::MAX as usize) as u32)
}

/// One `exec` thread's part in the run `a` describes. Returns 0 unless the thread took no
/// part (another code then, for CANN's log).
pub(crate) fn exec(a: &PtoAicpuExecArgs, s: Settings) -> u32 {
    let ticket = loop {
        let n = ARRIVED.load(Ordering::Acquire);
        if n & CLOSED != 0 || n >= a.threads {
            return 3;
        }
        if ARRIVED
            .compare_exchange(n, n + 1, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            break n;
        }
    };
    if ticket == 0 {
        RUNS.fetch_add(1, Ordering::Relaxed);
        STATE.store(SETTING_UP, Ordering::Relaxed);
        let start = arch::counter();
        let ok = crate::setup::setup(a, s, start);
        // Even a run that cannot go waits for its threads: one arriving after the last out
        // reset the state would be taken for the next run's first.
        let all = all_arrived(a, s);
        if !all {
            // No more tickets: whoever arrived so far departs, and the last out reports.
            let n = ARRIVED.fetch_or(CLOSED, Ordering::AcqRel) & !CLOSED;
            EXPECT.store(n, Ordering::Release);
        } else {
            EXPECT.store(a.threads, Ordering::Release);
        }
        let ready = ok && all;
        STATE.store(if ready { READY } else { FAILED }, Ordering::Release);
    } else {
        // Bounded: ticket 0's every wait is bounded (the handshake timeout, twice).
        while STATE.load(Ordering::Acquire) == SETTING_UP || STATE.load(Ordering::Acquire) == EMPTY
        {
            crate::cpu::idle();
        }
    }
    if STATE.load(Ordering::Acquire) == READY {
        // SAFETY: READY was published after `RUN` was written; nothing writes it again
        // until every thread departed.
        let run: &'static Run = match unsafe { (*RUN.get()).as_ref() } {
            Some(r) => r,
            None => return depart(a),
        };
        if ticket == a.threads - 1 {
            crate::orch::orchestrate(run);
        } else {
            match run.rt.scheduler(ticket as u8, &run.platform) {
                // The run's outcome is in the runtime's status, read by the last out.
                Ok(sched) => {
                    let _ = sched.run();
                }
                Err(_) => {
                    record(PtoAicpuCode::BadConfig, 0xffff, ticket as u64);
                    run.rt.abort(0);
                }
            }
        }
    }
    depart(a)
}

/// Ticket 0 waits, bounded, until every thread took its ticket.
fn all_arrived(a: &PtoAicpuExecArgs, s: Settings) -> bool {
    let start = arch::counter();
    let limit = s.handshake_us.saturating_mul(s.ticks_per_us);
    while ARRIVED.load(Ordering::Acquire) < a.threads {
        if arch::counter().wrapping_sub(start) > limit {
            let n = ARRIVED.load(Ordering::Acquire) & !CLOSED;
            if n < a.threads {
                record(PtoAicpuCode::MissingThreads, 0xffff, n as u64);
                return false;
            }
        }
        crate::cpu::idle();
    }
    true
}

fn depart(a: &PtoAicpuExecArgs) -> u32 {
    let d = DEPARTED.fetch_add(1, Ordering::AcqRel) + 1;
    if d == EXPECT.load(Ordering::Acquire) {
        finish(a);
    }
    0
}

/// The last out: exit handshake with every opened core, the report, a clean state.
fn finish(a: &PtoAicpuExecArgs) {
    // SAFETY: every other thread of the run departed (the count says so): nothing else
    // uses the run or the cores any more.
    let run = unsafe { (*RUN.get()).take() };
    // SAFETY: as above.
    let cores = unsafe { &mut *CORES.get() };
    let mut sched = PtoReport::default();
    let (mut records, mut records_total) = (0, 0);
    let (ticks, exit_us) = match &run {
        Some(r) => {
            if r.rt.error().is_some() {
                record(PtoAicpuCode::RunFailed, 0xffff, 0);
                // The schedulers told what their cores ran and deferred sets held; the
                // slots tell who waited for producers (and which), then who was ready (a
                // task the schedulers told of, or the error's own, is not ready as well).
                let error_task = r.rt.error().and_then(|e| e.task);
                for s in
                    r.rt.stalls()
                        .filter(|s| matches!(s, Stall::Producers { .. }))
                {
                    let e = PtoStallEntry::of(&s).with_producers(r.rt.producers_of(s.task()));
                    STALLS.push_entry(e);
                }
                for s in r.rt.stalls().filter(|s| matches!(s, Stall::Ready { .. })) {
                    if !STALLS.mentions(s.task()) && Some(s.task()) != error_task {
                        STALLS.push(&s);
                    }
                }
            }
            sched = PtoReport::from_report(&r.rt.report());
            (records, records_total) = copy_records(r);
            (r.settings.ticks_per_us, r.settings.exit_us)
        }
        None => crate::settings::get().map_or((1, 0), |s| (s.ticks_per_us, s.exit_us)),
    };
    let mut closed = 0;
    for c in cores.iter() {
        match close_core(c, ticks, exit_us) {
            Ok(()) => closed += 1,
            Err(e) => record_chip(e),
        }
    }
    cores.clear();
    let mut report = PtoAicpuReport {
        code: ERR_CODE.load(Ordering::Acquire),
        core: ERR_CORE.load(Ordering::Relaxed),
        value: ERR_VALUE.load(Ordering::Relaxed),
        threads: EXPECT.load(Ordering::Relaxed),
        cores_closed: closed,
        run: RUNS.load(Ordering::Relaxed),
        sched,
        records,
        records_total,
        nstalls: STALLS.told(),
        ..PtoAicpuReport::default()
    };
    for (d, e) in report.stalls.iter_mut().zip(STALLS.entries()) {
        *d = e;
    }
    STALLS.clear();
    write_report(a, report);
    ERR_CODE.store(0, Ordering::Relaxed);
    ERR_CORE.store(0xffff, Ordering::Relaxed);
    ERR_VALUE.store(0, Ordering::Relaxed);
    STATE.store(EMPTY, Ordering::Relaxed);
    DEPARTED.store(0, Ordering::Relaxed);
    EXPECT.store(0, Ordering::Relaxed);
    ARRIVED.store(0, Ordering::Release);
}
