//! A run's life on the AICPU threads.
//!
//! Each `exec` thread takes a ticket from the hand-off (`pto_device_sys::handoff`; at most
//! `threads` are handed out). Ticket 0 formats the run and opens the cores (`setup.rs`), then
//! waits, bounded, for the other threads; ticket `threads - 1` orchestrates (`orch.rs`);
//! when the run streams its records, ticket `threads - 2` pumps them (`pump.rs`); the
//! others are scheduler `ticket`. Every thread departs, and the one that makes the count is
//! the last out: it sends every opened core the exit, writes the report and clears the
//! state, so the next run starts clean. Threads that arrive after arrivals closed (too many,
//! or later than the handshake timeout) take no part.

use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use pto_device_sys::abi::{PtoAicpuCode, PtoAicpuExecArgs, PtoAicpuReport};
use pto_device_sys::chip::{ChipCore, ChipPlatform, PtoStallEntry, close_core};
use pto_device_sys::handoff::{LastOut, Ticket};
use pto_device_sys::raw::arch;
use pto_runtime_core::ffi::PtoReport;

use pto_runtime_core::{RecordDrain, Runtime, Stall};

use crate::raw::abi_memory::{copy_records, write_report};
use crate::settings::Settings;
use crate::state::SO;

/// Cores a run can open (24 AIC + 48 AIV on A2/A3, with room).
pub(crate) const MAX_CORES: usize = 80;

/// The opened cores of a run.
pub(crate) type Cores = heapless::Vec<ChipCore<'static>, MAX_CORES>;

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
    /// The profile ring's drain, until the record pump takes it (a run that streams).
    pub drain: spin::Mutex<Option<RecordDrain<'static>>>,
    /// Schedulers that have not stopped yet.
    pub schedulers_left: AtomicU32,
    /// Records the pump wrote to the host's ring, and those it could not keep.
    pub pumped: AtomicU64,
    /// See `pumped`.
    pub pump_lost: AtomicU64,
}

/// Which run of the loaded SO this is (1 for the first).
pub(crate) fn run_number() -> u64 {
    SO.runs.load(core::sync::atomic::Ordering::Relaxed)
}

/// One `exec` thread's part in the run `a` describes. Returns 0 unless the thread took no
/// part (another code then, for CANN's log).
pub(crate) fn exec(a: &PtoAicpuExecArgs, s: Settings) -> u32 {
    let h = &SO.handoff;
    let Some(mut ticket) = h.arrive(a.threads) else {
        return 3;
    };
    if let Some(mut setup) = h.setup(&mut ticket) {
        SO.runs.fetch_add(1, core::sync::atomic::Ordering::Relaxed);
        let start = arch::counter();
        let ok = crate::setup::setup(a, s, start, &mut setup);
        // Even a run that cannot go waits for its threads: one arriving after the last out
        // reset the state would be taken for the next run's first.
        let all = all_arrived(a, s);
        // Not all: no more tickets; whoever arrived so far departs, and the last out reports.
        h.publish(setup, a.threads, all, ok);
    }
    // Bounded: ticket 0's every wait is bounded (the handshake timeout, twice).
    if let Some(run) = h
        .wait(&ticket, crate::raw::cpu::idle)
        .and_then(|p| SO.run.run(p))
    {
        take_part(run, ticket.number(), a.threads);
    }
    depart(a, ticket)
}

/// Ticket `n`'s part in a ready run: the last ticket orchestrates, the one before it pumps
/// the records of a run that streams them, the others schedule.
fn take_part(run: &Run, n: u32, threads: u32) {
    if n == threads - 1 {
        crate::orch::orchestrate(run);
        return;
    }
    if run.args.record_stream != 0 && n == threads - 2 {
        crate::pump::pump(run);
        return;
    }
    schedule(run, n);
    run.schedulers_left.fetch_sub(1, Ordering::Release);
}

/// Scheduler `n`'s part.
fn schedule(run: &Run, n: u32) {
    match run.rt.scheduler(n as u8, &run.platform) {
        // The run's outcome is in the runtime's status, read by the last out.
        Ok(sched) => {
            let _ = sched.run();
        }
        Err(_) => {
            SO.problem.record(PtoAicpuCode::BadConfig, 0xffff, n as u64);
            run.rt.abort(0);
        }
    }
}

/// Ticket 0 waits, bounded, until every thread took its ticket.
fn all_arrived(a: &PtoAicpuExecArgs, s: Settings) -> bool {
    let start = arch::counter();
    let limit = s.handshake_us.saturating_mul(s.ticks_per_us);
    while !SO.handoff.all_arrived(a.threads) {
        if arch::counter().wrapping_sub(start) > limit && !SO.handoff.all_arrived(a.threads) {
            SO.problem.record(
                PtoAicpuCode::MissingThreads,
                0xffff,
                SO.handoff.arrived() as u64,
            );
            return false;
        }
        crate::raw::cpu::idle();
    }
    true
}

fn depart(a: &PtoAicpuExecArgs, ticket: Ticket) -> u32 {
    if let Some(mut last) = SO.handoff.depart(ticket) {
        finish(a, &mut last);
        last.reset();
    }
    0
}

/// The last out: exit handshake with every opened core, the report, a clean state.
fn finish(a: &PtoAicpuExecArgs, last: &mut LastOut<'_>) {
    let threads = last.threads();
    let mut report = PtoAicpuReport::default();
    SO.run.finish(last, |run, cores| {
        // The run (its platform borrows the cores) is consumed here, before the cores are
        // closed.
        let (ticks, exit_us) = match run {
            Some(r) => {
                report_run(&r, &mut report);
                (r.settings.ticks_per_us, r.settings.exit_us)
            }
            None => SO
                .settings
                .get()
                .map_or((1, 0), |s| (s.ticks_per_us, s.exit_us)),
        };
        for c in cores.iter() {
            match close_core(c, ticks, exit_us) {
                Ok(()) => report.cores_closed += 1,
                Err(e) => SO.problem.record_chip(e),
            }
        }
    });
    let (code, core, value) = SO.problem.get();
    let mut report = PtoAicpuReport {
        code,
        core,
        value,
        threads,
        run: run_number(),
        nstalls: SO.stalls.told(),
        ..report
    };
    for (d, e) in report.stalls.iter_mut().zip(SO.stalls.entries()) {
        *d = e;
    }
    SO.stalls.clear();
    // A run whose orchestrator never ran opened it all the same.
    SO.producers.close();
    write_report(a, report);
    SO.problem.clear();
}

/// What the last out reads from the run: stalls if it failed, its counters and records.
fn report_run(r: &Run, report: &mut PtoAicpuReport) {
    if r.rt.error().is_some() {
        SO.problem.record(PtoAicpuCode::RunFailed, 0xffff, 0);
        // The schedulers told what their cores ran and deferred sets held; the slots tell
        // who waited for producers (and which), then who was ready (a task the schedulers
        // told of, or the error's own, is not ready as well).
        let error_task = r.rt.error().and_then(|e| e.task);
        for s in
            r.rt.stalls()
                .filter(|s| matches!(s, Stall::Producers { .. }))
        {
            let e = PtoStallEntry::of(&s)
                .with_producers(r.rt.producers_of(s.task()))
                .with_finished_producers(r.rt.finished_producers_of(s.task()));
            SO.stalls.push_entry(e);
        }
        for s in r.rt.stalls().filter(|s| matches!(s, Stall::Ready { .. })) {
            if !SO.stalls.mentions(s.task()) && Some(s.task()) != error_task {
                SO.stalls.push(&s);
            }
        }
    }
    let sched = r.rt.report();
    report.sched = PtoReport::from_report(&sched);
    let mut lost = sched.profile_dropped;
    if r.args.record_stream != 0 {
        let (pumped, pump_lost) = (
            r.pumped.load(Ordering::Relaxed),
            r.pump_lost.load(Ordering::Relaxed),
        );
        report.records = pumped.min(u64::from(u32::MAX)) as u32;
        report.records_total = (pumped + pump_lost).min(u64::from(u32::MAX)) as u32;
        lost += pump_lost;
    } else {
        (report.records, report.records_total) = copy_records(&r.rt, &r.args);
    }
    report.records_lost = lost.min(u64::from(u32::MAX)) as u32;
}
