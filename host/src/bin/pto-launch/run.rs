//! `pto-launch run`: runs a user's orchestration SO and kernels on an NPU through CANN
//! (`--backend npu`). Kernels are raw AICore code (only `.text`, entry at offset 0), given
//! as a directory (every `*.bin`, ids in name order) or a comma-separated list (ids in list
//! order). Buffers are device memory the orchestration's arguments may name; after a
//! successful run each is written to `--output DIR` as `buffer_<n>.bin`; `--trace FILE`
//! writes the task records the device copied back as a Chrome trace.

use std::path::{Path, PathBuf};

use clap::{Args, value_parser};
use serde::Serialize;

use crate::error::CliError;

/// `pto-launch run` flags.
#[derive(Args, Debug)]
pub struct RunArgs {
    /// Where to run: `npu` (an Ascend NPU through CANN).
    #[arg(long, value_enum)]
    pub backend: RunBackend,
    /// ACL's device id (0 to 63; ASCEND_RT_VISIBLE_DEVICES applies).
    #[arg(long, default_value_t = 0, value_parser = value_parser!(i32).range(0..64))]
    pub device: i32,
    /// The orchestration SO (exports `pto_orchestrate`).
    #[arg(long, value_name = "SO")]
    pub orchestration: PathBuf,
    /// The kernels: a directory of `*.bin` (ids in name order) or a comma-separated list.
    #[arg(long, value_name = "DIR|K0,K1,...")]
    pub kernels: String,
    /// A device buffer: `BYTES` (zeroed) or `BYTES=FILE` (its first bytes from FILE);
    /// buffer n is the n-th given.
    #[arg(long = "buffer", value_name = "BYTES[=FILE]")]
    pub buffers: Vec<String>,
    /// An orchestration argument: a number, `buffer:N` (buffer N's device address) or
    /// `kernel:N` (kernel N's id); in order.
    #[arg(long = "arg", value_name = "V|buffer:N|kernel:N")]
    pub args: Vec<String>,
    /// Writes each buffer to `DIR/buffer_<n>.bin` after a successful run.
    #[arg(long, value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// libpto_aicpu.so (default: $PTO_AICPU_SO).
    #[arg(long, value_name = "SO")]
    pub aicpu_so: Option<PathBuf>,
    /// libpto_dispatcher.so (default: $PTO_DISPATCHER_SO).
    #[arg(long, value_name = "SO")]
    pub dispatcher_so: Option<PathBuf>,
    /// The AICore executor object (default: $PTO_AICORE_EXECUTOR).
    #[arg(long, value_name = "OBJ")]
    pub aicore_executor: Option<PathBuf>,
    /// A directory to look for CANN's libraries in first.
    #[arg(long, value_name = "DIR")]
    pub cann_dir: Option<PathBuf>,
    /// AICore clusters (1 AIC + 2 AIV each; 0: all the stream allows).
    #[arg(long, default_value_t = 0, value_parser = value_parser!(u32).range(0..=25))]
    pub clusters: u32,
    /// AICPU scheduler threads (1 to 5; one more orchestrates).
    #[arg(long, default_value_t = 2, value_parser = value_parser!(u8).range(1..=5))]
    pub schedulers: u8,
    /// Task slots per ring (4 to 1048576).
    #[arg(long, default_value_t = 1024, value_parser = value_parser!(u32).range(4..=1_048_576))]
    pub task_window: u32,
    /// The output heap in bytes (64 to 2^34).
    #[arg(long, default_value_t = 1 << 20, value_parser = value_parser!(u64).range(64..=1 << 34))]
    pub heap_bytes: u64,
    /// The device counter's ticks per µs (0: the AICPU reads its counter's frequency; set
    /// it only for a fake CANN on a host whose counter does not say).
    #[arg(long, default_value_t = 0, hide = true)]
    pub device_ticks_per_us: u64,
    /// Writes the run's task records as a Chrome trace (open it in Perfetto): the run
    /// profiles at `Tasks` and the device copies back up to 65536 records.
    #[arg(long, value_name = "FILE.json")]
    pub trace: Option<PathBuf>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Most task records `--trace` copies back.
#[cfg_attr(not(feature = "cann"), allow(dead_code))]
const TRACE_RECORDS: u32 = 65_536;

/// `--backend` values of `run`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RunBackend {
    /// An Ascend NPU through CANN, loaded at run time.
    Npu,
}

/// What a run reports.
#[cfg_attr(not(feature = "cann"), allow(dead_code))]
#[derive(Debug, Serialize)]
pub struct RunResults {
    device: i32,
    run: u64,
    tasks_finished: u64,
    outputs: Vec<PathBuf>,
    /// The trace written, the records in it and the records the run held.
    trace: Option<(PathBuf, usize, u32)>,
}

impl std::fmt::Display for RunResults {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "device {}: run {} finished {} tasks",
            self.device, self.run, self.tasks_finished
        )?;
        for o in &self.outputs {
            write!(f, "\n  wrote {}", o.display())?;
        }
        if let Some((path, n, total)) = &self.trace {
            write!(
                f,
                "\n  wrote {} ({n} of {total} task records)",
                path.display()
            )?;
        }
        Ok(())
    }
}

#[cfg_attr(not(feature = "cann"), allow(dead_code))]
fn read(what: &str, path: &Path) -> Result<Vec<u8>, CliError> {
    std::fs::read(path).map_err(|e| bad(format!("cannot read {what} {}: {e}", path.display())))
}

fn bad(why: String) -> CliError {
    CliError::Run(why)
}

/// The kernel files, in id order.
#[cfg_attr(not(feature = "cann"), allow(dead_code))]
fn kernel_files(spec: &str) -> Result<Vec<PathBuf>, CliError> {
    let dir = Path::new(spec);
    if dir.is_dir() {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(|e| bad(format!("cannot list {}: {e}", dir.display())))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "bin"))
            .collect();
        files.sort();
        if files.is_empty() {
            return Err(bad(format!("{} holds no *.bin kernel", dir.display())));
        }
        return Ok(files);
    }
    Ok(spec
        .split(',')
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .collect())
}

#[cfg(feature = "cann")]
mod npu {
    use super::*;
    use pto_host::npu::{Artifacts, BufferSpec, NpuOptions, NpuSession, OrchArg, RunSpec};
    use pto_host::profile::{chrome_trace, write_trace};

    fn artifact(flag: &Option<PathBuf>, var: &str, name: &str) -> Result<PathBuf, CliError> {
        flag.clone()
            .or_else(|| std::env::var_os(var).map(PathBuf::from))
            .ok_or_else(|| {
                bad(format!(
                    "where is {name}? give --{} or set {var}",
                    flag_name(var)
                ))
            })
    }

    fn flag_name(var: &str) -> String {
        var.trim_start_matches("PTO_")
            .to_lowercase()
            .replace('_', "-")
    }

    fn orch_arg(s: &str) -> Result<OrchArg, CliError> {
        let num = |v: &str| {
            let parsed = match v.strip_prefix("0x") {
                Some(h) => u64::from_str_radix(h, 16),
                None => v.parse::<u64>(),
            };
            parsed.map_err(|_| bad(format!("--arg {s:?}: want a number, buffer:N or kernel:N")))
        };
        Ok(if let Some(n) = s.strip_prefix("buffer:") {
            OrchArg::Buffer(num(n)? as usize)
        } else if let Some(n) = s.strip_prefix("kernel:") {
            OrchArg::Kernel(num(n)? as usize)
        } else {
            OrchArg::Value(num(s)?)
        })
    }

    fn buffer(s: &str) -> Result<BufferSpec, CliError> {
        let (bytes, file) = match s.split_once('=') {
            Some((b, f)) => (b, Some(f)),
            None => (s, None),
        };
        let bytes: usize = bytes.parse().ok().filter(|&b| b > 0).ok_or_else(|| {
            bad(format!(
                "--buffer {s:?}: want BYTES or BYTES=FILE, BYTES > 0"
            ))
        })?;
        let init = match file {
            Some(f) => read("the buffer's contents", Path::new(f))?,
            None => Vec::new(),
        };
        Ok(BufferSpec { bytes, init })
    }

    pub fn run(a: &RunArgs) -> Result<RunResults, CliError> {
        let kernels = kernel_files(&a.kernels)?
            .iter()
            .map(|p| read("the kernel", p))
            .collect::<Result<Vec<_>, _>>()?;
        let mut spec = RunSpec::new(read("the orchestration SO", &a.orchestration)?, kernels);
        spec.buffers = a
            .buffers
            .iter()
            .map(|b| buffer(b))
            .collect::<Result<_, _>>()?;
        spec.args = a
            .args
            .iter()
            .map(|s| orch_arg(s))
            .collect::<Result<_, _>>()?;
        spec.task_window = a.task_window;
        spec.heap_bytes = a.heap_bytes as usize;
        let ticks_per_us = match (&a.trace, a.device_ticks_per_us) {
            (None, _) => 0,
            (Some(_), 0) => pto_device_sys::raw::arch::counter_frequency()
                .map(|hz| hz / 1_000_000)
                .filter(|&t| t > 0)
                .ok_or_else(|| {
                    bad(
                        "--trace needs the device counter's rate, and this host's counter \
                         does not say it: give --device-ticks-per-us"
                            .into(),
                    )
                })?,
            (Some(_), t) => t,
        };
        if a.trace.is_some() {
            spec.records = TRACE_RECORDS;
        }
        spec.check().map_err(bad)?;
        let artifacts = Artifacts {
            aicpu_so: artifact(&a.aicpu_so, "PTO_AICPU_SO", "libpto_aicpu.so")?,
            dispatcher_so: artifact(
                &a.dispatcher_so,
                "PTO_DISPATCHER_SO",
                "libpto_dispatcher.so",
            )?,
            aicore_executor: artifact(
                &a.aicore_executor,
                "PTO_AICORE_EXECUTOR",
                "the AICore executor",
            )?,
        };
        let mut opts = NpuOptions::new(a.device, artifacts);
        opts.cann_dirs = a.cann_dir.iter().cloned().collect();
        opts.clusters = a.clusters;
        opts.schedulers = a.schedulers;
        opts.ticks_per_us = a.device_ticks_per_us;
        let mut session = NpuSession::open(opts).map_err(|e| bad(e.to_string()))?;
        let out = session.run(&spec).map_err(|e| bad(e.to_string()))?;
        let mut outputs = Vec::new();
        if let Some(dir) = &a.output {
            std::fs::create_dir_all(dir)
                .map_err(|e| bad(format!("cannot make {}: {e}", dir.display())))?;
            for (i, b) in out.buffers.iter().enumerate() {
                let p = dir.join(format!("buffer_{i}.bin"));
                std::fs::write(&p, b)
                    .map_err(|e| bad(format!("cannot write {}: {e}", p.display())))?;
                outputs.push(p);
            }
        }
        let trace = match &a.trace {
            Some(path) => {
                let records: Vec<_> = out.records.iter().map(|r| r.to_record()).collect();
                write_trace(path, &chrome_trace(&records, ticks_per_us))?;
                Some((path.clone(), records.len(), out.status.0.records_total))
            }
            None => None,
        };
        Ok(RunResults {
            device: a.device,
            run: out.status.0.run,
            tasks_finished: out.status.finished(),
            outputs,
            trace,
        })
    }
}

/// Runs `pto-launch run`.
pub fn run(a: &RunArgs) -> Result<(), CliError> {
    #[cfg(feature = "cann")]
    {
        let results = npu::run(a)?;
        crate::print("run", &(a.backend, a.device), &results, a.json)
    }
    #[cfg(not(feature = "cann"))]
    {
        Err(bad(format!(
            "this pto-launch was built without the `cann` feature: rebuild with it to run on \
             {:?}",
            a.backend
        )))
    }
}
