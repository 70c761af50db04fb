//! What one run executes, on the NPU (`npu`) or the simulator (`sim_backend`): the user's
//! orchestration SO, the kernels (ELF files whose entry, `void (*)(int64_t *args)`, is found
//! by its symbol: a shared object of this host for the simulator, an AICore object or image
//! for the NPU), device buffers, and the orchestration's arguments, which may name buffers
//! (their device address) and kernels (their id).

use std::path::Path;

pub use pto_sim::DEFAULT_ENTRY;

/// One kernel of a run: its file's bytes and the symbol of its entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelSpec {
    /// Its name in errors, logs and traces.
    pub name: String,
    /// The file it came from, as errors name it.
    pub file: String,
    /// The file's bytes: an ELF shared object of this host (the simulator) or an AICore ELF
    /// object or linked image (an NPU).
    pub bytes: Vec<u8>,
    /// The symbol of its entry ([`DEFAULT_ENTRY`] unless the user names another).
    pub entry: String,
}

impl KernelSpec {
    /// The kernel in `bytes`, named `name` (also as its file), entry [`DEFAULT_ENTRY`].
    pub fn new(name: impl Into<String>, bytes: Vec<u8>) -> Self {
        let name = name.into();
        KernelSpec {
            file: name.clone(),
            name,
            bytes,
            entry: DEFAULT_ENTRY.into(),
        }
    }

    /// The kernel in the file at `path`, its entry `entry` (default [`DEFAULT_ENTRY`]), named
    /// after the entry when one is given, else after the file's stem.
    pub fn read(path: &Path, entry: Option<&str>) -> std::io::Result<Self> {
        let bytes = std::fs::read(path)?;
        let stem = || {
            path.file_stem().map_or_else(
                || path.display().to_string(),
                |s| s.to_string_lossy().into_owned(),
            )
        };
        Ok(KernelSpec {
            name: entry.map_or_else(stem, str::to_owned),
            file: path.display().to_string(),
            bytes,
            entry: entry.unwrap_or(DEFAULT_ENTRY).into(),
        })
    }
}

pub use crate::orch_config::Capacities;

/// Most watched ranges a run may name (`libpto_aicpu.so` refuses more).
pub const MAX_WATCHED: usize = 256;

/// One argument of the orchestration function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OrchArg {
    /// A number, passed as is.
    Value(u64),
    /// The device address of buffer `n`.
    Buffer(usize),
    /// The id of kernel `n` (its index).
    Kernel(usize),
}

/// A device buffer of a run.
#[derive(Clone, Debug, Default)]
pub struct BufferSpec {
    /// Its bytes.
    pub bytes: usize,
    /// Its first bytes before the run (the rest is zero).
    pub init: Vec<u8>,
}

/// One run.
#[derive(Clone, Debug)]
pub struct RunSpec {
    /// The orchestration SO's bytes (exports `pto_orchestrate`).
    pub orchestration: Vec<u8>,
    /// What errors and crash reports call the orchestration SO (its file, say).
    pub orchestration_name: String,
    /// Kernels by id.
    pub kernels: Vec<KernelSpec>,
    /// Device buffers.
    pub buffers: Vec<BufferSpec>,
    /// The orchestration's arguments.
    pub args: Vec<OrchArg>,
    /// Capacities the run is given (dependencies, tensor and scalar arguments per task, task
    /// window, output heap); each one left `None` takes the orchestration SO's declaration,
    /// else the default ([`crate::orch_config::resolve`]).
    pub capacities: Capacities,
    /// Ranges of device memory (`(address, bytes)`) outside the run's own that kernels'
    /// deferred conditions may watch, e.g. this rank's `hccl` window (a condition on a word
    /// outside every range fails the run with `BadCondition`). On the NPU only: the
    /// simulator watches any word it addresses.
    pub watched: Vec<(u64, u64)>,
    /// Task records to keep (0: none; more turns profiling on at `Tasks` for the run): the
    /// outcome's `records` (`npu::RunOutcome`, [`crate::sim_backend::SimOutcome`]) gets up
    /// to this many, in the order tasks finished.
    pub records: u32,
}

impl RunSpec {
    /// A run of `orchestration` with `kernels`, no buffers, no arguments.
    pub fn new(orchestration: Vec<u8>, kernels: Vec<KernelSpec>) -> Self {
        RunSpec {
            orchestration,
            orchestration_name: "the orchestration SO".into(),
            kernels,
            buffers: Vec::new(),
            args: Vec::new(),
            capacities: Capacities::default(),
            watched: Vec::new(),
            records: 0,
        }
    }

    /// Refuses a spec that cannot run: arguments naming what does not exist, buffers whose
    /// initial bytes overflow them, nothing to run.
    pub fn check(&self) -> Result<(), String> {
        if self.orchestration.is_empty() {
            return Err("the orchestration SO is empty".into());
        }
        if let Some(k) = self.kernels.iter().find(|k| k.bytes.is_empty()) {
            return Err(format!("kernel {} is empty", k.file));
        }
        for (i, b) in self.buffers.iter().enumerate() {
            if b.bytes == 0 || b.init.len() > b.bytes {
                return Err(format!(
                    "buffer {i}: {} bytes with {} initial bytes",
                    b.bytes,
                    b.init.len()
                ));
            }
        }
        if self.watched.len() > MAX_WATCHED {
            return Err(format!(
                "{} watched ranges, and the AICPU takes at most {MAX_WATCHED}",
                self.watched.len()
            ));
        }
        if let Some(&(at, len)) = self
            .watched
            .iter()
            .find(|&&(at, len)| len == 0 || at.checked_add(len).is_none())
        {
            return Err(format!(
                "a watched range of {len} bytes at {at:#x} is empty or wraps"
            ));
        }
        for a in &self.args {
            match *a {
                OrchArg::Buffer(n) if n >= self.buffers.len() => {
                    return Err(format!(
                        "an argument names buffer {n}, and there are {}",
                        self.buffers.len()
                    ));
                }
                OrchArg::Kernel(n) if n >= self.kernels.len() => {
                    return Err(format!(
                        "an argument names kernel {n}, and there are {}",
                        self.kernels.len()
                    ));
                }
                _ => {}
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spec_naming_what_does_not_exist_is_refused_with_what_there_is() {
        let mut s = RunSpec::new(vec![1], vec![KernelSpec::new("k0", vec![0xc3])]);
        assert_eq!(s.check(), Ok(()));
        s.args = vec![OrchArg::Buffer(0)];
        assert!(s.check().unwrap_err().contains("buffer 0, and there are 0"));
        s.args = vec![OrchArg::Kernel(1)];
        assert!(s.check().unwrap_err().contains("kernel 1, and there are 1"));
        s.args.clear();
        s.buffers = vec![BufferSpec {
            bytes: 4,
            init: vec![0; 8],
        }];
        assert!(
            s.check()
                .unwrap_err()
                .contains("4 bytes with 8 initial bytes")
        );
        s.buffers.clear();
        s.kernels.push(KernelSpec::new("k1.so", Vec::new()));
        assert!(s.check().unwrap_err().contains("kernel k1.so is empty"));
        s.kernels.pop();
        s.watched = vec![(0x1000, 0)];
        assert!(s.check().unwrap_err().contains("empty or wraps"));
        s.watched = vec![(u64::MAX, 8)];
        assert!(s.check().unwrap_err().contains("empty or wraps"));
        s.watched = vec![(0x1000, 64)];
        assert_eq!(s.check(), Ok(()));
    }
}
