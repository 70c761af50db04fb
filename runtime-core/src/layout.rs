//! The region's tables in one sequence ([`carve`]), walked twice: once to measure it
//! ([`RegionLayout::new`]) and once to place the tables ([`crate::Runtime::init`]), so the
//! layout and the carving cannot disagree. Each subsystem carves its own tables (`tables/mod.rs`,
//! `ready_queue.rs`, `profile.rs`, `deferred/store.rs`, `tensor_map/entry.rs`): adding a
//! table touches that subsystem alone. This is the one module that knows every subsystem's
//! store, so it sits at the top of the crate, beside the runtime that uses it.
#![forbid(unsafe_code)]

use crate::observe::profile::ProfParts;
use crate::orchestrator::store::OrchestratorStore;
use crate::queues::ready_queue::QueueParts;
use crate::region::carve::{Carve, Measure, OVERFLOW, REGION_ALIGN};
use crate::region::config::{Config, ConfigError, MAX_SCHEDULERS};
use crate::scheduler::deferred::DeferredStore;
use crate::tables::{CoreParts, Tables};

/// Every table of the region, as one pass made them (all empty when measuring).
pub(crate) struct Parts<'r> {
    pub(crate) core: CoreParts<'r>,
    pub(crate) queues: QueueParts<'r>,
    pub(crate) prof: ProfParts<'r>,
    /// Each scheduler's deferred-set pools.
    pub(crate) deferred: heapless::Vec<DeferredStore<'r>, { MAX_SCHEDULERS as usize }>,
    /// The orchestrator's own storage.
    pub(crate) orchestrator: OrchestratorStore<'r>,
}

impl<'r> Parts<'r> {
    /// The shared tables as views, each scheduler's deferred pools and the orchestrator's
    /// storage.
    pub(crate) fn split(
        self,
        cfg: Config,
    ) -> (
        Tables<'r>,
        heapless::Vec<DeferredStore<'r>, { MAX_SCHEDULERS as usize }>,
        OrchestratorStore<'r>,
    ) {
        let queues = self.queues.into_queues();
        let tables = self.core.into_tables(cfg, queues, self.prof);
        (tables, self.deferred, self.orchestrator)
    }
}

/// Takes every table of `cfg`'s region from `c`, in order.
pub(crate) fn carve<'r>(cfg: &Config, c: &mut impl Carve<'r>) -> Result<Parts<'r>, ConfigError> {
    Ok(Parts {
        core: CoreParts::carve(cfg, c)?,
        queues: QueueParts::carve(cfg, c)?,
        prof: ProfParts::carve(cfg, c)?,
        deferred: DeferredStore::carve_all(cfg, c)?,
        orchestrator: OrchestratorStore::carve(cfg, c)?,
    })
}

/// The layout of the runtime region for one [`Config`]. The host allocates
/// [`RegionLayout::size`] bytes aligned to 64 and hands them to [`crate::Runtime::init`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegionLayout {
    size: usize,
}

impl RegionLayout {
    /// Validates `cfg` and lays out its region.
    pub fn new(cfg: &Config) -> Result<Self, ConfigError> {
        cfg.validate()?;
        let mut m = Measure::default();
        carve(cfg, &mut m)?;
        let size = m
            .end()
            .checked_next_multiple_of(REGION_ALIGN)
            .ok_or(OVERFLOW)?;
        Ok(RegionLayout { size })
    }

    /// Bytes the region needs.
    pub fn size(&self) -> usize {
        self.size
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    use crate::testing::Block;

    #[test]
    fn the_measured_size_is_exactly_what_the_carving_takes() {
        // The default config's region is tens of MiB: too slow to format under miri.
        let cfgs: &[Config] = if cfg!(miri) {
            &[Config::tiny()]
        } else {
            &[Config::default(), Config::tiny()]
        };
        for &cfg in cfgs {
            let size = RegionLayout::new(&cfg).unwrap().size();
            let mut blocks = std::vec![Block([0; 64]); size / 64];
            let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut blocks);
            assert!(crate::Runtime::init(bytes, cfg).is_ok());
            // One block less and the last table does not fit.
            let mut short = std::vec![Block([0; 64]); size / 64 - 1];
            let mut c =
                crate::region::raw::region::Carver::new(bytemuck::cast_slice_mut(&mut short));
            assert!(matches!(
                carve(&cfg, &mut c),
                Err(ConfigError::RegionTooSmall { .. })
            ));
        }
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
