//! The orchestrating thread: calls the run's orchestration function with the table of
//! runtime operations (`raw::orch_ops`), closes submissions, then keeps the device watchdog
//! until the schedulers are done.

use pto_device_sys::abi::{PtoAicpuCode, PtoOrchestrate};
use pto_device_sys::raw::arch;

use crate::raw::{orch_ops, orch_so};
use crate::run::Run;
use crate::state::SO;

/// Whether the run is past its deadline; if so it is aborted (once) and recorded.
pub(crate) fn past_deadline(run: &Run) -> bool {
    let limit = run
        .settings
        .watchdog_us
        .saturating_mul(run.settings.ticks_per_us);
    if arch::counter().wrapping_sub(run.start) <= limit {
        return false;
    }
    SO.problem.record(
        PtoAicpuCode::Watchdog,
        0xffff,
        run.settings.watchdog_us / 1000,
    );
    run.rt.abort(run.settings.watchdog_us);
    true
}

/// Runs the orchestration of `run`, then watches the deadline until the schedulers left.
pub(crate) fn orchestrate(run: &Run) {
    let a = &run.args;
    match run.rt.orchestrator(&run.platform) {
        #[allow(unused_mut)]
        Ok(mut o) => {
            #[cfg(feature = "fault-injection")]
            if let Some(f) = crate::fault::take() {
                o.inject(f);
            }
            let loaded = if a.orch_so != 0 {
                match orch_so::load(a, run.settings.device, crate::run::run_number()) {
                    Ok(l) => Some(l),
                    Err(e) => {
                        SO.problem
                            .record(PtoAicpuCode::OrchestrationLoad, 0xffff, e as u64);
                        drop(o);
                        run.rt.abort(e as u64);
                        return watch(run);
                    }
                }
            } else {
                None
            };
            let f: PtoOrchestrate = match &loaded {
                Some(l) => l.entry,
                None => orch_ops::given_entry(a),
            };
            let rc = orch_ops::call(f, o, run);
            drop(loaded);
            if rc != 0 {
                SO.problem
                    .record(PtoAicpuCode::OrchestrationFailed, 0xffff, rc as i64 as u64);
                run.rt.abort(rc as u64);
            }
        }
        Err(_) => {
            SO.problem.record(PtoAicpuCode::BadConfig, 0xffff, 0);
            run.rt.abort(0);
        }
    }
    watch(run)
}

/// Keeps the deadline until every other thread departed. The schedulers stop once every
/// task finished or the run failed; the deadline bounds the first, and after an abort they
/// stop promptly.
fn watch(run: &Run) {
    // No more submits: the producers' stream says so to the host.
    SO.producers.close();
    let mut aborted = false;
    while !SO.handoff.others_departed() {
        if !aborted {
            aborted = past_deadline(run);
        }
        crate::raw::cpu::idle();
    }
}
