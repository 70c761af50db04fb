//! SPMD blocks: a task of several blocks runs as that many executions of its kernel, one
//! per core of its class (cluster for MIX). Whichever scheduler pops the task from its
//! ready queue claims as many of its next blocks as it has free cores; if blocks remain, it
//! queues the task again at once, so other schedulers take the rest on their cores while it
//! sends its own. The task finishes with its last lane's FIN, whoever retires it.
//!
//! Only the scheduler holding the task (popped, not queued again yet) moves its next block:
//! the queue's push (Release) and pop (Acquire) order one holder's store before the next
//! holder's load, so the word needs no read-modify-write.
#![forbid(unsafe_code)]

use core::ops::Range;

use crate::error::{FatalCause, FatalError};
use crate::ids::{TaskId, WorkerClass};
use crate::region::slot::Blocks;
use crate::sync::Ordering;
use crate::tables::ready::Ready;
use crate::tables::{SlotIndex, Tables};

/// The blocks a scheduler claimed of a task: `count` in all, these ones its own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Claim {
    /// Blocks of the task.
    pub(crate) count: u16,
    /// The blocks claimed, in order.
    pub(crate) mine: Range<u16>,
}

/// Claims up to `free` (at least 1) of the next blocks of `task` (slot `g`, whose blocks
/// word read `b`), which the caller just popped from `class`'s ready queue; queues the task
/// again if blocks remain. A task of one block is claimed whole without a store.
#[inline]
pub(crate) fn claim(
    t: &Tables<'_>,
    task: TaskId,
    g: SlotIndex,
    class: WorkerClass,
    b: Blocks,
    free: u16,
) -> Claim {
    let slot = t.slot(g);
    if b.next >= b.count {
        // A queued task always has a block left: its blocks word was overwritten. Fail the
        // run, naming the task, rather than lose it.
        t.shared()
            .status()
            .fail(FatalError::new(FatalCause::CorruptSlot { class: class as u8 }).with_task(task));
    }
    let end = b.next.saturating_add(free.max(1)).min(b.count);
    let mine = b.next.min(end)..end;
    if end < b.count {
        slot.blocks.store(
            Blocks {
                count: b.count,
                next: end,
            }
            .pack(),
            Ordering::Relaxed,
        );
        Ready { id: task, class }.enqueue(t);
    }
    Claim {
        count: b.count,
        mine,
    }
}
