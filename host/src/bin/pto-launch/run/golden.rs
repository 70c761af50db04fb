//! `pto-launch run --expect N=FILE [--dtype D] [--rtol R] [--atol A]`: after the run, each
//! buffer named is compared with its golden file (`pto_host::golden`); the results print
//! with the run's, and a mismatch fails the command.

use clap::Args;

use pto_host::golden::{Expect, GoldenCheck, check};
use pto_sim::{Dtype, Tolerance};

use super::spec::bad;
use crate::error::CliError;

/// The golden-check flags of `run`.
#[derive(Args, Debug, Clone)]
pub struct GoldenArgs {
    /// After the run, compare buffer N with FILE (its elements, little-endian, of --dtype;
    /// FILE may be shorter than the buffer: the buffer's first bytes are compared); with
    /// --ranks, `{rank}` in FILE is the rank's number. May be given more than once.
    #[arg(long, value_name = "N=FILE")]
    pub expect: Vec<Expect>,
    /// The element type of --expect's files: f32, f16, bf16, f64, i8, i16, i32, i64, u8,
    /// u16, u32 or u64.
    #[arg(long, default_value = "f32", value_name = "TYPE")]
    pub dtype: Dtype,
    /// Relative tolerance of --expect: an element passes when |actual - expected| is at most
    /// atol + rtol * |expected| (default by --dtype: f32 1e-5, f16 1e-3, bf16 1e-2, f64
    /// 1e-9, integers 0).
    #[arg(long, value_name = "R")]
    pub rtol: Option<f64>,
    /// Absolute tolerance of --expect (default by --dtype: f32 1e-6, f16 1e-3, bf16 1e-2,
    /// f64 1e-12, integers 0).
    #[arg(long, value_name = "A")]
    pub atol: Option<f64>,
}

impl GoldenArgs {
    /// The tolerance: the flags', else the --dtype's defaults; a negative or non-finite one
    /// is refused.
    pub fn tolerance(&self) -> Result<Tolerance, CliError> {
        let d = Tolerance::default_for(self.dtype);
        let tol = Tolerance::new(self.rtol.unwrap_or(d.rtol), self.atol.unwrap_or(d.atol));
        if !tol.is_valid() {
            return Err(bad(format!(
                "--rtol {} --atol {}: a tolerance is a finite number, 0 or more",
                tol.rtol, tol.atol
            )));
        }
        if self.expect.is_empty() && (self.rtol.is_some() || self.atol.is_some()) {
            return Err(bad(
                "--rtol and --atol apply to --expect: give --expect N=FILE".into(),
            ));
        }
        Ok(tol)
    }

    /// Compares `buffers` (rank `rank`'s, if it is one) with the golden files.
    pub fn check(
        &self,
        rank: Option<u32>,
        buffers: &[Vec<u8>],
    ) -> Result<Vec<GoldenCheck>, CliError> {
        if self.expect.is_empty() {
            return Ok(Vec::new());
        }
        let expects: Vec<Expect> = self
            .expect
            .iter()
            .map(|e| Expect {
                buffer: e.buffer,
                file: match rank {
                    Some(r) => e
                        .file
                        .to_string_lossy()
                        .replace("{rank}", &r.to_string())
                        .into(),
                    None => e.file.clone(),
                },
            })
            .collect();
        check(&expects, buffers, self.dtype, self.tolerance()?).map_err(bad)
    }
}

/// The failure of a run whose buffers did not all match: the first mismatch, and how many.
pub fn verdict(checks: &[GoldenCheck]) -> Result<(), CliError> {
    let failed: Vec<&GoldenCheck> = checks.iter().filter(|c| !c.passed()).collect();
    match failed.first() {
        None => Ok(()),
        Some(first) if failed.len() == 1 => Err(bad(first.to_string())),
        Some(first) => Err(bad(format!(
            "{first} (and {} more buffers do not match)",
            failed.len() - 1
        ))),
    }
}
