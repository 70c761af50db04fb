//! A task slot: the hot, shared state of one live task, and the words its life moves through.
//!
//! The life of a tenant, word by word (who writes, and what each value means):
//!
//! | word | at submit ([`TaskSlot::begin`]) | then | ends at |
//! | --- | --- | --- | --- |
//! | `seq` | the tenant's sequence number, published last | - | the next tenant's `begin` |
//! | `state` | `PENDING` | `COMPLETED` in the funnel (`completion::finish`) | `CONSUMED` with the last hold (`reclaim`); the watermark passes it |
//! | `pending` | 1: the wiring hold | +1 per live producer wired, -1 as each finishes, -1 when wiring ends | 0: exactly one thread makes it ready (`ready::prepare_ready` in a scheduler, `make_submitted_ready` in the orchestrator) |
//! | `holds` | 1 (its own completion), +1 while its scope is open | +1 per consumer wired (released when that consumer finishes) | 0: `CONSUMED` |
//! | `fanout` | `EDGE_EMPTY` | consumers push their edges | `EDGE_CLOSED` when it finishes: later consumers count it as met |
//! | `lanes_left` | lanes of its class (MIX: 3) times its blocks | -1 per lane that finishes (a lane of a task of several blocks: once its own conditions hold too) | 0: its last lane finished |
//! | `blocks` | [`Blocks`]: its block count, the next block 0 (read only for a task of several, as its meta says) | the next block to dispatch, moved on by the one scheduler that popped the task from its ready queue (before it queues the task again for the rest) | - |
//! | `deferred` | 0 (no entry) | its deferred-set entry + 1, from the FIN of a lane with unmet conditions (the owning scheduler only) | 0 when the entry closes |
//! | `failed` | 0 | 1 when the task is cancelled: a transfer it waited on failed, or a producer of it was cancelled (set before the decrement that releases it, read once it is ready or finishes) | the next tenant's `begin` |
//! | `cell` | its record's cell in the profile ring, claimed at `Tasks` (else `NO_CELL`) | stamped in place by whoever readies, dispatches, retires and finishes it | the next tenant's `begin` |
//! | `aiv_kernels` | a MIX task's AIV lanes' kernels, if it names them (`meta` says) | - | - |
//! | `meta` | kernel, class, counts ([`Meta`]) once wiring pinned its producers | - | - |
#![forbid(unsafe_code)]

use crate::ids::{KernelId, WorkerClass};
use crate::region::edge::EDGE_EMPTY;
use crate::sync::{AtomicU32, AtomicU64, Ordering};

/// The record cell of a task that keeps no record (the slot's `cell` word).
pub(crate) const NO_CELL: u32 = u32::MAX;

/// Task states, in the order a tenant moves through them.
pub(crate) mod state {
    /// Never used since the region was formatted.
    pub(crate) const FREE: u32 = 0;
    /// Submitted: waiting for producers, queued or running.
    pub(crate) const PENDING: u32 = 1;
    /// Finished: its consumers are released; its outputs may still be read.
    pub(crate) const COMPLETED: u32 = 2;
    /// Completed and nobody holds it: the ring watermark may pass it.
    pub(crate) const CONSUMED: u32 = 3;
}

/// One slot of a task ring. Every field is an atomic so any thread may read it; the comments
/// say who writes. What only the orchestrator reads lives in its own row
/// (`orchestrator::store::TenantRow`), off this line.
#[repr(C, align(64))]
pub(crate) struct TaskSlot {
    /// Sequence number of the current tenant (orchestrator, at submit). `u64::MAX` if unused.
    pub(crate) seq: AtomicU64,
    /// Kernel, class and counts, packed by [`Meta`] (orchestrator, at submit).
    pub(crate) meta: AtomicU64,
    /// One of [`state`].
    pub(crate) state: AtomicU32,
    /// Producers still to finish, plus one while the orchestrator is wiring.
    pub(crate) pending: AtomicU32,
    /// Reasons the slot may not be reclaimed: its own completion, plus one per wired consumer.
    pub(crate) holds: AtomicU32,
    /// Head of the list of consumers' edges; `EDGE_CLOSED` once the task finished.
    pub(crate) fanout: AtomicU32,
    /// Lanes of a dispatched task still to report FIN.
    pub(crate) lanes_left: AtomicU32,
    /// The task's entry in its scheduler's deferred set, plus one; 0 when it has none.
    /// Written only by the scheduler that owns the task's cores.
    pub(crate) deferred: AtomicU32,
    /// 1 once the task is cancelled ([`crate::FatalKind::TransferFailed`]): it finishes
    /// without running (or, if it ran, without counting as done), and so do its consumers.
    pub(crate) failed: AtomicU32,
    /// The tenant's cell in the profile ring ([`NO_CELL`]: it keeps no record).
    pub(crate) cell: AtomicU32,
    /// Its SPMD blocks and the next one to dispatch, packed by [`Blocks`].
    pub(crate) blocks: AtomicU32,
    /// A MIX task's kernels for its AIV lanes 1 and 2, when its meta says `per_lane`
    /// (orchestrator, at submit).
    pub(crate) aiv_kernels: [AtomicU32; 2],
}

impl TaskSlot {
    /// Starts a new tenant (the orchestrator, once the slot is free): `PENDING`, held
    /// `holds` times, waiting for the wiring hold only, no consumers, `lanes` lanes to
    /// finish (of its one block: a task of several says so next, [`TaskSlot::shape`]). The
    /// tenant is not visible until [`TaskSlot::publish`].
    #[inline]
    pub(crate) fn begin(&self, holds: u32, lanes: u32) {
        self.holds.store(holds, Ordering::Relaxed);
        self.pending.store(1, Ordering::Relaxed);
        self.fanout.store(EDGE_EMPTY, Ordering::Relaxed);
        self.lanes_left.store(lanes, Ordering::Relaxed);
        self.failed.store(0, Ordering::Relaxed);
        self.state.store(state::PENDING, Ordering::Relaxed);
    }

    /// A new tenant of `blocks` blocks of `lanes` lanes each (after [`TaskSlot::begin`],
    /// before [`TaskSlot::publish`]): its lanes to finish and its blocks' word.
    #[inline]
    pub(crate) fn shape(&self, lanes: u32, blocks: u16) {
        self.lanes_left
            .store(lanes * blocks as u32, Ordering::Relaxed);
        self.blocks
            .store(Blocks::first(blocks).pack(), Ordering::Relaxed);
    }

    /// Publishes tenant `seq` (Release): a scheduler that reads this sequence number sees
    /// the words [`TaskSlot::begin`] wrote, never the previous tenant's `CONSUMED`.
    #[inline]
    pub(crate) fn publish(&self, seq: u64) {
        self.seq.store(seq, Ordering::Release);
    }

    /// A slot that has never held a task.
    pub(crate) fn new() -> Self {
        TaskSlot {
            seq: AtomicU64::new(u64::MAX),
            meta: AtomicU64::new(0),
            state: AtomicU32::new(state::FREE),
            pending: AtomicU32::new(0),
            holds: AtomicU32::new(0),
            fanout: AtomicU32::new(crate::region::edge::EDGE_CLOSED),
            lanes_left: AtomicU32::new(0),
            deferred: AtomicU32::new(0),
            failed: AtomicU32::new(0),
            cell: AtomicU32::new(NO_CELL),
            blocks: AtomicU32::new(Blocks::first(1).pack()),
            aiv_kernels: [AtomicU32::new(0), AtomicU32::new(0)],
        }
    }
}

/// A task's SPMD blocks, in one word: `[count:16][next:16]`. `next` is the first block no
/// scheduler has dispatched yet; only the scheduler holding the task (popped from its ready
/// queue, not queued again yet) moves it, so plain loads and stores suffice (the queue's
/// push and pop order them).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Blocks {
    /// Blocks of the task (at least 1).
    pub(crate) count: u16,
    /// The next block to dispatch (`count` once every one was).
    pub(crate) next: u16,
}

impl Blocks {
    /// `count` blocks, none dispatched.
    #[inline]
    pub(crate) const fn first(count: u16) -> Self {
        Blocks { count, next: 0 }
    }
    /// The packed word.
    #[inline]
    pub(crate) const fn pack(self) -> u32 {
        (self.count as u32) << 16 | self.next as u32
    }
    /// The blocks a packed word holds.
    #[inline]
    pub(crate) const fn unpack(w: u32) -> Self {
        Blocks {
            count: (w >> 16) as u16,
            next: w as u16,
        }
    }
}

/// The constant part of a task, packed in one word:
/// `[kernel:32][ntensors:8][spmd:1][sync:1][per_lane:1][predicated:1][class:4][nargs:8]
/// [pinned:8]` (from the top bit down).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Meta {
    pub(crate) kernel: KernelId,
    pub(crate) class: WorkerClass,
    /// The task has several SPMD blocks (its slot's [`Blocks`] word says how many): read
    /// with the rest at dispatch, so a task of one block costs no other load.
    pub(crate) spmd: bool,
    /// Its blocks start together ([`crate::TaskSpec::sync_start`]).
    pub(crate) sync: bool,
    /// A MIX task whose AIV lanes run kernels of their own (the slot's `aiv_kernels`).
    pub(crate) per_lane: bool,
    /// Scalar arguments stored in the slot's argument row.
    pub(crate) nargs: u8,
    /// Producers this task holds (edges it must release when it finishes).
    pub(crate) pinned: u8,
    /// Tensor arguments stored in the slot's tensor row (for the kernel).
    pub(crate) ntensors: u8,
}

/// The class's bits of [`Meta`]'s class byte (the top four are `spmd`, `sync`, `per_lane`
/// and `predicated`).
const CLASS_BITS: u8 = 0x0f;

/// The bits of a task that takes the dispatch's slow path: several blocks, or a predicate.
const SPECIAL: u64 = 1 << 23 | 1 << 20;

impl Meta {
    /// A task of `kernel` on `class` with `nargs` scalar and `ntensors` tensor arguments,
    /// holding `pinned` producers, of one block whose lanes share the kernel (what is not
    /// plain is ORed in as [`Meta::shape_bits`]).
    pub(crate) const fn plain(
        (kernel, class): (KernelId, WorkerClass),
        (nargs, ntensors): (usize, usize),
        pinned: usize,
    ) -> Self {
        Meta {
            kernel,
            class,
            spmd: false,
            sync: false,
            per_lane: false,
            nargs: nargs as u8,
            pinned: pinned as u8,
            ntensors: ntensors as u8,
        }
    }

    pub(crate) fn pack(self) -> u64 {
        ((self.kernel.0 as u64) << 32)
            | ((self.class as u64) << 16)
            | Self::shape_bits(self.spmd, self.sync, self.per_lane, false)
            | ((self.ntensors as u64) << 24)
            | ((self.nargs as u64) << 8)
            | self.pinned as u64
    }

    /// The task's constants, or `Err(class)` if the class byte is none a submit writes (the
    /// region was overwritten). Checked where the class decides the task's fate
    /// (`ready::prepare_ready`): a bad class fails the run, it never runs as DUMMY. (The
    /// orchestrator, making ready the task whose meta it just wrote, takes the class it wrote.)
    #[inline]
    pub(crate) fn decode(word: u64) -> Result<Self, u8> {
        let class = (word >> 16) as u8 & CLASS_BITS;
        match WorkerClass::from_index(class as usize) {
            Some(_) => Ok(Self::unpack(word)),
            None => Err(class),
        }
    }

    /// The bits of a task's meta word that say how it is shaped: several blocks, sync
    /// start, kernels per lane (OR-ed into a plain task's [`Meta::pack`]).
    pub(crate) fn shape_bits(spmd: bool, sync: bool, per_lane: bool, predicated: bool) -> u64 {
        (spmd as u64) << 23
            | (sync as u64) << 22
            | (per_lane as u64) << 21
            | (predicated as u64) << 20
    }

    /// Whether the task of constants `word` has several blocks or a predicate: the one test
    /// that keeps both off a plain task's dispatch.
    #[inline(always)]
    pub(crate) fn is_special(word: u64) -> bool {
        word & SPECIAL != 0
    }

    /// Whether the task of constants `word` carries a predicate (the slot's predicate cell).
    #[inline(always)]
    pub(crate) fn is_predicated(word: u64) -> bool {
        word >> 20 & 1 == 1
    }

    /// Whether the task of constants `word` has several SPMD blocks (what
    /// [`Meta::unpack`]'s `spmd` says, alone).
    #[inline(always)]
    pub(crate) fn is_spmd(word: u64) -> bool {
        word >> 23 & 1 == 1
    }

    /// The constants of a task that became ready (its class was checked then by
    /// [`Meta::decode`]; the word is not written again in its tenancy).
    #[inline]
    pub(crate) fn unpack(word: u64) -> Self {
        Meta {
            kernel: KernelId((word >> 32) as u32),
            class: WorkerClass::from_index(((word >> 16) as u8 & CLASS_BITS) as usize)
                .unwrap_or(WorkerClass::Dummy),
            spmd: Self::is_spmd(word),
            sync: word >> 22 & 1 == 1,
            per_lane: word >> 21 & 1 == 1,
            nargs: (word >> 8) as u8,
            pinned: word as u8,
            ntensors: (word >> 24) as u8,
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn meta_round_trips() {
        for spmd in [false, true] {
            let m = Meta {
                kernel: KernelId(0xdead_beef),
                class: WorkerClass::Mix,
                spmd,
                sync: spmd,
                per_lane: !spmd,
                nargs: 32,
                pinned: 64,
                ntensors: 32,
            };
            assert_eq!(Meta::unpack(m.pack()), m);
            assert_eq!(Meta::decode(m.pack()), Ok(m));
            assert_eq!(Meta::decode(m.pack() | 7 << 16), Err(7), "no class 7");
        }
    }

    #[test]
    fn blocks_round_trip() {
        for b in [
            Blocks::first(1),
            Blocks {
                count: 48,
                next: 47,
            },
            Blocks::first(u16::MAX),
        ] {
            assert_eq!(Blocks::unpack(b.pack()), b);
        }
    }
}
