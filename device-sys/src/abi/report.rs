//! The report the last AICPU thread out writes to device memory: how the run ended (a
//! [`PtoAicpuCode`] and the core and value it concerns), the scheduler's counters and
//! error, how many task records it copied, and what the live tasks of a failed run waited
//! for (a bounded summary). Its `Display` is the sentence a host prints.
#![forbid(unsafe_code)]

use core::mem::{offset_of, size_of};

use pto_runtime_core::ffi::PtoReport;

use crate::chip::stall_log::{PtoStallEntry, REPORT_STALLS};

/// How a run ended, as the report's `code` says.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PtoAicpuCode {
    /// Every task finished.
    Ok = 0,
    /// The arguments are malformed (null where a block is needed, wrong ABI, sizes).
    BadArgs = 1,
    /// `exec` ran before `init`.
    NotInitialized = 2,
    /// The configuration or region was refused (`detail`: the runtime's reason).
    BadConfig = 3,
    /// Fewer AICPU threads took part than `threads` within the handshake timeout
    /// (`value`: how many did).
    MissingThreads = 4,
    /// A core's executor did not answer the handshake (`core`).
    CoreNotUp = 5,
    /// A core reported a physical id without a register window (`core`, `value`: the id).
    BadCoreId = 6,
    /// A core reported the wrong type (`core`, `value`: what it reported).
    WrongCoreType = 7,
    /// A core's `COND` held a value an earlier run left (`core`, `value`).
    StaleCond = 8,
    /// The run failed: `run.error_kind` and friends say how (kernel error, task timeout).
    RunFailed = 9,
    /// The orchestration function returned non-zero (`value`).
    OrchestrationFailed = 10,
    /// The device watchdog aborted the run (`value`: the limit in ms).
    Watchdog = 11,
    /// A core did not acknowledge the exit (`core`, `value`: its `COND`); the run may
    /// otherwise have succeeded.
    ExitNotAcked = 12,
    /// The orchestration SO could not be loaded (`value`: 1 the temporary file could not
    /// be written, 2 `dlopen` refused it, 3 it has no `pto_orchestrate`).
    OrchestrationLoad = 13,
    /// The configuration asks for more argument words than a payload slot holds (`value`:
    /// `max_tensors + max_args`, at most 32 on the chip).
    SlotTooSmall = 14,
}

impl PtoAicpuCode {
    /// The code from its number (unknown numbers are `BadArgs`).
    pub fn from_u32(v: u32) -> Self {
        use PtoAicpuCode::*;
        [
            Ok,
            BadArgs,
            NotInitialized,
            BadConfig,
            MissingThreads,
            CoreNotUp,
            BadCoreId,
            WrongCoreType,
            StaleCond,
            RunFailed,
            OrchestrationFailed,
            Watchdog,
            ExitNotAcked,
            OrchestrationLoad,
            SlotTooSmall,
        ]
        .get(v as usize)
        .copied()
        .unwrap_or(BadArgs)
    }
}

/// What a run did, written by the last AICPU thread out.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PtoAicpuReport {
    /// A [`PtoAicpuCode`] (the first thing that went wrong).
    pub code: u32,
    /// The core it concerns, or `0xffff`.
    pub core: u32,
    /// A value the code explains.
    pub value: u64,
    /// Threads that took part.
    pub threads: u32,
    /// Cores whose exit was acknowledged.
    pub cores_closed: u32,
    /// Which run of the loaded SO this was (1 for the first). 0 means no thread wrote a
    /// report (none took part: the CPU mask excluded them all): the host zeroes the block
    /// before each run.
    pub run: u64,
    /// The scheduler's report.
    pub sched: PtoReport,
    /// Task records copied to the exec arguments' `records` (streamed, with a record
    /// stream).
    pub records: u32,
    /// Task records the run held in all (more than `records` when they did not fit).
    pub records_total: u32,
    /// Stall entries the run's threads told (one per live task, or per lane a scheduler
    /// held; `stalls` keeps the first [`REPORT_STALLS`]; 0 after a run that succeeded).
    pub nstalls: u32,
    /// Task records lost: past the profile ring's wait (the scheduler's `profile_dropped`)
    /// and past the record stream's (its `lost`).
    pub records_lost: u32,
    /// What the first live tasks waited for when the run stopped: running on which core
    /// for how long, behind a running lane, deferred on which word, waiting for producers,
    /// ready but not dispatched.
    pub stalls: [PtoStallEntry; REPORT_STALLS],
}

impl Default for PtoAicpuReport {
    fn default() -> Self {
        PtoAicpuReport {
            code: 0,
            core: 0,
            value: 0,
            threads: 0,
            cores_closed: 0,
            run: 0,
            sched: PtoReport::default(),
            records: 0,
            records_total: 0,
            nstalls: 0,
            records_lost: 0,
            stalls: [PtoStallEntry::default(); REPORT_STALLS],
        }
    }
}

impl PtoAicpuReport {
    /// The stall entries kept, as the core's [`pto_runtime_core::Stall`]s.
    pub fn stalls(&self) -> impl Iterator<Item = pto_runtime_core::Stall> + '_ {
        let kept = (self.nstalls as usize).min(REPORT_STALLS);
        self.stalls[..kept].iter().filter_map(PtoStallEntry::stall)
    }

    /// The run's stall class, from the entries it kept (`None` for a run that succeeded or
    /// stopped for another reason). A device watchdog that found no task live means the
    /// orchestrator had not closed its submissions: the run starved.
    pub fn stall_class(&self) -> Option<pto_runtime_core::StallClass> {
        let code = PtoAicpuCode::from_u32(self.code);
        if !matches!(code, PtoAicpuCode::RunFailed | PtoAicpuCode::Watchdog) {
            return None;
        }
        let starved = code == PtoAicpuCode::Watchdog && self.nstalls == 0;
        pto_runtime_core::StallClass::of_iter(self.stalls(), starved)
    }

    fn fmt_stalls(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        if let Some(c) = self.stall_class() {
            write!(f, "\nstall class: {c}")?;
        }
        if self.nstalls == 0 {
            return Ok(());
        }
        let n = self.nstalls;
        write!(
            f,
            "\n{n} live task{} when the run stopped:",
            if n == 1 { "" } else { "s" }
        )?;
        let kept = (self.nstalls as usize).min(REPORT_STALLS);
        for e in &self.stalls[..kept] {
            let Some(s) = e.stall() else { continue };
            write!(f, "\n  - {s}")?;
            if e.producers_finished() {
                // Named as the simulator's report names them.
                let n = e.producers().count();
                write!(f, "; {}", if n > 1 { "one of " } else { "" })?;
                for (i, p) in e.producers().enumerate() {
                    write!(f, "{}{p}", if i == 0 { "" } else { ", " })?;
                }
                write!(f, " finished without releasing it")?;
                continue;
            }
            for (i, p) in e.producers().enumerate() {
                write!(f, "{}{p}", if i == 0 { ": " } else { ", " })?;
            }
        }
        let kept = (n as usize).min(REPORT_STALLS);
        if n as usize > kept {
            write!(f, "\n  ({} more not kept)", n as usize - kept)?;
        }
        Ok(())
    }
}

impl core::fmt::Display for PtoAicpuReport {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        self.fmt_code(f)?;
        self.fmt_stalls(f)
    }
}

/// What a `FatalKind` number means, in a sentence's words (the core's one table).
fn fatal_name(kind: u32) -> &'static str {
    pto_runtime_core::FatalKind::from_u32(kind).map_or("an unknown error", |k| k.summary())
}

impl PtoAicpuReport {
    fn fmt_code(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        use PtoAicpuCode::*;
        let (c, v) = (self.core, self.value);
        let s = &self.sched;
        if self.run == 0 && self.code == 0 {
            return write!(
                f,
                "no report: no AICPU thread took part (check cpu_mask and the thread count)"
            );
        }
        match PtoAicpuCode::from_u32(self.code) {
            Ok => {
                write!(f, "run {}: {} tasks finished", self.run, s.finished)?;
                match self.records_lost {
                    0 => core::fmt::Result::Ok(()),
                    n => write!(
                        f,
                        " ({n} task records lost: they found the profile ring, or the \
                         host's ring of streamed records, full past its wait)"
                    ),
                }
            }
            BadArgs => write!(f, "run {}: malformed exec arguments", self.run),
            NotInitialized => write!(f, "run {}: exec before init", self.run),
            BadConfig => write!(f, "run {}: configuration or region refused", self.run),
            MissingThreads => write!(
                f,
                "run {}: only {v} AICPU threads took part in time",
                self.run
            ),
            CoreNotUp => write!(f, "run {}: core {c}: no AICore executor answered", self.run),
            BadCoreId => write!(
                f,
                "run {}: core {c}: physical id {v} has no register window",
                self.run
            ),
            WrongCoreType => write!(f, "run {}: core {c}: wrong core type {v}", self.run),
            StaleCond => write!(
                f,
                "run {}: core {c}: COND holds {v:#010x} left by an earlier run",
                self.run
            ),
            RunFailed => {
                write!(
                    f,
                    "run {}: failed: {} (error kind {})",
                    self.run,
                    fatal_name(s.error_kind),
                    s.error_kind,
                )?;
                // 0 and 0xffff: the error names no task, no core.
                if s.error_task != 0 {
                    let task = pto_runtime_core::TaskId::from_raw(s.error_task);
                    write!(f, " on {task}")?;
                }
                if s.error_core != 0xffff {
                    write!(f, ", core {}", s.error_core)?;
                }
                write!(f, ", detail {}", s.error_detail)
            }
            OrchestrationFailed => {
                write!(
                    f,
                    "run {}: the orchestration returned {}",
                    self.run, v as i64
                )?;
                // A status the orchestration passed on (a refused submit, say) says why.
                let status = i32::try_from(v as i64)
                    .ok()
                    .filter(|&c| c < 0)
                    .and_then(pto_runtime_core::ffi::PtoStatus::from_code);
                match status {
                    Some(st) => write!(
                        f,
                        " ({})",
                        pto_runtime_core::ffi::status_str(st as i32)
                            .to_str()
                            .unwrap_or("")
                    ),
                    None => core::fmt::Result::Ok(()),
                }
            }
            Watchdog => write!(
                f,
                "run {}: aborted by the device watchdog after {v} ms",
                self.run
            ),
            OrchestrationLoad => write!(
                f,
                "run {}: the orchestration SO could not be loaded: {}",
                self.run,
                match v {
                    1 => "its temporary file could not be written",
                    2 => "dlopen refused it",
                    _ => "it exports no `pto_orchestrate`",
                }
            ),
            ExitNotAcked => write!(
                f,
                "run {}: core {c}: exit not acknowledged (COND {v:#010x})",
                self.run
            ),
            SlotTooSmall => write!(
                f,
                "run {}: {tensors} + {args} = {v} argument words exceed the payload slot's \
                 {}: lower {tensors} or {args}",
                self.run,
                crate::chip::layout::SLOT_ARGS,
                tensors = pto_runtime_core::Knob::MaxTensors,
                args = pto_runtime_core::Knob::MaxArgs
            ),
        }
    }
}

const _: () = {
    assert!(offset_of!(PtoAicpuReport, sched) == 32);
    assert!(offset_of!(PtoAicpuReport, records) == 32 + size_of::<PtoReport>());
    assert!(offset_of!(PtoAicpuReport, stalls) == 48 + size_of::<PtoReport>());
};

#[cfg(test)]
mod tests {
    extern crate std;
    use std::string::ToString;

    use super::*;
    use pto_runtime_core::ffi::PtoStatus;
    use pto_runtime_core::{CoreId, Stall, TaskId};

    #[test]
    fn the_sentence_names_a_passed_on_status_and_the_stalled_tasks() {
        let r = PtoAicpuReport {
            code: PtoAicpuCode::OrchestrationFailed as u32,
            value: PtoStatus::PtoErrWindowFull as i64 as u64,
            run: 2,
            ..PtoAicpuReport::default()
        };
        let text = r.to_string();
        assert!(
            text.contains("returned -10 (the ring's task window"),
            "{text}"
        );
        let own = PtoAicpuReport { value: 7, ..r };
        assert_eq!(own.to_string(), "run 2: the orchestration returned 7");
        let (t, p) = (TaskId::from_raw(5), TaskId::from_raw(4));
        let mut stalled = PtoAicpuReport {
            code: PtoAicpuCode::RunFailed as u32,
            nstalls: 10,
            ..r
        };
        stalled.stalls[0] = PtoStallEntry::of(&Stall::Running {
            task: p,
            core: CoreId(2),
            for_us: Some(9),
        });
        stalled.stalls[1] = PtoStallEntry::of(&Stall::Producers { task: t, left: 1 })
            .with_producers([p].into_iter());
        let text = stalled.to_string();
        assert!(
            text.contains(&std::format!("{p} running on core 2 for 9 µs")),
            "{text}"
        );
        assert!(
            text.contains(&std::format!("{t} waiting for 1 producer: {p}")),
            "{text}"
        );
        assert!(text.contains("(2 more not kept)"), "{text}");
    }

    #[test]
    fn a_report_of_tasks_that_only_wait_for_producers_is_a_dependency_deadlock() {
        // What no correct run produces (every producer is running, deferred, ready or done),
        // but a corrupted fan-in would: the class, and the producers each task waits for.
        let (a, b, c) = (
            TaskId::from_raw(7),
            TaskId::from_raw(8),
            TaskId::from_raw(6),
        );
        let mut r = PtoAicpuReport {
            code: PtoAicpuCode::Watchdog as u32,
            run: 3,
            nstalls: 2,
            ..PtoAicpuReport::default()
        };
        r.stalls[0] = PtoStallEntry::of(&Stall::Producers { task: a, left: 1 })
            .with_producers([c].into_iter());
        r.stalls[1] = PtoStallEntry::of(&Stall::Producers { task: b, left: 1 })
            .with_producers([a].into_iter());
        let class = r.stall_class().expect("a stalled run");
        assert_eq!(class.kind, pto_runtime_core::StallKind::DependencyDeadlock);
        let text = r.to_string();
        assert!(
            text.contains(&std::format!(
                "stall class: dependency-deadlock: {a} waiting"
            )),
            "{text}"
        );
        assert!(
            text.contains(&std::format!("{b} waiting for 1 producer: {a}")),
            "{text}"
        );
    }
}
