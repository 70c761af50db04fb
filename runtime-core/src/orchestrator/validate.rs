//! Checking a task before anything of it is kept: every refusal is a typed error that says
//! what to change.
#![forbid(unsafe_code)]

use super::{Footprints, Orchestrator, TaskSpec};
use crate::error::SubmitError;
use crate::ids::{TaskId, WorkerClass};
use crate::orchestrator::tensor::TileError;
use crate::orchestrator::tensor_map::TensorArg;
use crate::platform::Platform;
use crate::region::config::MAX_DEPS;

impl<P: Platform> Orchestrator<'_, '_, P> {
    /// Checks `spec` against the configuration and the run, and puts each tensor argument's
    /// footprint (computed once here) in `footprints`.
    #[inline(always)]
    pub(super) fn validate(
        &self,
        spec: &TaskSpec<'_>,
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
        if spec.tensors.len() > cfg.max_tensors as usize {
            return Err(SubmitError::TooManyTensors {
                given: spec.tensors.len(),
                max: cfg.max_tensors,
            });
        }
        if !spec.tensors.is_empty() {
            check_tensors(spec.tensors, footprints)?;
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
    for (index, arg) in tensors.iter().enumerate() {
        let Some(f) = arg.tile.valid_footprint() else {
            // Never `Ok`: the tile was just refused.
            let error = arg.tile.footprint_error().err();
            return Err(SubmitError::BadTensor {
                index,
                error: error.unwrap_or(TileError::TooLarge),
            });
        };
        // `Buffer::holds` for a range known not to be empty (`f.lo < f.hi`): without the
        // saturating end, as `f.hi - base` cannot wrap once `base <= f.lo`.
        if arg.buffer.base > f.lo || f.hi - arg.buffer.base > arg.buffer.len {
            return Err(SubmitError::BadTensor {
                index,
                error: TileError::OutsideBuffer {
                    first: f.lo,
                    end: f.hi,
                    base: arg.buffer.base,
                    len: arg.buffer.len,
                },
            });
        }
        // At most max_tensors <= MAX_TENSORS (checked by the caller): cannot fail.
        let _ = footprints.push(f);
    }
    Ok(())
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
