//! The AICore's side of the register protocol, in Rust: what a core's dispatch loop does
//! with its block. The tests play cores with it; a C implementation follows the same steps
//! against the layout of [`crate::block`].
//!
//! 0. At start, continue the token sequence after the last token reported in the status word
//!    (a run never reuses a token an earlier run saw).
//! 1. Wait until the doorbell of the slot of the next token (by parity) holds that token.
//! 2. Acquire barrier; read the payload; report ACK.
//! 3. Run the kernel; write its times (if asked) and its deferred conditions.
//! 4. Write the slot's result word (done, or failed with a code); release barrier; report FIN.
#![forbid(unsafe_code)]

use pto_runtime_core::{ResultWord, StatusWord, Token};

use crate::block::{RawCondition, SLOT_ARGS};
use crate::raw::arch;
use crate::raw::regs::CoreRegs;

/// One dispatched lane, as the core reads it.
#[derive(Clone, Copy, Debug)]
pub struct Dispatch {
    /// The token.
    pub token: Token,
    /// The task's raw id.
    pub task: u64,
    /// The kernel.
    pub kernel: u32,
    /// This lane, and the task's lanes.
    pub lane: u8,
    /// Lanes of the task.
    pub lanes: u8,
    /// Whether the scheduler wants the kernel's times.
    pub profile: bool,
    /// Scalar arguments; the first `nargs` are valid.
    pub args: [u64; SLOT_ARGS],
    /// Valid arguments.
    pub nargs: usize,
}

/// A core's end of its register block.
#[derive(Debug)]
pub struct AicoreSide<'a> {
    regs: CoreRegs<'a>,
    next: Token,
}

impl<'a> AicoreSide<'a> {
    /// The core side of `regs`, expecting the token after the last one its status word
    /// reports.
    pub fn new(regs: CoreRegs<'a>) -> Self {
        let last = StatusWord::from_bits(regs.status()).token();
        AicoreSide {
            regs,
            next: last.next(),
        }
    }

    /// The next dispatch, if its doorbell rang; reports ACK for it.
    pub fn poll(&mut self) -> Option<Dispatch> {
        let t = self.next;
        let p = (t.bits() & 1) as usize;
        if self.regs.doorbell(p) != t.bits() {
            return None;
        }
        arch::device_acquire();
        let mut args = [0u64; SLOT_ARGS];
        let (task, kernel, shape) = self.regs.read_payload(p, &mut args);
        self.next = t.next();
        self.regs.set_status(StatusWord::ack(t).bits());
        Some(Dispatch {
            token: t,
            task,
            kernel,
            lane: shape as u8,
            lanes: (shape >> 8) as u8,
            profile: (shape >> 24) & 1 == 1,
            args,
            nargs: ((shape >> 16) & 0xff) as usize,
        })
    }

    /// Reports `d` finished: its times (used if the payload asked for them), then its
    /// deferred conditions (`count` registered, the first ones in `items`), then FIN.
    pub fn finish(&self, d: &Dispatch, times: [u64; 2], count: u32, items: &[RawCondition]) {
        let p = (d.token.bits() & 1) as usize;
        if d.profile {
            self.regs.set_times(p, times);
        }
        self.regs.set_conditions(p, count, items);
        self.report(d, ResultWord::done(d.token));
    }

    /// Reports `d` failed with `code`.
    pub fn fail(&self, d: &Dispatch, code: u32) {
        self.report(d, ResultWord::failed(d.token, code));
    }

    /// Writes `d`'s result word, then (after a release barrier) its FIN.
    fn report(&self, d: &Dispatch, result: ResultWord) {
        self.regs
            .set_result((d.token.bits() & 1) as usize, result.bits());
        arch::device_barrier();
        self.regs.set_status(StatusWord::fin(d.token).bits());
    }
}
