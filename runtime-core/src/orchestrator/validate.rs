//! Checking a task before anything of it is kept: every refusal is a typed error that says
//! what to change.
#![forbid(unsafe_code)]

use super::{Orchestrator, TaskSpec};
use crate::PredicateError;
use crate::error::SubmitError;
use crate::ids::{CoreId, TaskId, WorkerClass};
use crate::orchestrator::tensor_map::TensorArg;
use crate::platform::Platform;
use crate::region::config::{Config, MAX_DEPS};
use crate::tensor::tile::{Footprint, TileError};

impl<P: Platform> Orchestrator<'_, '_, P> {
    /// Checks `spec`, whose tensor arguments are `tensors`, against the configuration and
    /// the run; all but the tiles, which the tensor map checks as it adds each argument
    /// (and [`check_tiles`] before a wait). A refusal found here is reported as the first bad
    /// tile's when there is one, as the tiles are checked first.
    #[inline(always)]
    pub(super) fn validate(
        &self,
        spec: &TaskSpec<'_>,
        tensors: &[TensorArg],
    ) -> Result<(), SubmitError> {
        let cfg = &self.t.cfg();
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
        self.validate_rest(spec)
            .map_err(|e| tiles_first(tensors, e))
    }

    /// [`Orchestrator::validate`]'s checks after the tiles'.
    #[inline(always)]
    fn validate_rest(&self, spec: &TaskSpec<'_>) -> Result<(), SubmitError> {
        let cfg = &self.t.cfg();
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
        if self.served & 1 << spec.class.index() == 0 {
            return Err(SubmitError::NoCoreForClass { class: spec.class });
        }
        if spec.class != WorkerClass::Dummy && !self.p.has_kernel(spec.kernel) {
            return Err(SubmitError::UnknownKernel {
                kernel: spec.kernel,
            });
        }
        if !spec.is_plain() {
            self.validate_shape(spec)?;
        }
        self.check_deps(spec.deps)
    }

    /// Checks that each of `deps` names a task this run submitted.
    #[inline(always)]
    pub(super) fn check_deps(&self, deps: &[TaskId]) -> Result<(), SubmitError> {
        let cfg = &self.t.cfg();
        for &dep in deps {
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

impl<P: Platform> Orchestrator<'_, '_, P> {
    /// Checks the blocks, sync start and lane kernels of `spec`, a task that has some.
    #[cold]
    #[inline(never)]
    fn validate_shape(&self, spec: &TaskSpec<'_>) -> Result<(), SubmitError> {
        let cfg = &self.t.cfg();
        if spec.blocks != 1 {
            let max = class_cores(cfg, spec.class);
            if spec.blocks == 0 || spec.blocks > max {
                return Err(SubmitError::BadBlocks {
                    blocks: spec.blocks,
                    class: spec.class,
                    max,
                });
            }
        }
        if spec.sync_start {
            let max = self.sync_max[spec.class.index()];
            if spec.blocks > max {
                return Err(SubmitError::SyncStartTooWide {
                    blocks: spec.blocks,
                    class: spec.class,
                    max,
                });
            }
        }
        if let Some(p) = &spec.predicate {
            p.check()
                .and_then(|()| match self.p.read_value(p.addr, p.width) {
                    Some(_) => Ok(()),
                    None => Err(PredicateError::Unreadable { addr: p.addr }),
                })
                .map_err(|error| SubmitError::BadPredicate { error })?;
        }
        if let Some(aiv) = spec.aiv_kernels {
            if spec.class != WorkerClass::Mix {
                return Err(SubmitError::LaneKernelsNotMix { class: spec.class });
            }
            if let Some(&kernel) = aiv.iter().find(|&&k| !self.p.has_kernel(k)) {
                return Err(SubmitError::UnknownKernel { kernel });
            }
        }
        Ok(())
    }
}

/// The classes `cfg` gives cores to run on: bit `class.index()` (DUMMY tasks run on none
/// and are always served), computed once so a submit tests one bit.
pub(super) fn served_classes(cfg: &Config) -> u8 {
    WorkerClass::ALL.iter().fold(0, |mask, &class| {
        if class_cores(cfg, class) == 0 {
            mask
        } else {
            mask | 1 << class.index()
        }
    })
}

/// By class, the most cores (clusters for MIX; 1 for DUMMY) one scheduler of `cfg` owns.
pub(super) fn sync_max(cfg: &Config) -> [u16; WorkerClass::COUNT] {
    let mut max = [0u16; WorkerClass::COUNT];
    for s in 0..cfg.schedulers.max(1) {
        let owned = |range: core::ops::Range<u16>, step: u16| {
            range
                .step_by(step as usize)
                .filter(|&c| cfg.scheduler_of(CoreId(c)) == s)
                .count() as u16
        };
        let aiv0 = cfg.aic_cores;
        let counts = [
            (WorkerClass::Aic, owned(0..cfg.aic_cores, 1)),
            (WorkerClass::Aiv, owned(aiv0..aiv0 + cfg.aiv_cores, 1)),
            // A cluster is its AIC with two AIVs: counted by its AIC.
            (WorkerClass::Mix, owned(0..cfg.mix_clusters(), 1)),
        ];
        for (class, n) in counts {
            max[class.index()] = max[class.index()].max(n);
        }
    }
    max[WorkerClass::Dummy.index()] = 1;
    max
}

/// What runs a task of `class` on `cfg`'s machine: its cores (clusters for MIX); 1 for
/// DUMMY, which runs on none. The most SPMD blocks such a task may have.
fn class_cores(cfg: &Config, class: WorkerClass) -> u16 {
    match class {
        WorkerClass::Aic => cfg.aic_cores,
        WorkerClass::Aiv => cfg.aiv_cores,
        WorkerClass::Mix => cfg.mix_clusters(),
        WorkerClass::Dummy => 1,
    }
}

/// The footprint of `arg`'s tile, and whether the tile is valid, inside its buffer and of
/// its dtype's element size (if not, the footprint means nothing; [`check_tiles`] says
/// why).
#[inline(always)]
pub(super) fn footprint_inside(arg: &TensorArg) -> (Footprint, bool) {
    let b = &arg.buffer;
    let (f, ok) = arg.tile.footprint_inside(b.base, b.end());
    (f, ok & dtype_fits(arg))
}

/// Whether `arg`'s dtype, if it has one, is as wide as its tile's elements.
#[inline(always)]
fn dtype_fits(arg: &TensorArg) -> bool {
    crate::Dtype::fits(arg.dtype, arg.tile.elem)
}

/// Checks each tensor argument's tile: valid and inside its buffer.
#[cold]
#[inline(never)]
pub(super) fn check_tiles(tensors: &[TensorArg]) -> Result<(), SubmitError> {
    for (index, arg) in tensors.iter().enumerate() {
        // Valid and inside its buffer, tested at once: which it is not is found out of line.
        if !footprint_inside(arg).1 {
            return Err(refusal(index, arg));
        }
    }
    Ok(())
}

/// `error`, found once the tiles would have been checked, unless a tile of `tensors` is
/// refused: that refusal comes first.
#[cold]
#[inline(never)]
pub(super) fn tiles_first(tensors: &[TensorArg], error: SubmitError) -> SubmitError {
    check_tiles(tensors).err().unwrap_or(error)
}

/// Why tensor argument `index`, `arg`, was refused: its tile is not valid (the first
/// problem found), or not inside its buffer.
#[cold]
#[inline(never)]
fn refusal(index: usize, arg: &TensorArg) -> SubmitError {
    let b = arg.buffer;
    let error = match (arg.tile.footprint_error(), arg.dtype) {
        (Err(e), _) => e,
        (Ok(_), Some(dtype)) if !dtype_fits(arg) => TileError::DtypeSize {
            dtype,
            elem: arg.tile.elem,
        },
        (Ok(f), _) => TileError::OutsideBuffer {
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
