//! Scopes: tasks submitted inside one keep their slots (and the buffers in them) until it
//! ends; and the deadlock a full window or heap would be when only a scope's end could free
//! it.
#![forbid(unsafe_code)]

use super::{MAX_SCOPE_DEPTH, Orchestrator};
use crate::error::SubmitError;
use crate::ids::{Seq, TaskId};
use crate::platform::Platform;
use crate::sync::Ordering;
use crate::tables::reclaim::release_hold;

impl<P: Platform> Orchestrator<'_, '_, P> {
    /// Opens a scope: every task submitted until the matching [`Orchestrator::scope_end`]
    /// keeps its slot (and the outputs in it) at least until then, even once it and its
    /// consumers are done. Scopes nest up to [`MAX_SCOPE_DEPTH`] deep.
    pub fn scope_begin(&mut self) -> Result<(), SubmitError> {
        self.scopes
            .push(self.next)
            .map_err(|_| SubmitError::ScopeTooDeep {
                max: MAX_SCOPE_DEPTH,
            })
    }

    /// Ends the innermost open scope: its tasks may now be reclaimed once they and their
    /// consumers are done.
    pub fn scope_end(&mut self) -> Result<(), SubmitError> {
        let start = self.scopes.pop().ok_or(SubmitError::NoOpenScope)?;
        let t = self.t;
        for (ring, (&from, &to)) in start.iter().zip(&self.next).enumerate() {
            for seq in from..to {
                let g = t.gslot(TaskId::new(t.cfg().epoch, ring as u8, Seq(seq)));
                let slot = t.slot(g);
                // Tasks of inner scopes ended already; theirs slots may have new tenants.
                let row = self.tenants.row_mut(g);
                if slot.seq.load(Ordering::Relaxed) == seq && core::mem::take(&mut row.scoped) {
                    release_hold(&t, g);
                }
            }
        }
        Ok(())
    }

    /// Runs `body` inside a scope.
    pub fn scope<R>(&mut self, body: impl FnOnce(&mut Self) -> R) -> Result<R, SubmitError> {
        self.scope_begin()?;
        let r = body(self);
        self.scope_end()?;
        Ok(r)
    }

    /// Fails at once if slot `seq` of `ring` can only free up when a task held by an open
    /// scope retires.
    pub(super) fn check_scope_deadlock(&self, ring: usize, seq: u64) -> Result<(), SubmitError> {
        let t = self.t;
        let window = t.window() as u64;
        let retired = t.rings()[ring].retired();
        for s in retired..=seq.saturating_sub(window) {
            let g = t.gslot(TaskId::new(t.cfg().epoch, ring as u8, Seq(s)));
            let slot = t.slot(g);
            if slot.seq.load(Ordering::Relaxed) == s && self.tenants.row(g).scoped {
                return Err(SubmitError::ScopeDeadlock {
                    held: TaskId::new(t.cfg().epoch, ring as u8, Seq(s)),
                    ring: ring as u8,
                    window: t.window() as u32,
                    open: self.scopes.len(),
                });
            }
        }
        Ok(())
    }
}
