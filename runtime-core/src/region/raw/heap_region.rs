//! Test support: a runtime region in heap memory, carved by the one carve sequence the
//! device uses ([`carve`]), so tests and loom models run on the same tables, and freed when
//! dropped.

use std::alloc::{Layout, alloc_zeroed, dealloc, handle_alloc_error};
use std::sync::{Mutex, PoisonError};

use crate::layout::{RegionLayout, carve};
use crate::orchestrator::store::OrchestratorStore;
use crate::region::carve::REGION_ALIGN;
use crate::region::config::{Config, MAX_SCHEDULERS};
use crate::region::raw::region::Carver;
use crate::scheduler::deferred::DeferredStore;
use crate::tables::views::RunTables;

/// The heap bytes of a region; freeing them is its only job.
struct Memory {
    base: *mut u8,
    layout: Layout,
}

// SAFETY: `Memory` is an owner handle: it never reads or writes through `base`, it only frees
// the allocation once, on drop, so moving or sharing the handle across threads is harmless.
unsafe impl Send for Memory {}
// SAFETY: as above: `&Memory` gives no access to the bytes at all.
unsafe impl Sync for Memory {}

impl Drop for Memory {
    fn drop(&mut self) {
        // SAFETY: `base` came from `alloc_zeroed(self.layout)` and is freed only here. Every
        // view into it is a field of the `HeapRegion` that owns this `Memory` and is declared
        // before it, so it is dropped first; and no view escapes a borrow of that
        // `HeapRegion` (its accessors shorten the lifetime to the borrow).
        unsafe { dealloc(self.base, self.layout) };
    }
}

/// A formatted region in heap memory: the tables as [`crate::Runtime::init`] carves them,
/// each scheduler's deferred-set pools and the orchestrator's storage, to be taken once each.
pub(crate) struct HeapRegion {
    // The views first: fields drop in order, so they are gone before the memory is freed.
    tables: RunTables<'static>,
    stores: Mutex<heapless::Vec<DeferredStore<'static>, { MAX_SCHEDULERS as usize }>>,
    orchestrator: Mutex<Option<OrchestratorStore<'static>>>,
    _memory: Memory,
}

impl HeapRegion {
    /// A region formatted for `cfg`. Panics on a config the runtime refuses: test support.
    pub(crate) fn new(cfg: Config) -> Self {
        let size = RegionLayout::new(&cfg)
            .unwrap_or_else(|e| panic!("test config refused: {e}"))
            .size()
            .max(REGION_ALIGN);
        let layout = Layout::from_size_align(size, REGION_ALIGN)
            .unwrap_or_else(|e| panic!("region of {size} bytes: {e}"));
        // SAFETY: `layout` has a non-zero size.
        let base = unsafe { alloc_zeroed(layout) };
        if base.is_null() {
            handle_alloc_error(layout);
        }
        // SAFETY: `base` points to `size` initialised (zeroed) bytes that nothing else refers
        // to. The `'static` is this type's promise, kept as `Memory::drop` says: the views
        // live in the fields before `_memory` and leave only through `&self` borrows.
        let bytes: &'static mut [u8] = unsafe { core::slice::from_raw_parts_mut(base, size) };
        let memory = Memory { base, layout };
        let parts = carve(&cfg, &mut Carver::new(bytes))
            .unwrap_or_else(|e| panic!("carving a measured region: {e}"));
        let (tables, stores, orchestrator) = parts.split(cfg);
        HeapRegion {
            tables: RunTables::new(tables),
            stores: Mutex::new(stores),
            orchestrator: Mutex::new(Some(orchestrator)),
            _memory: memory,
        }
    }

    /// The owner's view of the tables (tests play the runtime), for as long as the region
    /// is borrowed.
    pub(crate) fn tables(&self) -> RunTables<'_> {
        self.tables
    }

    /// A scheduler's deferred-set pools (one per configured scheduler, each handed out once).
    pub(crate) fn take_store(&self) -> DeferredStore<'_> {
        self.stores
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop()
            .expect("every scheduler's deferred pools are taken: raise cfg.schedulers")
    }

    /// The orchestrator's storage (handed out once).
    pub(crate) fn take_orchestrator(&self) -> OrchestratorStore<'_> {
        self.orchestrator
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
            .expect("the orchestrator's storage is taken: one orchestrator per region")
    }
}
