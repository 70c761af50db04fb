//! One run on an open session: the kernels and the orchestration SO on the device (once
//! per session, `uploads.rs`), the run's device memory (region, kernel table, arguments,
//! buffers, heap, report, tensor descriptors), the handshakes cleared, the AICore executor
//! launched on its stream, then the AICPU `exec` on `schedulers + 1` threads (one more that
//! pumps the task records when the run keeps them); both streams synchronised (bounded),
//! the task records and each task's producers collected meanwhile (`record_stream.rs`),
//! the report and the buffers
//! read back. On any failure the session
//! recovers ([`NpuSession`]) and the error keeps the host's failing call and the device's
//! report apart.

use pto_device_sys::cann::{CannError, DeviceMem};
use pto_device_sys::chip::layout::{Handshake, PtoAicoreArgs, TENSOR_DESC_BYTES};
use pto_runtime_core::ffi::PtoRecord;
use pto_runtime_core::{Config, ProfileLevel, RegionLayout};

use super::abi_payload::{DeviceStatus, ExecAddrs, REPORT_BYTES, exec_payload};
use super::error::NpuError;
use super::kernel_image::kernel_image;
use pto_device_sys::abi::PtoProducers;
use pto_runtime_core::TaskId;

use super::record_stream::{CONTROL_BYTES, Collect, Collector, collect_until_done};
use super::records::RECORD_BYTES;
use super::register::{EXEC_SYMBOL, op_type};
use super::session::NpuSession;
use crate::orch_config::{RunCapacities, resolve};
use crate::program::{OrchArg, RunSpec};

/// What a successful run left.
#[derive(Debug)]
pub struct RunOutcome {
    /// The device's report.
    pub status: DeviceStatus,
    /// Every buffer's bytes after the run.
    pub buffers: Vec<Vec<u8>>,
    /// The run's task records, in the order the tasks were submitted: one per task (per
    /// block of a task of several), streamed from the device while the run went. Records
    /// the device could not keep are counted in `status.0.records_lost`.
    pub records: Vec<PtoRecord>,
    /// With the records, the run's DAG: each task in submission order with the tasks it
    /// depended on (`None` without records, or when the device could not keep them all).
    pub producers: Option<Vec<(TaskId, Vec<TaskId>)>>,
    /// The run's AIC and AIV cores.
    pub cores: (u16, u16),
}

/// What the streams of a run carried.
struct Streamed {
    records: Vec<PtoRecord>,
    producers: Option<Vec<(TaskId, Vec<TaskId>)>>,
}

/// The DAG the producers' entries say, consecutive entries of a task merged.
fn dag_of(entries: &[PtoProducers]) -> Vec<(TaskId, Vec<TaskId>)> {
    let mut dag: Vec<(TaskId, Vec<TaskId>)> = Vec::new();
    for e in entries {
        let task = TaskId::from_raw(e.task);
        let ps = e
            .producers
            .iter()
            .take_while(|&&p| p != PtoProducers::NONE)
            .map(|&p| TaskId::from_raw(p));
        match dag.last_mut() {
            Some((t, list)) if *t == task => list.extend(ps),
            _ => dag.push((task, ps.collect())),
        }
    }
    dag
}

/// A run's device memory, released after the kernels that use it are done.
struct RunMem {
    region: DeviceMem,
    table: DeviceMem,
    orch_args: DeviceMem,
    buffers: Vec<DeviceMem>,
    heap: DeviceMem,
    report: DeviceMem,
    aicore_args: DeviceMem,
    tensors: DeviceMem,
    /// The ranges the AICPU may read for conditions and predicates, `nwatched` of them.
    watched: DeviceMem,
    nwatched: u32,
    records: DeviceMem,
    /// The record stream's control block.
    record_stream: DeviceMem,
    /// The producers' ring and its stream's control block.
    producers: DeviceMem,
    producer_stream: DeviceMem,
}

fn words(v: &[u64]) -> Vec<u8> {
    v.iter().flat_map(|w| w.to_le_bytes()).collect()
}

impl NpuSession {
    fn config(&self, spec: &RunSpec, caps: &RunCapacities) -> Config {
        caps.apply(Config {
            aic_cores: self.clusters as u16,
            aiv_cores: 2 * self.clusters as u16,
            schedulers: self.opts.schedulers,
            task_timeout_us: self.opts.timeouts.task_us,
            submit_timeout_us: self.opts.timeouts.submit_us,
            deferred_timeout_us: self.opts.timeouts.deferred_us,
            max_conditions: self.opts.max_conditions,
            profile: if spec.records > 0 {
                ProfileLevel::Tasks
            } else {
                ProfileLevel::Off
            },
            profile_capacity: spec.records.max(1),
            ..Config::default()
        })
    }

    fn alloc_run(
        &self,
        spec: &RunSpec,
        (cfg, heap_bytes): (&Config, u64),
        kernel_addrs: &[u64],
    ) -> Result<RunMem, CannError> {
        let api = &self.api;
        let region_bytes = RegionLayout::new(cfg)
            .map_err(|e| CannError::Invalid(format!("the runtime's region: {e}")))?
            .size();
        let region = DeviceMem::alloc(api, region_bytes + 64)?;
        let table = DeviceMem::alloc(api, kernel_addrs.len().max(1) * 8)?;
        table.write(0, &words(kernel_addrs))?;
        let mut buffers = Vec::with_capacity(spec.buffers.len());
        for b in &spec.buffers {
            let m = DeviceMem::alloc(api, b.bytes)?;
            m.write(0, &b.init)?;
            buffers.push(m);
        }
        let args: Vec<u64> = spec
            .args
            .iter()
            .map(|a| match *a {
                OrchArg::Value(v) => v,
                OrchArg::Buffer(n) => buffers[n].addr(),
                OrchArg::Kernel(n) => n as u64,
            })
            .collect();
        let orch_args = DeviceMem::alloc(api, args.len().max(1) * 8)?;
        orch_args.write(0, &words(&args))?;
        let heap_bytes = usize::try_from(heap_bytes).map_err(|_| {
            CannError::Invalid(format!(
                "a heap of {heap_bytes} bytes is past this host's sizes"
            ))
        })?;
        let heap = DeviceMem::alloc(api, heap_bytes.max(64))?;
        let report = DeviceMem::alloc(api, REPORT_BYTES)?;
        let aicore_args = DeviceMem::alloc(api, size_of::<PtoAicoreArgs>())?;
        let cores = usize::from(cfg.aic_cores) + usize::from(cfg.aiv_cores);
        let tensors = DeviceMem::alloc(
            api,
            cores * 2 * usize::from(cfg.max_tensors) * TENSOR_DESC_BYTES,
        )?;
        // The run's own memory (its buffers and output heap) first, then what the spec adds
        // (a rank's window): a deferred condition or a predicate may read any of them.
        let own = buffers
            .iter()
            .map(|m| (m.addr(), m.len() as u64))
            .chain([(heap.addr(), heap.len() as u64)]);
        let all: Vec<(u64, u64)> = own.chain(spec.watched.iter().copied()).collect();
        if all.len() > crate::program::MAX_WATCHED {
            return Err(CannError::Invalid(format!(
                "{} buffers, the output heap and {} watched ranges are {} ranges the AICPU \
                 may read, and it takes at most {}: pass fewer buffers",
                buffers.len(),
                spec.watched.len(),
                all.len(),
                crate::program::MAX_WATCHED
            )));
        }
        let ranges: Vec<u64> = all.iter().flat_map(|&(at, len)| [at, len]).collect();
        let watched = DeviceMem::alloc(api, ranges.len().max(2) * 8)?;
        watched.write(0, &words(&ranges))?;
        let records = DeviceMem::alloc(api, (spec.records as usize).max(1) * RECORD_BYTES)?;
        let record_stream = DeviceMem::alloc(api, CONTROL_BYTES)?;
        let producers = DeviceMem::alloc(
            api,
            (spec.records as usize).max(1) * size_of::<PtoProducers>(),
        )?;
        let producer_stream = DeviceMem::alloc(api, CONTROL_BYTES)?;
        Ok(RunMem {
            region,
            table,
            orch_args,
            buffers,
            heap,
            report,
            aicore_args,
            tensors,
            watched,
            nwatched: all.len() as u32,
            records,
            record_stream,
            producers,
            producer_stream,
        })
    }

    /// Runs `spec`; see the module doc.
    pub fn run(&mut self, spec: &RunSpec) -> Result<RunOutcome, NpuError> {
        spec.check().map_err(NpuError::Invalid)?;
        let caps = resolve(&spec.capacities, &spec.orchestration)
            .map_err(|e| NpuError::Invalid(e.to_string()))?;
        let Some(live) = self.live.as_ref() else {
            return Err(NpuError::Unusable(self.opts.device));
        };
        live.device.on_this_thread()?;
        let cfg = self.config(spec, &caps);
        // Each kernel's code, its entry found by symbol in its ELF file.
        let images = spec
            .kernels
            .iter()
            .map(kernel_image)
            .collect::<Result<Vec<_>, _>>()
            .map_err(NpuError::Invalid)?;
        // Kernels then the orchestration SO, on the device once per session.
        let mut blobs: Vec<&[u8]> = images.iter().map(|i| i.code.as_slice()).collect();
        blobs.push(&spec.orchestration);
        let api = std::sync::Arc::clone(&self.api);
        let uploaded = self
            .live
            .as_mut()
            .expect("checked above")
            .uploads
            .addrs(&api, &blobs);
        let mut code = match uploaded {
            Ok(a) => a,
            Err(e) => {
                return Err(NpuError::Cann {
                    step: "uploading the kernels and the orchestration SO",
                    source: e,
                });
            }
        };
        let orch_so = code.pop().expect("the SO is the last blob");
        // A kernel's address is its entry's, inside its uploaded code.
        for (addr, image) in code.iter_mut().zip(&images) {
            *addr += image.entry;
        }
        let mem = match self.alloc_run(spec, (&cfg, caps.heap_total(cfg.rings)), &code) {
            Ok(m) => m,
            Err(e) => {
                // Nothing was launched: the session stays usable.
                return Err(NpuError::Cann {
                    step: "allocating the run's device memory",
                    source: e,
                });
            }
        };
        self.runs += 1;
        match self.launch_and_wait(spec, &cfg, &mem, (orch_so, code.len() as u32)) {
            Ok((status, streamed)) if status.ok() => {
                let mut buffers = Vec::with_capacity(mem.buffers.len());
                for b in &mem.buffers {
                    let mut out = vec![0u8; b.len()];
                    if let Err(e) = b.read(0, &mut out) {
                        self.recover(mem);
                        return Err(NpuError::Run {
                            host: Some(("reading the buffers back", e)),
                            device: Some(Box::new(status)),
                        });
                    }
                    buffers.push(out);
                }
                Ok(RunOutcome {
                    status,
                    buffers,
                    records: streamed.records,
                    producers: streamed.producers,
                    cores: (cfg.aic_cores, cfg.aiv_cores),
                })
            }
            Ok((status, _)) => {
                self.recover(mem);
                Err(NpuError::Run {
                    host: None,
                    device: Some(Box::new(status)),
                })
            }
            Err((step, e)) => {
                // The device may have written its report before the host's call failed.
                let device = mem
                    .report
                    .read_report(0)
                    .ok()
                    .map(DeviceStatus)
                    .filter(|d| d.0.run != 0)
                    .map(Box::new);
                self.recover(mem);
                Err(NpuError::Run {
                    host: Some((step, e)),
                    device,
                })
            }
        }
    }

    /// The launches of one run and the waits for them, collecting the task records
    /// meanwhile; the device's report and the records.
    fn launch_and_wait(
        &self,
        spec: &RunSpec,
        cfg: &Config,
        mem: &RunMem,
        (orch_so, nkernels): (u64, u32),
    ) -> Result<(DeviceStatus, Streamed), (&'static str, CannError)> {
        let live = self.live.as_ref().expect("checked by run");
        let sync = self.opts.timeouts.stream_sync_ms;
        let cores = 3 * self.clusters as usize;
        // Every core's handshake block (aicore_done and aicpu_ready among it), zeroed before
        // the executors start.
        let step = "clearing the handshakes";
        for i in 0..cores {
            live.handshakes
                .write(i * size_of::<Handshake>(), &[0u8; size_of::<Handshake>()])
                .map_err(|e| (step, e))?;
        }
        let aicore_args = PtoAicoreArgs {
            handshakes: live.handshakes.addr(),
            aic_cores: self.clusters,
            reserved: 0,
        };
        mem.aicore_args
            .write(0, bytemuck::bytes_of(&aicore_args))
            .map_err(|e| ("writing the AICore executor's arguments", e))?;
        mem.region.zero().map_err(|e| ("clearing the region", e))?;
        let streams = spec.records > 0;
        let wait_us = self.opts.timeouts.submit_us;
        let mut collectors = if streams {
            let step = "clearing the streams' control blocks";
            let (r, r_at) = Collector::<PtoRecord>::new(&mem.record_stream, &mem.records, wait_us)
                .map_err(|e| (step, e))?;
            let (p, p_at) =
                Collector::<PtoProducers>::new(&mem.producer_stream, &mem.producers, wait_us)
                    .map_err(|e| (step, e))?;
            Some(((r, r_at), (p, p_at)))
        } else {
            None
        };
        let at = |c: &Option<((_, u64), (_, u64))>| c.as_ref().map_or((0, 0), |c| (c.0.1, c.1.1));
        let (record_stream, producer_stream) = at(&collectors);
        let addrs = ExecAddrs {
            region: (
                mem.region.addr().next_multiple_of(64),
                mem.region.len() as u64 - 64,
            ),
            handshakes: live.handshakes.addr(),
            slots: live.slots.addr(),
            regs: (live.regs.addr(), (live.regs.len() / 8) as u32),
            kernels: (mem.table.addr(), nkernels),
            orch_so: (orch_so, spec.orchestration.len() as u64),
            orch_args: (mem.orch_args.addr(), spec.args.len() as u32),
            heap: (mem.heap.addr(), mem.heap.len() as u64),
            report: mem.report.addr(),
            tensors: mem.tensors.addr(),
            watched: (mem.watched.addr(), mem.nwatched),
            records: (mem.records.addr(), spec.records),
            record_stream,
            producers: (mem.producers.addr(), spec.records),
            producer_stream,
        };
        let threads = u32::from(self.opts.schedulers) + 1 + u32::from(streams);
        let payload = exec_payload(cfg, threads, &addrs);
        let exec = live
            .kernels
            .get(&op_type(EXEC_SYMBOL, self.fingerprint))
            .map_err(|e| ("finding the AICPU exec entry", e))?;
        // The executors first, on their own stream, then the AICPU's exec.
        live.aicore
            .launch(&live.aicore_stream, self.clusters, mem.aicore_args.addr())
            .map_err(|e| ("launching the AICore executor", e))?;
        exec.launch_value(&live.aicpu_stream, threads, &payload)
            .map_err(|e| ("launching the AICPU exec", e))?;
        match collectors.as_mut() {
            Some(((r, _), (p, _))) => {
                let streams: &mut [&mut dyn Collect] = &mut [r, p];
                collect_until_done(streams, &live.aicpu_stream, sync).map_err(|e| {
                    (
                        "waiting for the AICPU exec and collecting its task records",
                        e,
                    )
                })?
            }
            None => live
                .aicpu_stream
                .synchronize(sync)
                .map_err(|e| ("waiting for the AICPU exec", e))?,
        }
        live.aicore_stream
            .synchronize(sync)
            .map_err(|e| ("waiting for the AICore executors", e))?;
        let report = mem
            .report
            .read_report(0)
            .map_err(|e| ("reading the device's report", e))?;
        let streamed = match collectors {
            Some(((r, _), (p, _))) => {
                let step = "reading the streams' ends";
                let records = r.finish().map_err(|e| (step, e))?.0;
                let (entries, lost) = p.finish().map_err(|e| (step, e))?;
                Streamed {
                    records,
                    producers: (lost == 0).then(|| dag_of(&entries)),
                }
            }
            None => Streamed {
                records: Vec::new(),
                producers: None,
            },
        };
        Ok((DeviceStatus(report), streamed))
    }
}
