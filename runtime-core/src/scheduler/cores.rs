//! A scheduler's table of the cores it owns: who runs what, and which cores can take work.
//!
//! Each core has a running and a pending slot, so a core that finishes finds its next task
//! already rung and never idles while work is ready. Bit `i` of each mask is local core `i`.
#![forbid(unsafe_code)]

use crate::ids::{CoreId, TaskId, Token};
use crate::platform::CoreKind;
use crate::protocol::StatusWord;
use crate::region::config::{Config, MAX_CORES};
use crate::tables::SlotIndex;

/// A core's place in its scheduler's core table, and its bit in the table's masks (as
/// opposed to its machine-wide [`CoreId`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct LocalCore(usize);

impl LocalCore {
    /// The lowest core of `mask` (not empty).
    #[inline]
    pub(crate) fn lowest(mask: u128) -> Self {
        LocalCore(mask.trailing_zeros() as usize)
    }
    /// The core's bit in the table's masks.
    #[inline]
    pub(crate) fn bit(self) -> u128 {
        1 << self.0
    }
    /// The core's place in [`CoreTable::cores`]: its index, taken modulo the table's room so
    /// the compiler needs no bounds check. Every `LocalCore` is below the table's length (it
    /// comes from the table's masks or its `local_of`), so the modulo never changes it.
    #[inline]
    fn slot(self) -> usize {
        self.0 % ROOM
    }
}

/// A task lane on a core.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Inflight {
    pub(crate) task: TaskId,
    /// The task's slot, derived once at dispatch and carried to its completion.
    pub(crate) slot: SlotIndex,
    pub(crate) token: Token,
    /// Whether the task has other lanes, and whose; and the lane's block.
    pub(crate) share: Share,
}

/// How a lane's FIN counts for its task, and the lane's SPMD block, in one word (a lane is
/// copied on every poll): `[block:16][flags:16]`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Share(u32);

impl Share {
    /// The task's only lane: its FIN finishes the task.
    pub(crate) const ALONE: Share = Share(0);
    /// One of a MIX task's lanes, all on this scheduler's cluster: the task finishes with
    /// its last lane's FIN, and their conditions share one deferred entry (the slot's).
    pub(crate) const CLUSTER: Share = Share(1);
    /// A lane of a task of several SPMD blocks, whose other lanes other schedulers may
    /// retire: the task finishes with its last lane, and each lane's unmet conditions get
    /// a deferred entry of their own.
    pub(crate) const BLOCKS: Share = Share(3);

    /// The same share for a lane of block `block`.
    #[inline(always)]
    pub(crate) fn of_block(self, block: u16) -> Share {
        Share(self.0 & 0xffff | u32::from(block) << 16)
    }

    /// The lane's block (0 for a task of one block).
    #[inline(always)]
    pub(crate) fn block(self) -> u16 {
        (self.0 >> 16) as u16
    }

    /// The task has other lanes: its `lanes_left` counts this one down.
    #[inline(always)]
    pub(crate) fn several(self) -> bool {
        self.0 & 0xffff != 0
    }

    /// The task has several blocks.
    #[inline(always)]
    pub(crate) fn spmd(self) -> bool {
        self.0 & 2 != 0
    }
}

/// One owned core.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CoreSlot {
    pub(crate) id: CoreId,
    /// The core's bit in the table's masks ([`LocalCore::bit`]), kept here: the slot is in
    /// hand wherever a mask changes, and a load costs less than a 128-bit shift.
    bit: u128,
    pub(crate) next_token: Token,
    pub(crate) running: Option<Inflight>,
    pub(crate) pending: Option<Inflight>,
    /// The last status word the scheduler acted on (at start: what the core last reported,
    /// in this run or an earlier one). An idle core's word must stay as it is.
    pub(crate) seen: StatusWord,
    /// Since when the running lane, which finished, waits for room in the deferred set.
    pub(crate) held_since: Option<u64>,
    /// The deferred set's close count when the held lane last found no room.
    pub(crate) held_closes: u32,
    /// Token the watchdog is timing, and since when.
    pub(crate) watch: Option<(Token, u64)>,
}

/// The local cores of a cluster able to run MIX tasks: AIC, AIV0, AIV1.
pub(crate) type MixCluster = [LocalCore; 3];

/// Room for every core a runtime may have: a power of two, so a [`LocalCore`] taken modulo
/// it indexes [`CoreTable::cores`] without a bounds check.
const ROOM: usize = MAX_CORES as usize;
const _: () = assert!(ROOM.is_power_of_two() && ROOM <= u128::BITS as usize);

/// The slot of a core nobody owns: past [`CoreTable::len`].
const UNUSED: CoreSlot = CoreSlot {
    id: CoreId(u16::MAX),
    bit: 0,
    next_token: Token::FIRST,
    running: None,
    pending: None,
    seen: StatusWord::NONE,
    held_since: None,
    held_closes: 0,
    watch: None,
};

/// The cores one scheduler owns.
pub(crate) struct CoreTable {
    /// Indexed by [`LocalCore`] only (see [`CoreTable::core`]); the first `len` are owned.
    cores: [CoreSlot; ROOM],
    /// Cores owned.
    len: usize,
    /// Cores with nothing running.
    pub(crate) idle: u128,
    /// Cores running something with a free pending slot.
    pub(crate) pending_free: u128,
    /// Cores whose running lane finished but waits for room in the deferred set.
    pub(crate) held: u128,
    /// Cores of each kind (index 0 AIC, 1 AIV).
    pub(crate) kind: [u128; 2],
    pub(crate) mix: heapless::Vec<MixCluster, { MAX_CORES as usize }>,
    /// Every core of `mix`.
    pub(crate) mix_cores: u128,
    /// The local index of each core id, or [`NOT_MINE`].
    local_of: [u8; MAX_CORES as usize],
}

/// In `local_of`: a core another scheduler owns.
const NOT_MINE: u8 = u8::MAX;

/// The cluster of a core: AIC `i` is in cluster `i`, AIV `j` in cluster `j / 2`.
pub(crate) fn cluster_of(cfg: &Config, core: u16) -> (u16, CoreKind) {
    if core < cfg.aic_cores {
        (core, CoreKind::Aic)
    } else {
        ((core - cfg.aic_cores) / 2, CoreKind::Aiv)
    }
}

impl CoreTable {
    /// The cores of clusters `c` with `c % schedulers == index`.
    pub(crate) fn for_scheduler(cfg: &Config, index: u8) -> Self {
        let mut t = CoreTable {
            cores: [UNUSED; ROOM],
            len: 0,
            idle: 0,
            pending_free: 0,
            held: 0,
            kind: [0; 2],
            mix: heapless::Vec::new(),
            mix_cores: 0,
            local_of: [NOT_MINE; MAX_CORES as usize],
        };
        let mut aic_of: [Option<LocalCore>; MAX_CORES as usize] = [None; MAX_CORES as usize];
        let mut aiv_of: [[Option<LocalCore>; 2]; MAX_CORES as usize] =
            [[None; 2]; MAX_CORES as usize];
        for core in 0..cfg.cores() {
            let (cluster, kind) = cluster_of(cfg, core);
            if cfg.scheduler_of(CoreId(core)) != index {
                continue;
            }
            let local = t.len;
            t.local_of[core as usize] = local as u8;
            // At most MAX_CORES cores exist (validated config): `local` is in the table.
            t.len += 1;
            t.cores[local % ROOM] = CoreSlot {
                id: CoreId(core),
                bit: LocalCore(local).bit(),
                ..UNUSED
            };
            t.idle |= 1 << local;
            match kind {
                CoreKind::Aic => {
                    t.kind[0] |= 1 << local;
                    aic_of[cluster as usize] = Some(LocalCore(local));
                }
                CoreKind::Aiv => {
                    t.kind[1] |= 1 << local;
                    let lane = ((core - cfg.aic_cores) % 2) as usize;
                    aiv_of[cluster as usize][lane] = Some(LocalCore(local));
                }
            }
        }
        for c in 0..cfg.clusters() as usize {
            if let (Some(a), [Some(v0), Some(v1)]) = (aic_of[c], aiv_of[c]) {
                let _ = t.mix.push([a, v0, v1]);
                t.mix_cores |= a.bit() | v0.bit() | v1.bit();
            }
        }
        t
    }

    /// Starts local core `i`'s token sequence after `last`, the status word the core holds
    /// now: its tokens never repeat one it reported before, in this run or an earlier one.
    pub(crate) fn resume_after(&mut self, i: LocalCore, last: StatusWord) {
        let c = self.core_mut(i);
        c.seen = last;
        c.next_token = last.token().next();
    }

    /// Marks the running lane of local core `i` as waiting for deferred room since `now`.
    pub(crate) fn hold(&mut self, i: LocalCore, now: u64) {
        self.core_mut(i).held_since = Some(now);
        self.held |= i.bit();
    }

    /// The core whose lane has waited longest for deferred room, and since when.
    pub(crate) fn oldest_held(&self) -> Option<(LocalCore, u64)> {
        let mut held = self.held;
        let mut oldest: Option<(LocalCore, u64)> = None;
        while held != 0 {
            let i = LocalCore::lowest(held);
            held &= held - 1;
            if let Some(since) = self.core(i).held_since
                && oldest.is_none_or(|(_, s)| since < s)
            {
                oldest = Some((i, since));
            }
        }
        oldest
    }

    /// The cores MIX priority keeps from single-core tasks while a MIX task waits: every
    /// MIX-capable cluster, except those with a core held by the deferred set (only the
    /// deferred set frees it, and that may need the very tasks priority would hold back).
    pub(crate) fn mix_reserved(&self) -> u128 {
        if self.held == 0 {
            return self.mix_cores;
        }
        self.mix.iter().fold(0, |r, lanes| {
            let mask = lanes.iter().fold(0u128, |m, &l| m | l.bit());
            if mask & self.held == 0 { r | mask } else { r }
        })
    }

    /// Records `f` as dispatched to local core `i`.
    #[inline]
    pub(crate) fn occupy(&mut self, i: LocalCore, f: Inflight) {
        let c = &mut self.cores[i.slot()];
        let bit = c.bit;
        c.next_token = f.token.next();
        if c.running.is_none() {
            c.running = Some(f);
            self.idle &= !bit;
            self.pending_free |= bit;
        } else {
            c.pending = Some(f);
            self.pending_free &= !bit;
        }
    }

    /// Retires the running lane of local core `i`; the pending one (if any) moves up.
    #[inline]
    pub(crate) fn retire_running(&mut self, i: LocalCore) {
        let c = &mut self.cores[i.slot()];
        let bit = c.bit;
        // A copy, then a clear (`take` would move the lane through the stack).
        c.running = c.pending;
        c.pending = None;
        c.held_since = None;
        self.held &= !bit;
        if c.running.is_some() {
            self.pending_free |= bit;
        } else {
            self.idle |= bit;
            self.pending_free &= !bit;
        }
    }

    /// The local index of `core`, if this scheduler owns it.
    #[inline]
    pub(crate) fn local(&self, core: CoreId) -> Option<LocalCore> {
        match self.local_of.get(core.0 as usize) {
            Some(&i) if i != NOT_MINE => Some(LocalCore(i as usize)),
            _ => None,
        }
    }

    /// Local core `i`.
    #[inline]
    pub(crate) fn core(&self, i: LocalCore) -> &CoreSlot {
        &self.cores[i.slot()]
    }

    /// Local core `i`, to change.
    #[inline]
    pub(crate) fn core_mut(&mut self, i: LocalCore) -> &mut CoreSlot {
        &mut self.cores[i.slot()]
    }

    /// Every local core.
    pub(crate) fn each(&self) -> impl Iterator<Item = LocalCore> + use<> {
        (0..self.len).map(LocalCore)
    }

    /// Every owned core's slot, in local order.
    pub(crate) fn slots(&self) -> &[CoreSlot] {
        &self.cores[..self.len]
    }

    /// Cores with something running.
    #[inline]
    pub(crate) fn busy(&self) -> u128 {
        let all = if self.len == 128 {
            u128::MAX
        } else {
            (1u128 << self.len) - 1
        };
        all & !self.idle
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn clusters_are_split_round_robin_and_mix_needs_a_full_cluster() {
        let cfg = Config {
            aic_cores: 3,
            aiv_cores: 5,
            schedulers: 2,
            ..Config::tiny()
        };
        let s0 = CoreTable::for_scheduler(&cfg, 0);
        let s1 = CoreTable::for_scheduler(&cfg, 1);
        let ids = |t: &CoreTable| {
            t.slots()
                .iter()
                .map(|c| c.id.0)
                .collect::<std::vec::Vec<_>>()
        };
        // clusters: 0 = {0, 3, 4}, 1 = {1, 5, 6}, 2 = {2, 7}
        assert_eq!(ids(&s0), [0, 2, 3, 4, 7]);
        assert_eq!(ids(&s1), [1, 5, 6]);
        let l = LocalCore;
        assert_eq!(s0.mix.as_slice(), &[[l(0), l(2), l(3)]]);
        assert_eq!(s1.mix.as_slice(), &[[l(0), l(1), l(2)]]);
    }

    #[test]
    fn running_and_pending_slots_move_up() {
        let cfg = Config::tiny();
        let mut t = CoreTable::for_scheduler(&cfg, 0);
        let f = |n| Inflight {
            task: TaskId::from_raw(n),
            slot: SlotIndex::at(n as usize),
            token: Token::new(n as u32),
            share: Share::ALONE,
        };
        let first = LocalCore(0);
        t.occupy(first, f(1));
        assert_eq!((t.idle & 1, t.pending_free & 1), (0, 1));
        t.occupy(first, f(2));
        assert_eq!(t.pending_free & 1, 0);
        t.retire_running(first);
        assert_eq!(t.core(first).running, Some(f(2)));
        t.retire_running(first);
        assert_eq!((t.idle & 1, t.busy() & 1), (1, 0));
    }
}
