//! Calibration runs of the silicon cost model: what the modelled chip did per operation, to
//! compare with the figures the model was given, and what a dependent hop costs a scheduler
//! on it, polling status words or draining its completion queue.

use std::time::Instant;

use pto_runtime_core::{
    CompletionMode, Config, CoreId, KernelId, Platform, TaskId, TaskSpec, WorkerClass,
};

use crate::error::SimError;
use crate::kernels::KernelTable;
use crate::machine::{SimMachine, SimOptions};
use crate::run::run;
use crate::silicon::Silicon;

/// Status reads timed together.
const READ_BATCH: u32 = 1_000;

/// What a calibration run measured, in nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Calibration {
    /// One read of a core's status word, as the scheduler pays it (the median of batches of
    /// reads).
    pub status_read_ns: f64,
    /// Doorbell to kernel start, mean, as the modelled cores took it.
    pub dispatch_ns: f64,
    /// Kernel end to FIN shown, mean, as the modelled cores took it.
    pub fin_ns: f64,
    /// One hop of a chain of no-op tasks on one core, the scheduler polling status words.
    pub hop_poll_ns: f64,
    /// The same, the scheduler draining its completion queue.
    pub hop_ring_ns: f64,
}

/// Runs a chain of `tasks` no-op tasks on one core, polling and then in ring mode, and
/// times `reads` status reads, all on the model `silicon`.
pub fn calibrate(silicon: &Silicon, tasks: u32, reads: u32) -> Result<Calibration, SimError> {
    let opts = SimOptions {
        silicon: Some(silicon.clone()),
        ..SimOptions::default()
    };
    let cfg = |completion| Config {
        aic_cores: 0,
        aiv_cores: 1,
        schedulers: 1,
        completion,
        ..Config::tiny()
    };
    let (hop_poll_ns, (dispatch_ns, fin_ns)) = chain(cfg(CompletionMode::Poll), &opts, tasks)?;
    let (hop_ring_ns, _) = chain(cfg(CompletionMode::Ring), &opts, tasks)?;
    let machine = SimMachine::start(&cfg(CompletionMode::Poll), KernelTable::new(), opts)?;
    let p = machine.platform();
    // Batches of reads, the median batch: a batch the host preempted does not count.
    let per_batch = READ_BATCH.min(reads.max(1));
    let mut batches: Vec<f64> = (0..(reads / per_batch).max(1))
        .map(|_| {
            let start = Instant::now();
            for _ in 0..per_batch {
                std::hint::black_box(p.core_status(CoreId(0)));
            }
            start.elapsed().as_nanos() as f64 / per_batch as f64
        })
        .collect();
    batches.sort_by(f64::total_cmp);
    let status_read_ns = batches[batches.len() / 2];
    Ok(Calibration {
        status_read_ns,
        dispatch_ns,
        fin_ns,
        hop_poll_ns,
        hop_ring_ns,
    })
}

/// A chain of `n` no-op AIV tasks: ns per hop, and the cores' mean dispatch and FIN delays.
fn chain(cfg: Config, opts: &SimOptions, n: u32) -> Result<(f64, (f64, f64)), SimError> {
    let kernels = KernelTable::new().with(KernelId(0), "nop", |_| Ok(()));
    let out = run(cfg, kernels, opts.clone(), |o| {
        let mut prev: Option<TaskId> = None;
        for _ in 0..n {
            let deps: Vec<TaskId> = prev.into_iter().collect();
            let spec = TaskSpec::new(KernelId(0), WorkerClass::Aiv).deps(&deps);
            match o.submit(&spec) {
                Ok(t) => prev = Some(t),
                Err(_) => return,
            }
        }
    })?;
    let hop = out.wall.as_nanos() as f64 / n.max(1) as f64;
    let delays = out.silicon_delays_ns.unwrap_or_default();
    Ok((hop, delays))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The dispatch and FIN delays are the model's own timestamps, so a late host never
    /// makes them shorter than the model's (only a core still busy at its doorbell, or an
    /// earlier report still due, can make them longer): lower bounds only, no wall-clock
    /// bound (the status read is wall time: reported, not tested).
    #[test]
    fn the_modelled_cores_never_take_less_than_the_dispatch_and_fin_delays_given() {
        let model = Silicon::a2a3();
        let c = calibrate(&model, 200, 1_000).unwrap();
        assert!(c.dispatch_ns >= 139.0, "{c:?}");
        // The mean of 200 of the model's FIN draws (uniform on 180..=1020 ns) is 600 ± 40.
        assert!(c.fin_ns >= 540.0, "{c:?}");
        assert!(c.hop_poll_ns > 0.0 && c.hop_ring_ns > 0.0 && c.status_read_ns > 0.0);
    }
}
