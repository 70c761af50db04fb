//! Where each table lives in the region, computed from a `Config` alone.
#![forbid(unsafe_code)]

use core::mem::{align_of, size_of};

use crate::config::{Config, ConfigError};
use crate::deferred::{Entry, Waiter, WatchSlot, map_len};
use crate::ids::WorkerClass;
use crate::profile::{ProfRow, RecordCell};
use crate::ready_queue::{QueueCell, QueueCtl};
use crate::slot::TaskSlot;
use crate::stats::SchedCtl;
use crate::sync::AtomicU64;
use crate::tables::{Edge, RingCtl, Shared};
use crate::tensor_map::{EntryInfo, Head, MapEntry, buckets_len, heads_len};

/// Alignment of the region and of every table in it.
pub const REGION_ALIGN: usize = 64;

/// A table's place: byte offset and element count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Span {
    pub(crate) offset: usize,
    pub(crate) count: usize,
}

/// The layout of the runtime region for one [`Config`]. The host allocates
/// [`RegionLayout::size`] bytes aligned to 64 and hands them to [`crate::Runtime::init`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegionLayout {
    size: usize,
    pub(crate) shared: Span,
    pub(crate) rings: Span,
    pub(crate) slots: Span,
    pub(crate) args: Span,
    pub(crate) edges: Span,
    pub(crate) queue_ctl: Span,
    pub(crate) queue_cells: [Span; WorkerClass::COUNT],
    pub(crate) sched: Span,
    pub(crate) prof_rows: Span,
    pub(crate) records: Span,
    /// Deferred-set pools, one equal share per scheduler.
    pub(crate) waiters: Span,
    pub(crate) entries: Span,
    pub(crate) watches: Span,
    pub(crate) active: Span,
    pub(crate) watch_map: Span,
    /// The orchestrator's tensor map: entry cells per slot, the buffer index (heads) and the
    /// cell index (buckets).
    pub(crate) map_entries: Span,
    pub(crate) map_infos: Span,
    pub(crate) map_tiles: Span,
    pub(crate) map_heads: Span,
    /// The tensor map's cell index.
    pub(crate) map_buckets: Span,
}

struct Cursor(usize);

impl Cursor {
    fn take<T>(&mut self, count: usize) -> Result<Span, ConfigError> {
        let align = align_of::<T>().max(REGION_ALIGN);
        let offset = self.0.checked_next_multiple_of(align).ok_or(OVERFLOW)?;
        let bytes = size_of::<T>().checked_mul(count).ok_or(OVERFLOW)?;
        self.0 = offset.checked_add(bytes).ok_or(OVERFLOW)?;
        Ok(Span { offset, count })
    }
}

const OVERFLOW: ConfigError = ConfigError::RegionTooSmall {
    needed: usize::MAX,
    given: 0,
};

impl RegionLayout {
    /// Validates `cfg` and lays out its region.
    pub fn new(cfg: &Config) -> Result<Self, ConfigError> {
        cfg.validate()?;
        let slots = cfg.rings as usize * cfg.task_window as usize;
        let qcap = cfg.ready_queue_capacity();
        let mut c = Cursor(0);
        let shared = c.take::<Shared>(1)?;
        let rings = c.take::<RingCtl>(cfg.rings as usize)?;
        let sched = c.take::<SchedCtl>(cfg.schedulers as usize)?;
        let queue_ctl = c.take::<QueueCtl>(WorkerClass::COUNT)?;
        let slot_span = c.take::<TaskSlot>(slots)?;
        let args = c.take::<AtomicU64>(slots * cfg.max_args as usize)?;
        let edges = c.take::<Edge>(slots * cfg.max_deps as usize)?;
        let mut queue_cells = [Span {
            offset: 0,
            count: 0,
        }; WorkerClass::COUNT];
        for q in queue_cells.iter_mut() {
            *q = c.take::<QueueCell>(qcap)?;
        }
        let prof_rows = c.take::<ProfRow>(slots)?;
        let records = c.take::<RecordCell>(cfg.profile_capacity as usize)?;
        let per = cfg.deferred_capacity as usize;
        let n = cfg.schedulers as usize;
        let waiters = c.take::<Waiter>(n * per)?;
        let entries = c.take::<Entry>(n * per)?;
        let watches = c.take::<WatchSlot>(n * per)?;
        let active = c.take::<u32>(n * per)?;
        let watch_map = c.take::<u32>(n * map_len(per))?;
        let cells = slots * cfg.max_tensors as usize;
        let map_entries = c.take::<MapEntry>(cells)?;
        let map_infos = c.take::<EntryInfo>(cells)?;
        let map_tiles = c.take::<crate::tensor::Tile>(cells)?;
        let map_heads = c.take::<Head>(heads_len(cells))?;
        let map_buckets = c.take::<u32>(buckets_len(cells))?;
        let size = c.0.checked_next_multiple_of(REGION_ALIGN).ok_or(OVERFLOW)?;
        Ok(RegionLayout {
            size,
            shared,
            rings,
            slots: slot_span,
            args,
            edges,
            queue_ctl,
            queue_cells,
            sched,
            prof_rows,
            records,
            waiters,
            entries,
            watches,
            active,
            watch_map,
            map_entries,
            map_infos,
            map_tiles,
            map_heads,
            map_buckets,
        })
    }

    /// Bytes the region needs.
    pub fn size(&self) -> usize {
        self.size
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn tables_are_aligned_and_disjoint() {
        let l = RegionLayout::new(&Config::default()).unwrap();
        let mut spans = std::vec![
            (l.shared.offset, size_of::<Shared>()),
            (l.rings.offset, l.rings.count * size_of::<RingCtl>()),
            (l.sched.offset, l.sched.count * size_of::<SchedCtl>()),
            (
                l.queue_ctl.offset,
                l.queue_ctl.count * size_of::<QueueCtl>()
            ),
            (l.slots.offset, l.slots.count * size_of::<TaskSlot>()),
            (l.args.offset, l.args.count * 8),
            (l.edges.offset, l.edges.count * size_of::<Edge>()),
            (l.waiters.offset, l.waiters.count * size_of::<Waiter>()),
            (l.entries.offset, l.entries.count * size_of::<Entry>()),
            (l.watches.offset, l.watches.count * size_of::<WatchSlot>()),
            (l.active.offset, l.active.count * 4),
            (l.watch_map.offset, l.watch_map.count * 4),
            (
                l.map_entries.offset,
                l.map_entries.count * size_of::<MapEntry>(),
            ),
            (
                l.map_infos.offset,
                l.map_infos.count * size_of::<EntryInfo>(),
            ),
            (
                l.map_tiles.offset,
                l.map_tiles.count * size_of::<crate::tensor::Tile>(),
            ),
            (l.map_heads.offset, l.map_heads.count * size_of::<Head>(),),
            (l.map_buckets.offset, l.map_buckets.count * 4),
        ];
        for q in l.queue_cells {
            spans.push((q.offset, q.count * size_of::<QueueCell>()));
        }
        spans.sort();
        for w in spans.windows(2) {
            assert!(w[0].0 + w[0].1 <= w[1].0, "overlap: {w:?}");
        }
        assert!(spans.iter().all(|s| s.0 % REGION_ALIGN == 0));
        assert!(spans.last().map(|s| s.0 + s.1).unwrap() <= l.size());
    }

    #[test]
    fn an_invalid_config_has_no_layout() {
        let bad = Config {
            task_window: 3,
            ..Config::tiny()
        };
        assert_eq!(
            RegionLayout::new(&bad),
            Err(ConfigError::TaskWindow { window: 3 })
        );
    }
}
