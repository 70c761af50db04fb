//! The orchestrator's own storage in the region: the tensor map's pools and one row per task
//! slot that only the orchestrator reads and writes, kept off the schedulers' slot lines.
#![forbid(unsafe_code)]

use crate::orchestrator::tensor_map::TensorStore;
use crate::region::carve::Carve;
use crate::region::config::{Config, ConfigError};
use crate::tables::SlotIndex;

/// What the orchestrator keeps about a slot's current tenant.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct TenantRow {
    /// The tenant's scope is still open (the scope holds the slot).
    pub(crate) scoped: bool,
    /// Tensor-map cells the tenant linked.
    pub(crate) tensors: u8,
    /// Where the tenant's output buffers begin in its ring's heap (a running byte count).
    pub(crate) heap_start: u64,
}

/// The orchestrator's rows, one per task slot, indexed like the slot table.
pub(crate) struct Tenants<'r> {
    rows: &'r mut [TenantRow],
}

impl Tenants<'_> {
    /// The row of slot `g`'s tenant.
    #[inline]
    pub(crate) fn row(&self, g: SlotIndex) -> &TenantRow {
        &self.rows[g.get()]
    }

    /// The row of slot `g`'s tenant, to change.
    #[inline]
    pub(crate) fn row_mut(&mut self, g: SlotIndex) -> &mut TenantRow {
        &mut self.rows[g.get()]
    }
}

/// Everything the orchestrator alone owns, handed out once by the runtime.
pub(crate) struct OrchestratorStore<'r> {
    /// The tensor map's pools.
    pub(crate) tensors: TensorStore<'r>,
    /// One row per task slot.
    pub(crate) tenants: Tenants<'r>,
}

impl<'r> OrchestratorStore<'r> {
    /// Takes the orchestrator's storage for `cfg` from `c`.
    pub(crate) fn carve(cfg: &Config, c: &mut impl Carve<'r>) -> Result<Self, ConfigError> {
        let slots = cfg.rings as usize * cfg.task_window as usize;
        Ok(OrchestratorStore {
            tensors: TensorStore::carve(cfg, c)?,
            tenants: Tenants {
                rows: c.table(slots, |_| TenantRow::default())?,
            },
        })
    }
}
