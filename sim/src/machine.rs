//! Starting and stopping the simulated cores.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::thread::JoinHandle;

use pto_runtime_core::{Config, ConfigError, CoreId};

use crate::error::SimError;
use crate::kernels::KernelTable;
use crate::platform::SimPlatform;

/// Knobs of the simulated machine.
#[derive(Clone, Copy, Debug)]
pub struct SimOptions {
    /// Spin iterations an idle core polls its doorbell before it parks. A few microseconds of
    /// spinning keeps back-to-back dispatches off the futex path.
    pub spin_before_park: u32,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            spin_before_park: std::env::var("PTO_SPIN")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(200),
        }
    }
}

/// The simulated cores of one run, each on its own thread. Dropping the machine stops and
/// joins them.
pub struct SimMachine {
    platform: Arc<SimPlatform>,
    threads: Vec<JoinHandle<()>>,
}

impl SimMachine {
    /// Starts one thread per core of `cfg` (AIC first, then AIV).
    pub fn start(cfg: &Config, kernels: KernelTable, opts: SimOptions) -> Result<Self, SimError> {
        cfg.validate()?;
        if cfg.cores() == 0 {
            return Err(SimError::Config(ConfigError::NoCores));
        }
        let platform = Arc::new(SimPlatform::new(cfg.cores(), kernels));
        let mut machine = SimMachine {
            platform: platform.clone(),
            threads: Vec::new(),
        };
        for i in 0..cfg.cores() {
            let p = platform.clone();
            let kind = if i < cfg.aic_cores { "aic" } else { "aiv" };
            let name = format!("sim-{kind}-{i}");
            let handle = std::thread::Builder::new()
                .name(name.clone())
                .stack_size(256 * 1024)
                .spawn(move || crate::core_thread::core_loop(&p, CoreId(i), opts.spin_before_park))
                .map_err(|source| SimError::Spawn { name, source })?;
            let _ = platform.cores[i as usize]
                .thread
                .set(handle.thread().clone());
            machine.threads.push(handle);
        }
        Ok(machine)
    }

    /// The platform the runtime drives.
    pub fn platform(&self) -> &SimPlatform {
        &self.platform
    }
}

impl Drop for SimMachine {
    fn drop(&mut self) {
        self.platform.shutdown.store(true, Ordering::Release);
        for (core, t) in self.platform.cores.iter().zip(&self.threads) {
            let _ = core;
            t.thread().unpark();
        }
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}
