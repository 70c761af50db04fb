//! The runtime's configuration as C sees it, and its conversion both ways.
#![forbid(unsafe_code)]

use crate::observe::profile::ProfileLevel;
use crate::region::config::Config;

/// The runtime's sizes and limits (see `pto_runtime_core::Config`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PtoConfig {
    /// Task rings.
    pub rings: u8,
    /// Scheduler threads.
    pub schedulers: u8,
    /// Task slots per ring (a power of two).
    pub task_window: u32,
    /// Most dependencies per task.
    pub max_deps: u16,
    /// Most scalar arguments per task.
    pub max_args: u16,
    /// Most tensor arguments per task.
    pub max_tensors: u16,
    /// Most deferred conditions per task.
    pub max_conditions: u16,
    /// AIC (cube) cores.
    pub aic_cores: u16,
    /// AIV (vector) cores.
    pub aiv_cores: u16,
    /// Deferred tasks each scheduler can hold.
    pub deferred_capacity: u32,
    /// How long a submit waits for a free slot, µs.
    pub submit_timeout_us: u64,
    /// How long a dispatched task may run, µs.
    pub task_timeout_us: u64,
    /// How long a deferred condition may take to hold, µs.
    pub deferred_timeout_us: u64,
    /// 0: no profiling, 1: phase counters, 2: counters and one record per task.
    pub profile: u8,
    /// Task records the profile ring holds.
    pub profile_capacity: u32,
}

impl PtoConfig {
    /// The C view of `c`.
    pub fn from_config(c: &Config) -> Self {
        PtoConfig {
            rings: c.rings,
            schedulers: c.schedulers,
            task_window: c.task_window,
            max_deps: c.max_deps,
            max_args: c.max_args,
            max_tensors: c.max_tensors,
            max_conditions: c.max_conditions,
            aic_cores: c.aic_cores,
            aiv_cores: c.aiv_cores,
            deferred_capacity: c.deferred_capacity,
            submit_timeout_us: c.submit_timeout_us,
            task_timeout_us: c.task_timeout_us,
            deferred_timeout_us: c.deferred_timeout_us,
            profile: c.profile as u8,
            profile_capacity: c.profile_capacity,
        }
    }

    /// The runtime's configuration; `None` for an unknown profile level.
    pub fn to_config(&self) -> Option<Config> {
        let profile = match self.profile {
            0 => ProfileLevel::Off,
            1 => ProfileLevel::Counters,
            2 => ProfileLevel::Tasks,
            _ => return None,
        };
        Some(Config {
            rings: self.rings,
            schedulers: self.schedulers,
            task_window: self.task_window,
            max_deps: self.max_deps,
            max_args: self.max_args,
            max_tensors: self.max_tensors,
            max_conditions: self.max_conditions,
            aic_cores: self.aic_cores,
            aiv_cores: self.aiv_cores,
            deferred_capacity: self.deferred_capacity,
            submit_timeout_us: self.submit_timeout_us,
            task_timeout_us: self.task_timeout_us,
            deferred_timeout_us: self.deferred_timeout_us,
            profile,
            profile_capacity: self.profile_capacity,
            ..Config::default()
        })
    }
}
