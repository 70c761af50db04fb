//! Test support: the runtime's tables in heap memory (carved by the device's own carve
//! sequence), so unit tests and loom models drive the real wiring, completion and reclaim
//! code; and helpers that plant tasks in them.
#![forbid(unsafe_code)]

use crate::ids::{KernelId, Seq, TaskId, WorkerClass};
use crate::observe::profile::{NO_CELL, ProfileLevel};
use crate::observe::record::Closer;
use crate::region::slot::Meta;
use crate::scheduler::completion::Finisher;
use crate::sync::Ordering;
use crate::tables::views::RunTables;

/// A formatted region in heap memory, carved as the device's is.
pub(crate) use crate::region::raw::heap_region::HeapRegion as Owned;

/// Scheduler 0 finishing with nothing measured (no clock, profiling off).
pub(crate) fn unmeasured<'a>(t: &RunTables<'a>) -> Finisher<'a> {
    Finisher {
        ctl: &t.sched()[0],
        closer: Closer::of(0),
        now: 0,
        level: ProfileLevel::Off,
    }
}

/// Puts a task with no dependencies into slot `seq` of ring 0 as if submitted, without making
/// it ready (the caller decides who finishes it).
pub(crate) fn plant(t: &RunTables<'_>, seq: u64, class: WorkerClass) -> TaskId {
    let id = TaskId::new(t.cfg().epoch, 0, Seq(seq));
    let slot = t.slot(t.gslot(id));
    slot.begin(1, class.lanes() as u32);
    slot.cell.store(NO_CELL, Ordering::Relaxed);
    // Wired already: the caller decides who makes it ready or finishes it.
    slot.pending.store(0, Ordering::Relaxed);
    let meta = Meta::plain((KernelId(0), class), (0, 0), 0);
    slot.meta.store(meta.pack(), Ordering::Relaxed);
    slot.publish(seq);
    t.rings()[0].next.0.store(seq + 1, Ordering::Release);
    id
}

#[cfg(not(loom))]
pub(crate) use no_cores::NoCores;

#[cfg(not(loom))]
mod no_cores {
    use crate::ids::{CoreId, KernelId, Token};
    use crate::platform::{Payload, Platform};
    use crate::protocol::{ResultWord, StatusWord};

    /// A platform with a frozen clock and no cores, for code that only reads the clock.
    pub(crate) struct NoCores;

    impl Platform for NoCores {
        fn now(&self) -> u64 {
            0
        }
        fn ticks_per_us(&self) -> u64 {
            1
        }
        fn has_kernel(&self, _: KernelId) -> bool {
            true
        }
        fn write_payload(&self, _: CoreId, _: Token, _: &Payload<'_>) {}
        fn ring_doorbell(&self, _: CoreId, _: Token) {}
        fn core_status(&self, _: CoreId) -> StatusWord {
            StatusWord::NONE
        }
        fn result(&self, _: CoreId, _: Token) -> ResultWord {
            ResultWord::default()
        }
        fn spin_hint(&self, _idle: u32) {
            crate::sync::spin_loop();
        }
    }
}
