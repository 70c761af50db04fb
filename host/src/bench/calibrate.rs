//! The calibration workload: the silicon cost model's figures beside what the modelled chip
//! did, and what a dependent hop costs a scheduler on it, polling or draining its queue.

use std::fmt;

use pto_sim::{Silicon, SimError, calibrate};

use crate::human::sig3;

/// Chain tasks per mode, and status reads timed.
const TASKS: u32 = 5_000;
const READS: u32 = 100_000;

/// Medians of `repeat` calibration runs, in ns, and the model's figures.
#[derive(Clone, Debug, serde::Serialize)]
pub struct CalibrationResult {
    /// Calibration runs.
    pub runs: u32,
    /// The model: a status read.
    pub model_status_read_ns: f64,
    /// Measured: a status read as the scheduler paid it.
    pub status_read_ns: f64,
    /// The model: doorbell to kernel start (doorbell store plus dispatch).
    pub model_dispatch_ns: f64,
    /// Measured: doorbell to kernel start, as the modelled cores took it.
    pub dispatch_ns: f64,
    /// The model: kernel end to FIN shown, mean.
    pub model_fin_ns: f64,
    /// Measured: kernel end to FIN shown, as the modelled cores took it.
    pub fin_ns: f64,
    /// A chain hop, the scheduler polling status words.
    pub hop_poll_ns: f64,
    /// A chain hop, the scheduler draining its completion queue.
    pub hop_ring_ns: f64,
}

/// Runs the calibration `repeat` times on the a2a3 model.
pub fn run_calibration(repeat: u32) -> Result<CalibrationResult, SimError> {
    let model = Silicon::a2a3();
    let mut runs = Vec::new();
    for _ in 0..repeat.max(1) {
        runs.push(calibrate(&model, TASKS, READS)?);
    }
    let median = |f: fn(&pto_sim::Calibration) -> f64| {
        let mut v: Vec<f64> = runs.iter().map(f).collect();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let ns = |d: std::time::Duration| d.as_nanos() as f64;
    Ok(CalibrationResult {
        runs: runs.len() as u32,
        model_status_read_ns: ns(model.status_read),
        status_read_ns: median(|c| c.status_read_ns),
        model_dispatch_ns: ns(model.dispatch),
        dispatch_ns: median(|c| c.dispatch_ns),
        model_fin_ns: ns(model.fin_avg),
        fin_ns: median(|c| c.fin_ns),
        hop_poll_ns: median(|c| c.hop_poll_ns),
        hop_ring_ns: median(|c| c.hop_ring_ns),
    })
}

impl fmt::Display for CalibrationResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let row = |f: &mut fmt::Formatter<'_>, what: &str, model: f64, got: f64| {
            writeln!(
                f,
                "  {what:<22} model {:>6} ns, measured {:>6} ns ({:+.0} %)",
                sig3(model),
                sig3(got),
                (got / model - 1.0) * 100.0
            )
        };
        writeln!(
            f,
            "calibration of the a2a3 model, median of {} runs:",
            self.runs
        )?;
        row(
            f,
            "status read",
            self.model_status_read_ns,
            self.status_read_ns,
        )?;
        row(
            f,
            "doorbell to start",
            self.model_dispatch_ns,
            self.dispatch_ns,
        )?;
        row(f, "kernel end to FIN", self.model_fin_ns, self.fin_ns)?;
        write!(
            f,
            "  chain hop on one core: polling {} ns, completion ring {} ns",
            sig3(self.hop_poll_ns),
            sig3(self.hop_ring_ns)
        )
    }
}
