//! A session on one NPU: opened once (CANN loaded, device set, op-execute timeout, two
//! streams, the AICPU SO bootstrapped and registered, `init` launched, the AICore executor
//! registered once, the register table from the HAL, handshake blocks and payload slots),
//! then any number of runs ([`super::run`]). A run that fails leaves the session reset
//! (device drained, `aclrtResetDeviceForce`, everything released): the next session starts
//! clean, while this one refuses further runs.

use std::sync::Arc;

use pto_device_sys::cann::{AicoreBinary, CpuKernels, DeviceMem, NpuApi, Stream, driver_id};
use pto_device_sys::chip::layout::{
    CLUSTER_STRIDE, Handshake, MAX_PHYSICAL_CORES, SUBCORE_STRIDE, Slot,
};

use super::abi_payload::init_payload;
use super::device::DeviceRefs;
use super::error::NpuError;
use super::options::NpuOptions;
use super::register::{EXEC_SYMBOL, INIT_SYMBOL, op_type, register};
use super::uploads::Uploads;
use super::{bootstrap, read_artifact};

/// What a live session holds. Fields drop in order: the streams first (destroying one
/// waits for its kernels), then what those kernels used, the device last.
pub(super) struct Live {
    pub aicpu_stream: Stream,
    pub aicore_stream: Stream,
    pub uploads: Uploads,
    pub kernels: CpuKernels,
    pub aicore: AicoreBinary,
    pub handshakes: DeviceMem,
    pub slots: DeviceMem,
    pub regs: DeviceMem,
    pub device: DeviceRefs,
}

/// A session on one NPU.
pub struct NpuSession {
    pub(super) api: Arc<NpuApi>,
    pub(super) opts: NpuOptions,
    pub(super) live: Option<Live>,
    pub(super) clusters: u32,
    pub(super) fingerprint: u64,
    pub(super) runs: u64,
}

impl core::fmt::Debug for NpuSession {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("NpuSession")
            .field("device", &self.opts.device)
            .field("clusters", &self.clusters)
            .field("live", &self.live.is_some())
            .field("runs", &self.runs)
            .finish()
    }
}

/// The register window table by physical core id: cluster `c`'s subcore `s` (AIC, AIV 0,
/// AIV 1) at `base + c * 8 MiB + s * 1 MiB`, for the clusters the occupancy mask allows.
pub fn register_table(base: u64, occupancy: u64, clusters: u32) -> Vec<u64> {
    let mut table = vec![0u64; MAX_PHYSICAL_CORES as usize];
    for c in 0..clusters.min(MAX_PHYSICAL_CORES / 3) {
        if occupancy & (1 << c) == 0 {
            continue;
        }
        for s in 0..3u32 {
            let at = (c * 3 + s) as usize;
            table[at] =
                base + u64::from(c) * CLUSTER_STRIDE as u64 + u64::from(s) * SUBCORE_STRIDE as u64;
        }
    }
    table
}

impl NpuSession {
    /// Opens a session (see the module doc for the steps); anything taken is given back if
    /// a step fails.
    pub fn open(opts: NpuOptions) -> Result<Self, NpuError> {
        opts.timeouts.check()?;
        if opts.schedulers == 0 || opts.schedulers > 5 {
            return Err(NpuError::Invalid(format!(
                "{} schedulers: the AICPU runs 1 to 5 (one more thread orchestrates)",
                opts.schedulers
            )));
        }
        let a = &opts.artifacts;
        let dispatcher = read_artifact("the dispatcher SO", &a.dispatcher_so)?;
        let inner = read_artifact("the AICPU SO", &a.aicpu_so)?;
        let executor = read_artifact("the AICore executor", &a.aicore_executor)?;
        let api =
            Arc::new(NpuApi::load_from(&opts.cann_dirs).map_err(NpuError::cann("loading CANN"))?);
        let t = opts.timeouts;
        let driver = driver_id(opts.device).map_err(NpuError::cann("translating the device id"))?;
        let device = DeviceRefs::open(&api, opts.device)?;
        api.set_op_execute_timeout(t.op_execute_us)
            .map_err(NpuError::cann("setting the op-execute timeout"))?;
        let stream_step = NpuError::cann("creating the streams");
        let aicpu_stream = Stream::create(&api).map_err(stream_step)?;
        let aicore_stream = Stream::create(&api).map_err(NpuError::cann("creating the streams"))?;
        let (cube, vector) = aicore_stream
            .core_limits()
            .map_err(NpuError::cann("asking how many cores the stream may use"))?;
        let allowed = cube.min(vector / 2).min(MAX_PHYSICAL_CORES / 3);
        let clusters = if opts.clusters == 0 {
            allowed
        } else {
            opts.clusters
        };
        if clusters == 0 || clusters > allowed {
            return Err(NpuError::Invalid(format!(
                "{clusters} clusters asked for, the stream allows 1 to {allowed} ({cube} cube \
                 and {vector} vector cores)"
            )));
        }
        let fp = bootstrap::ensure(
            &api,
            &aicpu_stream,
            driver,
            &dispatcher,
            &inner,
            t.stream_sync_ms,
            t.recovery_ms,
        )?;
        let kernels = register(&api, fp, driver)?;
        let init = kernels
            .get(&op_type(INIT_SYMBOL, fp))
            .map_err(NpuError::cann("finding the AICPU init entry"))?;
        let payload = init_payload(
            driver,
            opts.ticks_per_us,
            t.device_watchdog_us,
            t.core_handshake_us,
        );
        init.launch_value(&aicpu_stream, 1, &payload)
            .map_err(NpuError::cann("launching the AICPU init"))?;
        if let Err(e) = aicpu_stream.synchronize(t.stream_sync_ms) {
            let _ = api.synchronize_device(t.recovery_ms);
            return Err(NpuError::Cann {
                step: "the AICPU init",
                source: e,
            });
        }
        kernels
            .get(&op_type(EXEC_SYMBOL, fp))
            .map_err(NpuError::cann("finding the AICPU exec entry"))?;
        let aicore = AicoreBinary::register(&api, executor)
            .map_err(NpuError::cann("registering the AICore executor"))?;
        let (base, _len) = api
            .map_aicore_registers(driver)
            .map_err(NpuError::cann("mapping the AICore registers"))?;
        let occupancy = api
            .aicore_occupancy(driver)
            .map_err(NpuError::cann("reading which AICore clusters are usable"))?;
        if (occupancy & ((1u64 << clusters) - 1)) != (1u64 << clusters) - 1 {
            return Err(NpuError::Invalid(format!(
                "the driver's occupancy mask {occupancy:#x} lacks some of the first {clusters} \
                 clusters: ask for fewer (--clusters)"
            )));
        }
        let table = register_table(base, occupancy, clusters);
        let mem_step = "allocating the session's device memory";
        let regs = DeviceMem::alloc(&api, table.len() * 8).map_err(NpuError::cann(mem_step))?;
        let bytes: Vec<u8> = table.iter().flat_map(|w| w.to_le_bytes()).collect();
        regs.write(0, &bytes).map_err(NpuError::cann(mem_step))?;
        let cores = 3 * clusters as usize;
        let handshakes = DeviceMem::alloc(&api, cores * size_of::<Handshake>())
            .map_err(NpuError::cann(mem_step))?;
        let slots = DeviceMem::alloc(&api, cores * 2 * size_of::<Slot>())
            .map_err(NpuError::cann(mem_step))?;
        Ok(NpuSession {
            api,
            opts,
            live: Some(Live {
                aicpu_stream,
                aicore_stream,
                uploads: Uploads::default(),
                kernels,
                aicore,
                handshakes,
                slots,
                regs,
                device,
            }),
            clusters,
            fingerprint: fp,
            runs: 0,
        })
    }

    /// The device (ACL's id).
    pub fn device(&self) -> i32 {
        self.opts.device
    }

    /// AICore clusters in use.
    pub fn clusters(&self) -> u32 {
        self.clusters
    }

    /// The fingerprint of the AICPU SO in use.
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }

    /// Whether the session can still run (no failure reset it).
    pub fn usable(&self) -> bool {
        self.live.is_some()
    }

    /// The libraries loaded.
    pub fn libraries(&self) -> &[std::path::PathBuf; 3] {
        self.api.libraries()
    }

    /// The recovery after a failed run: waits (bounded) for the device to drain,
    /// `aclrtResetDeviceForce`, then releases everything in order (the streams first, whose
    /// destruction waits for their kernels, then `keep`: a run's memory those kernels may
    /// still have touched).
    pub(super) fn recover<T>(&mut self, keep: T) {
        let _ = self.api.synchronize_device(self.opts.timeouts.recovery_ms);
        if let Some(live) = self.live.take() {
            let Live {
                aicpu_stream,
                aicore_stream,
                uploads,
                kernels,
                aicore,
                handshakes,
                slots,
                regs,
                mut device,
            } = live;
            // The reset stops the cores first, so that the streams' kernels end and the
            // streams can go; then what those kernels used.
            device.reset_force();
            drop((aicpu_stream, aicore_stream));
            drop(keep);
            drop((uploads, kernels, aicore, handshakes, slots, regs));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_register_table_puts_each_subcore_at_the_chips_strides_by_physical_id() {
        let t = register_table(0x1000_0000, 0b101, 3);
        assert_eq!(t.len(), MAX_PHYSICAL_CORES as usize);
        assert_eq!(t[0], 0x1000_0000);
        assert_eq!(t[2], 0x1000_0000 + 2 * SUBCORE_STRIDE as u64);
        assert_eq!(t[3..6], [0, 0, 0], "cluster 1 is not in the occupancy mask");
        assert_eq!(
            t[7],
            0x1000_0000 + 2 * CLUSTER_STRIDE as u64 + SUBCORE_STRIDE as u64
        );
        assert!(t[9..].iter().all(|&w| w == 0));
    }
}
