//! The simulator's check for a forgotten dependency ([`crate::SimOptions::check_accesses`]).
//!
//! While a run goes, the check records the byte ranges each task's kernel reads and writes
//! through the memory API and tensor views ([`log`]; atomic word accesses, what counters and
//! flags use, are synchronisation and are left out), the transfers it posts (the source
//! read, the destination written), and, at each submit, what the task declared: its
//! dependencies and its tensor arguments ([`order`]). After the run, two tasks that touched
//! the same bytes, one of them writing, with no declared order between them (a dependency
//! named, or conflicting tiles of one buffer, directly or through other tasks) are a race:
//! which ran first was the run's timing, so the run fails naming both. The verdict depends on
//! what the program declared and touched, never on timing: a forgotten dependency is found
//! in every run, not one in twenty.
//!
//! A C kernel reaches memory through raw pointers, which the simulator cannot see: its task
//! counts as touching exactly the tiles it declared. An access outside every tensor a task
//! declared is reported too (not a failure: a kernel may own scratch memory).

mod log;
mod order;
mod report;
mod sweep;

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use pto_runtime_core::{KernelId, TaskId, TaskSpec, TensorArg, Tile, WorkerClass};

use crate::kernels::KernelTable;

pub(crate) use log::{begin, end, record};
pub use report::{AccessReport, LISTED, Race, TaskName, Undeclared};

use log::{Touched, merged};
use order::DeclaredOrder;
use sweep::{Touch, races};

/// Most ranges one declared tile of a C kernel expands to (its innermost runs); past that,
/// the tile counts as its whole byte range (coarser: it can only find more overlaps).
const MAX_RUNS: usize = 1 << 16;

/// What one task declared.
struct Declared {
    id: TaskId,
    kernel: Option<KernelId>,
    tensors: Vec<TensorArg>,
}

#[derive(Default)]
struct State {
    order: DeclaredOrder,
    declared: Vec<Declared>,
    touched: HashMap<TaskId, Touched>,
}

/// A run's access check: fed by the orchestrator (each submit) and the cores (each kernel's
/// accesses), read once the run is over.
#[derive(Default)]
pub(crate) struct AccessChecker {
    state: Mutex<State>,
}

impl AccessChecker {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Task `id` was submitted with `spec` (the orchestrator's thread, in submission order).
    pub(crate) fn submitted(&self, id: TaskId, spec: &TaskSpec<'_>) {
        let mut s = self.state();
        s.order.add(id, spec.deps, spec.tensors);
        s.declared.push(Declared {
            id,
            kernel: (spec.class != WorkerClass::Dummy).then_some(spec.kernel),
            tensors: spec.tensors.to_vec(),
        });
    }

    /// A lane of `task` ran and touched `touched` (a core's thread).
    pub(crate) fn ran(&self, task: TaskId, touched: Touched) {
        if touched.reads.is_empty() && touched.writes.is_empty() {
            return;
        }
        self.state().touched.entry(task).or_default().merge(touched);
    }

    /// What the run's accesses show, its kernels named from `kernels`.
    pub(crate) fn report(&self, kernels: &KernelTable) -> AccessReport {
        let s = self.state();
        let name = |d: &Declared| TaskName {
            id: d.id,
            kernel: d.kernel.unwrap_or(KernelId(u32::MAX)),
            name: d
                .kernel
                .and_then(|k| kernels.name(k))
                .map(str::to_owned)
                .or_else(|| d.kernel.is_none().then(|| "DUMMY".to_owned())),
        };
        let mut report = AccessReport {
            tasks: s.declared.len(),
            ..AccessReport::default()
        };
        let mut touches = Vec::new();
        for (i, d) in s.declared.iter().enumerate() {
            let Some(kernel) = d.kernel else { continue };
            let touched = if kernels.is_opaque(kernel) {
                report.opaque += 1;
                declared_touches(&d.tensors)
            } else {
                let t = s.touched.get(&d.id).cloned().unwrap_or_default();
                if let Some(u) = undeclared(&t, &d.tensors) {
                    report.undeclared_count += 1;
                    if report.undeclared.len() < LISTED {
                        report.undeclared.push(Undeclared { task: name(d), ..u });
                    }
                }
                t
            };
            let task = i as u32;
            touches.extend(touched.reads.iter().map(|&(lo, hi)| Touch {
                task,
                lo,
                hi,
                write: false,
            }));
            touches.extend(touched.writes.iter().map(|&(lo, hi)| Touch {
                task,
                lo,
                hi,
                write: true,
            }));
        }
        let found = races(touches, &s.order);
        report.race_count = found.len();
        report.races = found
            .iter()
            .take(LISTED)
            .map(|f| Race {
                first: name(&s.declared[f.first as usize]),
                first_writes: f.first_writes,
                second: name(&s.declared[f.second as usize]),
                second_writes: f.second_writes,
                bytes: f.bytes,
            })
            .collect();
        report
    }
}

/// What a task that touches exactly its declared tiles touches: each tile's innermost runs,
/// read for an input, written for an output, both for an in-out tile.
fn declared_touches(tensors: &[TensorArg]) -> Touched {
    let (mut reads, mut writes) = (Vec::new(), Vec::new());
    for a in tensors {
        let runs = runs(&a.tile);
        if a.access.reads() {
            reads.extend_from_slice(&runs);
        }
        if a.access.writes() {
            writes.extend(runs);
        }
    }
    Touched {
        reads: merged(reads),
        writes: merged(writes),
    }
}

/// The byte ranges of `t`'s innermost runs (contiguous runs whole); its byte range as one
/// when it has more than [`MAX_RUNS`] of them.
fn runs(t: &Tile) -> Vec<(u64, u64)> {
    let Ok(span) = t.bytes() else {
        return Vec::new();
    };
    let rank = (t.rank as usize).clamp(1, pto_runtime_core::MAX_RANK);
    let (shape, strides) = (&t.shape[..rank], &t.strides[..rank]);
    let elem = u64::from(t.elem);
    let inner = u64::from(shape[rank - 1]);
    let contiguous = strides[rank - 1] == 1;
    let per_row = if contiguous { 1 } else { inner };
    let rows: u64 = shape[..rank - 1].iter().map(|&n| u64::from(n)).product();
    if rows.saturating_mul(per_row) > MAX_RUNS as u64 || t.is_dense() {
        return vec![span];
    }
    let mut out = Vec::new();
    let mut index = vec![0u64; rank - 1];
    loop {
        let off: u64 = index.iter().zip(strides).map(|(&i, &s)| i * s).sum();
        let at = t.base + off * elem;
        if contiguous {
            out.push((at, at + inner * elem));
        } else {
            for j in 0..inner {
                let e = at + j * strides[rank - 1] * elem;
                out.push((e, e + elem));
            }
        }
        let Some(d) = (0..rank - 1)
            .rev()
            .find(|&d| index[d] + 1 < u64::from(shape[d]))
        else {
            return out;
        };
        index[d] += 1;
        index[d + 1..].iter_mut().for_each(|i| *i = 0);
    }
}

/// The first range of `t` outside what `tensors` declare (reads: any tensor; writes: the
/// written ones), with how many such ranges there are; `None` if all are inside.
fn undeclared(t: &Touched, tensors: &[TensorArg]) -> Option<Undeclared> {
    let spans = |written_only: bool| {
        merged(
            tensors
                .iter()
                .filter(|a| !written_only || a.access.writes())
                .filter_map(|a| a.tile.bytes().ok())
                .collect(),
        )
    };
    let inside =
        |spans: &[(u64, u64)], (lo, hi): (u64, u64)| spans.iter().any(|&(a, b)| a <= lo && hi <= b);
    let (all, written) = (spans(false), spans(true));
    let outside_reads: Vec<_> = t.reads.iter().filter(|&&r| !inside(&all, r)).collect();
    let outside_writes: Vec<_> = t.writes.iter().filter(|&&r| !inside(&written, r)).collect();
    let ranges = outside_reads.len() + outside_writes.len();
    let (bytes, write) = match (outside_writes.first(), outside_reads.first()) {
        (Some(&&w), _) => (w, true),
        (None, Some(&&r)) => (r, false),
        (None, None) => return None,
    };
    Some(Undeclared {
        task: TaskName {
            id: TaskId::from_raw(0),
            kernel: KernelId(0),
            name: None,
        },
        write,
        bytes,
        ranges,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pto_runtime_core::Buffer;

    #[test]
    fn a_declared_tile_touches_its_rows_not_the_holes_between() {
        let block = Tile::block(0x1000, 4, 2, 2, 8); // two rows of 8 bytes, 32 bytes apart
        assert_eq!(runs(&block), [(0x1000, 0x1008), (0x1020, 0x1028)]);
        let column = Tile {
            rank: 1,
            shape: [3, 1, 1, 1, 1],
            strides: [4, 0, 0, 0, 0],
            ..Tile::contiguous(0x2000, 8, 1)
        };
        assert_eq!(
            runs(&column),
            [(0x2000, 0x2008), (0x2020, 0x2028), (0x2040, 0x2048)]
        );
        assert_eq!(runs(&Tile::contiguous(0x10, 4, 4)), [(0x10, 0x20)]);
    }

    #[test]
    fn accesses_outside_the_declared_tiles_are_found_writes_first() {
        let buf = Buffer::new(0x1000, 0x100);
        let tensors = [
            TensorArg::input(buf, Tile::contiguous(0x1000, 4, 16)),
            TensorArg::output(buf, Tile::contiguous(0x1040, 4, 16)),
        ];
        let inside = Touched {
            reads: vec![(0x1000, 0x1080)],
            writes: vec![(0x1040, 0x1080)],
        };
        assert_eq!(undeclared(&inside, &tensors), None);
        let outside = Touched {
            reads: vec![(0x1000, 0x1040), (0x2000, 0x2008)],
            writes: vec![(0x1000, 0x1008)],
        };
        let u = undeclared(&outside, &tensors).unwrap();
        assert_eq!((u.write, u.bytes, u.ranges), (true, (0x1000, 0x1008), 2));
    }
}
