//! Checking a task before anything of it is kept: every refusal is a typed error that says
//! what to change.
#![forbid(unsafe_code)]

use super::{Footprints, Orchestrator, TaskSpec};
use crate::error::SubmitError;
use crate::ids::{TaskId, WorkerClass};
use crate::orchestrator::tensor::{Footprint, TileError};
use crate::orchestrator::tensor_map::TensorArg;
use crate::platform::Platform;
use crate::region::config::MAX_DEPS;

impl<P: Platform> Orchestrator<'_, '_, P> {
    /// Checks `spec`, whose tensor arguments are `tensors`, against the configuration and
    /// the run, and puts each tensor argument's footprint (computed once here) in
    /// `footprints`.
    #[inline(always)]
    pub(super) fn validate(
        &self,
        spec: &TaskSpec<'_>,
        tensors: &[TensorArg],
        footprints: &mut Footprints,
    ) -> Result<(), SubmitError> {
        let cfg = &self.t.cfg;
        if spec.ring >= cfg.rings {
            return Err(SubmitError::BadRing {
                ring: spec.ring,
                rings: cfg.rings,
            });
        }
        if spec.args.len() > cfg.max_args as usize {
            return Err(SubmitError::TooManyArgs {
                given: spec.args.len(),
                max: cfg.max_args,
            });
        }
        if tensors.len() > cfg.max_tensors as usize {
            return Err(SubmitError::TooManyTensors {
                given: tensors.len(),
                max: cfg.max_tensors,
            });
        }
        if !tensors.is_empty() {
            check_tensors(tensors, footprints)?;
        }
        if spec.deps.len() > cfg.max_deps as usize {
            // Duplicates count once: only distinct dependencies can be too many.
            let distinct = distinct_deps(spec.deps, cfg.max_deps as usize + 1);
            if distinct > cfg.max_deps as usize {
                return Err(SubmitError::TooManyDeps {
                    given: distinct,
                    max: cfg.max_deps,
                });
            }
        }
        let cores = match spec.class {
            WorkerClass::Aic => cfg.aic_cores,
            WorkerClass::Aiv => cfg.aiv_cores,
            WorkerClass::Mix => cfg.mix_clusters(),
            WorkerClass::Dummy => 1,
        };
        if cores == 0 {
            return Err(SubmitError::NoCoreForClass { class: spec.class });
        }
        if spec.class != WorkerClass::Dummy && !self.p.has_kernel(spec.kernel) {
            return Err(SubmitError::UnknownKernel {
                kernel: spec.kernel,
            });
        }
        for &dep in spec.deps {
            if dep.epoch() != cfg.epoch {
                return Err(SubmitError::StaleDependency {
                    dep,
                    epoch: cfg.epoch,
                });
            }
            if dep.ring() >= cfg.rings {
                return Err(SubmitError::ForeignDependency {
                    dep,
                    rings: cfg.rings,
                });
            }
            let next = self.next[dep.ring() as usize];
            if dep.seq().0 >= next {
                return Err(SubmitError::NotYetSubmitted { dep, next });
            }
        }
        Ok(())
    }
}

/// Checks each tensor argument (at most `MAX_TENSORS`) and puts its footprint in
/// `footprints`.
#[inline(always)]
fn check_tensors(tensors: &[TensorArg], footprints: &mut Footprints) -> Result<(), SubmitError> {
    for arg in tensors {
        let b = &arg.buffer;
        // Valid and inside its buffer, tested at once: which it is not is found out of line.
        let (f, ok) = arg.tile.footprint_inside(b.base, b.end());
        if !ok {
            // Each argument before this one has its footprint.
            return Err(refusal(footprints.len(), arg));
        }
        // At most max_tensors <= MAX_TENSORS (checked by the caller): cannot fail. Pushed
        // field by field: a copy of `f` would copy its padding too.
        let _ = footprints.push(Footprint {
            lo: f.lo,
            hi: f.hi,
            dense: f.dense,
        });
    }
    Ok(())
}

/// Why tensor argument `index`, `arg`, was refused: its tile is not valid (the first
/// problem found), or not inside its buffer.
#[cold]
#[inline(never)]
fn refusal(index: usize, arg: &TensorArg) -> SubmitError {
    let b = arg.buffer;
    let error = match arg.tile.footprint_error() {
        Err(e) => e,
        Ok(f) => TileError::OutsideBuffer {
            first: f.lo,
            end: f.hi,
            base: b.base,
            len: b.len,
        },
    };
    SubmitError::BadTensor { index, error }
}

/// Distinct ids among `deps`, counted up to `stop` (at most `MAX_DEPS + 1`).
fn distinct_deps(deps: &[TaskId], stop: usize) -> usize {
    let mut seen = heapless::Vec::<TaskId, { MAX_DEPS as usize + 1 }>::new();
    for &d in deps {
        if !seen.contains(&d) && seen.push(d).is_err() {
            break;
        }
        if seen.len() >= stop {
            break;
        }
    }
    seen.len()
}
