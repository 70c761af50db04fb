//! Workspace integration tests live in `tests/`; this library holds what several of them
//! share.

pub mod dag;
pub mod snippets;

use pto_runtime_core::{FatalError, RunReport};
use pto_sim::{SimError, SimOrchestrator, SimRun};

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

/// A stand-in for a kernel that never returns: [`Gate::wait`] blocks until the test calls
/// [`Gate::open`] or [`Gate::open_once_failed`] (once the run it hangs has failed), so no
/// timing decides whether the kernel outlives a timeout. The wait is bounded by
/// [`Gate::LIMIT`] all the same.
#[derive(Default)]
pub struct Gate {
    open: std::sync::Mutex<bool>,
    opened: std::sync::Condvar,
}

impl Gate {
    /// The longest a kernel waits at a gate nobody opens (a test that panicked first).
    pub const LIMIT: std::time::Duration = std::time::Duration::from_secs(60);

    /// A closed gate.
    pub fn new() -> std::sync::Arc<Self> {
        std::sync::Arc::default()
    }

    /// Blocks until the gate is open (at most [`Gate::LIMIT`]).
    pub fn wait(&self) {
        let open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let _ = self
            .opened
            .wait_timeout_while(open, Self::LIMIT, |open| !*open);
    }

    /// Waits (at most [`Gate::LIMIT`]) until the run of `o` has failed, then opens the gate:
    /// the hung kernel returns before the machine stops, which then need not wait for it.
    pub fn open_once_failed(&self, o: &SimOrchestrator<'_, '_>) {
        let deadline = std::time::Instant::now() + Self::LIMIT;
        while o.error().is_none() && std::time::Instant::now() < deadline {
            std::thread::yield_now();
        }
        self.open();
    }

    /// Opens the gate: every waiter goes on.
    pub fn open(&self) {
        *self.open.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.opened.notify_all();
    }
}
