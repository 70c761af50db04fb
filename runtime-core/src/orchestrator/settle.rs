//! The orchestrator's own reads and writes of the data its tasks produce: a bounded wait,
//! while the schedulers run on, until no task submitted so far still works on a tile, so
//! that a value a kernel computed can steer the orchestration.
#![forbid(unsafe_code)]

use core::cell::Cell;

use super::Orchestrator;
use super::tensor_map::Covered;
use super::validate;
use crate::error::SubmitError;
use crate::ids::TaskId;
use crate::platform::Platform;
use crate::region::slot::state;
use crate::sync::Ordering;
use crate::tables::Tables;
use crate::tensor::arg::TensorArg;

/// Where a task the tile waits for stands.
enum Stop {
    /// Still to finish.
    Busy(TaskId),
    /// Finished cancelled: its output never came.
    Cancelled(TaskId),
}

impl<P: Platform> Orchestrator<'_, '_, P> {
    /// Waits until the orchestrator may touch `arg`'s tile itself: until every task
    /// submitted so far that a task with this argument would wait for has finished (for a
    /// read, [`Access::In`](crate::Access::In), the tasks writing the tile; for a write,
    /// those reading it too). Then its bytes are the producers' (on a machine whose caches
    /// are not coherent they are invalidated here): read them, or write them and call
    /// [`Orchestrator::wrote`] before submitting the tasks that read them.
    ///
    /// Bounded by `submit_timeout_us` ([`SubmitError::TileBusy`] names the task still
    /// working); a tile whose writer was cancelled is [`SubmitError::TileCancelled`]; an
    /// invalid tile is [`SubmitError::BadTensor`]. Only tasks that declared the tile as a
    /// tensor argument are waited for.
    pub fn settle(&mut self, arg: &TensorArg) -> Result<(), SubmitError> {
        validate::check_tiles(core::slice::from_ref(arg))?;
        self.check_running()?;
        let (fp, _) = validate::footprint_inside(arg);
        let last = Cell::new(None);
        self.wait_bounded(
            |o, _| match o.first_unsettled(arg, (fp.lo, fp.hi)) {
                None => Ok(Some(())),
                Some(Stop::Busy(task)) => {
                    last.set(Some(task));
                    Ok(None)
                }
                Some(Stop::Cancelled(task)) => Err(SubmitError::TileCancelled { task }),
            },
            |waited_us| SubmitError::TileBusy {
                task: last.get().unwrap_or(TaskId::from_raw(0)),
                waited_us,
            },
        )?;
        self.p.invalidate(fp.lo, (fp.hi - fp.lo) as usize);
        Ok(())
    }

    /// Says the orchestrator wrote `arg`'s tile (after [`Orchestrator::settle`]): on a
    /// machine whose caches are not coherent its bytes are written back, so the kernels of
    /// tasks submitted from now on read them. An invalid tile is [`SubmitError::BadTensor`].
    pub fn wrote(&mut self, arg: &TensorArg) -> Result<(), SubmitError> {
        validate::check_tiles(core::slice::from_ref(arg))?;
        let (fp, _) = validate::footprint_inside(arg);
        self.p.clean(fp.lo, (fp.hi - fp.lo) as usize);
        Ok(())
    }

    /// The first task in the tensor map that a task with `arg` (footprint `range`) would
    /// wait for and that has not finished, or finished cancelled.
    fn first_unsettled(&self, arg: &TensorArg, range: (u64, u64)) -> Option<Stop> {
        let mut covered = Covered::default();
        self.tensors
            .conflicts(arg, range, &mut covered, |task| {
                match progress(&self.t, task) {
                    Progress::Done => Ok(()),
                    Progress::Busy => Err(Stop::Busy(task)),
                    Progress::Cancelled => Err(Stop::Cancelled(task)),
                }
            })
            .err()
    }
}

/// What became of a submitted task.
enum Progress {
    Busy,
    Done,
    Cancelled,
}

/// Where `task` stands. A slot holding a later tenant means `task` finished long ago (only
/// the orchestrator, this thread, reuses slots). Acquire: what a finished task's kernels
/// wrote is visible once its COMPLETED is read (the funnel stores it with Release after
/// the lanes' FIN, which carry the kernels' writes).
fn progress(t: &Tables<'_>, task: TaskId) -> Progress {
    let slot = t.slot(t.gslot(task));
    if slot.seq.load(Ordering::Acquire) != task.seq().0 {
        return Progress::Done;
    }
    if slot.state.load(Ordering::Acquire) < state::COMPLETED {
        return Progress::Busy;
    }
    if slot.failed.load(Ordering::Relaxed) != 0 {
        Progress::Cancelled
    } else {
        Progress::Done
    }
}
