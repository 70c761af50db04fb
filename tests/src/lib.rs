//! Workspace integration tests live in `tests/`; this library holds what several of them
//! share.

pub mod dag;

use pto_runtime_core::{FatalError, RunReport};
use pto_sim::{SimError, SimRun};

/// What a run that was expected to fail left: its error, what the orchestration returned and
/// its report. Panics (a test failure) if the run succeeded or could not start.
pub fn failed<R: 'static>(result: Result<SimRun<R>, SimError>) -> (FatalError, R, RunReport) {
    match result {
        Ok(out) => panic!(
            "the run was expected to fail but finished: {:?}",
            out.report
        ),
        Err(SimError::Run { error, mut run }) => {
            let value = run
                .take_value::<R>()
                .expect("a failed run keeps what the orchestration returned");
            (error, value, run.run.report)
        }
        Err(e) => panic!("the run could not start: {e}"),
    }
}
