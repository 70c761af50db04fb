//! The capacities of a program's run (dependencies, tensor and scalar arguments per task, the
//! task window, the output heap), each from the first of: the [`RunSpec`](crate::program::RunSpec)
//! (a flag of `pto-launch run`), the orchestration SO's declaration (`PTO_ORCHESTRATION_CONFIG`
//! in `pto_aicpu.h`: the data symbol `pto_orchestration_config`, read from the SO's file
//! without running it, since the region is laid out before any device code runs and an NPU's
//! SO is code this host may not execute), and the default. Both backends resolve them with
//! [`resolve`]; a malformed declaration is refused naming its field.
//!
//! ```no_run
//! use pto_host::orch_config::{Capacities, Origin, resolve};
//!
//! let so = std::fs::read("liborchestration.so")?;
//! let given = Capacities { max_deps: Some(32), ..Capacities::default() };
//! let caps = resolve(&given, &so)?;
//! assert_eq!((caps.max_deps.value, caps.max_deps.from), (32, Origin::Given));
//! println!("task window {} ({:?})", caps.task_window.value, caps.task_window.from);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use object::{Object, ObjectSection, ObjectSymbol};
use serde::Serialize;

use pto_device_sys::abi::{PTO_ORCH_CONFIG_ABI, PTO_ORCH_CONFIG_SYMBOL, PtoOrchConfig};
use pto_device_sys::chip::layout::SLOT_ARGS;
use pto_runtime_core::{Knob, MAX_ARGS, MAX_DEPS, MAX_TENSORS};

/// Fewest task slots per ring a run may have.
pub const TASK_WINDOW_MIN: u32 = 4;
/// Most task slots per ring a run may have.
pub const TASK_WINDOW_MAX: u32 = 1 << 20;
/// Smallest output heap per ring, bytes.
pub const HEAP_BYTES_MIN: u64 = 64;
/// Largest output heap per ring, bytes.
pub const HEAP_BYTES_MAX: u64 = 1 << 34;

/// The capacities a run takes when neither the spec nor the SO says.
pub const DEFAULTS: PtoOrchConfig = PtoOrchConfig {
    abi: PTO_ORCH_CONFIG_ABI,
    max_deps: 16,
    max_tensors: 8,
    max_args: 16,
    task_window: 1024,
    reserved: 0,
    heap_bytes: 1 << 20,
};

/// The C++ runtime's configuration function: an SO that exports only it is refused, since
/// it cannot run before the region is laid out.
const FUNCTION_FORM: &str = "aicpu_orchestration_config";

/// The capacities a run is given; each `None` takes the SO's declaration, else the default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Capacities {
    /// Most dependencies per task (1 to [`MAX_DEPS`]).
    pub max_deps: Option<u16>,
    /// Most tensor arguments per task (0 to [`MAX_TENSORS`]).
    pub max_tensors: Option<u16>,
    /// Most scalar arguments per task (0 to [`MAX_ARGS`]).
    pub max_args: Option<u16>,
    /// Task slots per ring (a power of two, [`TASK_WINDOW_MIN`] to [`TASK_WINDOW_MAX`]).
    pub task_window: Option<u32>,
    /// Each ring's output heap, bytes ([`HEAP_BYTES_MIN`] to [`HEAP_BYTES_MAX`]).
    pub heap_bytes: Option<u64>,
}

/// Where a capacity's value came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Origin {
    /// The run's [`Capacities`] (for `pto-launch run`, a flag).
    Given,
    /// The orchestration SO's declaration.
    Declared,
    /// Neither: [`DEFAULTS`].
    Default,
}

/// One capacity of a run: its value and where it came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Capacity<T> {
    /// The value the run uses.
    pub value: T,
    /// Where it came from.
    pub from: Origin,
}

/// The capacities a run uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct RunCapacities {
    /// Most dependencies per task.
    pub max_deps: Capacity<u16>,
    /// Most tensor arguments per task.
    pub max_tensors: Capacity<u16>,
    /// Most scalar arguments per task.
    pub max_args: Capacity<u16>,
    /// Task slots per ring.
    pub task_window: Capacity<u32>,
    /// Each ring's output heap, bytes.
    pub heap_bytes: Capacity<u64>,
}

/// Why a run's capacities cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OrchConfigError {
    /// The SO is not an ELF file the reader understands.
    #[error("cannot load the orchestration SO: it is not an ELF shared object ({0})")]
    NotElf(String),
    /// The declaration's symbol is not the size of a `PtoOrchConfig`.
    #[error(
        "{PTO_ORCH_CONFIG_SYMBOL} is {size} bytes, and a PtoOrchConfig is {}: declare it with \
         PTO_ORCHESTRATION_CONFIG from this runtime's pto_aicpu.h",
        size_of::<PtoOrchConfig>()
    )]
    Size {
        /// The symbol's size.
        size: u64,
    },
    /// The declaration has no bytes in the file (zero-filled storage, or an odd section).
    #[error(
        "{PTO_ORCH_CONFIG_SYMBOL} has no bytes in the file: declare it const, with \
         PTO_ORCHESTRATION_CONFIG"
    )]
    NoBytes,
    /// The SO has only the C++ runtime's configuration function, which cannot run first.
    #[error(
        "the orchestration SO exports {FUNCTION_FORM}, a function, which cannot run before the \
         run is laid out: declare the capacities as data with PTO_ORCHESTRATION_CONFIG(...) from \
         pto_aicpu.h"
    )]
    FunctionOnly,
    /// The declaration's layout version is not one this runtime reads.
    #[error(
        "{PTO_ORCH_CONFIG_SYMBOL}.abi = {abi}, and this runtime reads version \
         {PTO_ORCH_CONFIG_ABI}: build the SO against this runtime's pto_aicpu.h"
    )]
    Abi {
        /// The version declared.
        abi: u32,
    },
    /// A field of the declaration is out of range.
    #[error("{PTO_ORCH_CONFIG_SYMBOL}.{} = {value}: {}", .knob.name(), Range(*.knob))]
    Declared {
        /// The field.
        knob: Knob,
        /// Its value.
        value: u64,
    },
    /// A capacity the run was given is out of range.
    #[error("{knob} = {value}: {}", Range(*.knob))]
    Given {
        /// The capacity.
        knob: Knob,
        /// Its value.
        value: u64,
    },
    /// The tensor and scalar arguments together overflow a payload slot's argument words.
    #[error(
        "{} ({}, {}) + {} ({}, {}) = {} argument words exceed a payload slot's {SLOT_ARGS}: \
         lower {} or {}",
        Knob::MaxTensors, .tensors.value, Says(.tensors.from),
        Knob::MaxArgs, .args.value, Says(.args.from),
        .tensors.value + .args.value,
        Knob::MaxTensors, Knob::MaxArgs
    )]
    SlotWords {
        /// Tensor arguments per task.
        tensors: Capacity<u16>,
        /// Scalar arguments per task.
        args: Capacity<u16>,
    },
}

/// Where a value came from, as a sentence says it.
struct Says(Origin);

impl std::fmt::Display for Says {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self.0 {
            Origin::Given => "given",
            Origin::Declared => "declared by the SO",
            Origin::Default => "the default",
        })
    }
}

/// What values a capacity may take, as a sentence says it.
struct Range(Knob);

impl std::fmt::Display for Range {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Knob::MaxDeps => write!(f, "a task may have 1 to {MAX_DEPS} dependencies"),
            Knob::MaxTensors => write!(f, "a task may have 0 to {MAX_TENSORS} tensor arguments"),
            Knob::MaxArgs => write!(f, "a task may have 0 to {MAX_ARGS} scalar arguments"),
            Knob::TaskWindow => write!(
                f,
                "the task window is a power of two from {TASK_WINDOW_MIN} to {TASK_WINDOW_MAX} \
                 slots"
            ),
            Knob::HeapBytes => write!(
                f,
                "the heap is {HEAP_BYTES_MIN} to {HEAP_BYTES_MAX} bytes per ring"
            ),
            k => write!(f, "{k} is not a capacity"),
        }
    }
}

/// Whether `value` is a capacity `knob` may take.
fn in_range(knob: Knob, value: u64) -> bool {
    match knob {
        Knob::MaxDeps => (1..=u64::from(MAX_DEPS)).contains(&value),
        Knob::MaxTensors => value <= u64::from(MAX_TENSORS),
        Knob::MaxArgs => value <= u64::from(MAX_ARGS),
        Knob::TaskWindow => {
            value.is_power_of_two()
                && (u64::from(TASK_WINDOW_MIN)..=u64::from(TASK_WINDOW_MAX)).contains(&value)
        }
        Knob::HeapBytes => (HEAP_BYTES_MIN..=HEAP_BYTES_MAX).contains(&value),
        _ => false,
    }
}

/// The SO's declaration, if it makes one; checked for its size and version only.
pub fn declaration(so: &[u8]) -> Result<Option<PtoOrchConfig>, OrchConfigError> {
    let file = object::File::parse(so).map_err(|e| OrchConfigError::NotElf(e.to_string()))?;
    let defined = |name: &str| {
        file.dynamic_symbols()
            .chain(file.symbols())
            .find(|s| s.is_definition() && s.name() == Ok(name))
    };
    let Some(sym) = defined(PTO_ORCH_CONFIG_SYMBOL) else {
        return match defined(FUNCTION_FORM) {
            Some(_) => Err(OrchConfigError::FunctionOnly),
            None => Ok(None),
        };
    };
    if sym.size() != size_of::<PtoOrchConfig>() as u64 {
        return Err(OrchConfigError::Size { size: sym.size() });
    }
    let bytes = sym
        .section_index()
        .and_then(|i| file.section_by_index(i).ok())
        .and_then(|s| s.data_range(sym.address(), sym.size()).ok().flatten())
        .ok_or(OrchConfigError::NoBytes)?;
    let decl = PtoOrchConfig::from_bytes(bytes, file.is_little_endian())
        .ok_or(OrchConfigError::NoBytes)?;
    if decl.abi != PTO_ORCH_CONFIG_ABI {
        return Err(OrchConfigError::Abi { abi: decl.abi });
    }
    Ok(Some(decl))
}

/// The capacities of a run `given` these, of the SO whose bytes are `so`: each from
/// `given`, else the SO's declaration, else [`DEFAULTS`]. Refuses a malformed declaration
/// (even where `given` overrides it), a value out of range, and tensor and scalar arguments
/// that together overflow a payload slot.
pub fn resolve(given: &Capacities, so: &[u8]) -> Result<RunCapacities, OrchConfigError> {
    let decl = declaration(so)?;
    if let Some(d) = &decl {
        let fields = [
            (Knob::MaxDeps, u64::from(d.max_deps)),
            (Knob::MaxTensors, u64::from(d.max_tensors)),
            (Knob::MaxArgs, u64::from(d.max_args)),
            (Knob::TaskWindow, u64::from(d.task_window)),
            (Knob::HeapBytes, d.heap_bytes),
        ];
        if let Some(&(knob, value)) = fields.iter().find(|&&(k, v)| v != 0 && !in_range(k, v)) {
            return Err(OrchConfigError::Declared { knob, value });
        }
    }
    let pick = |knob: Knob, given: Option<u64>, declared: Option<u64>, default: u64| {
        let (value, from) = match (given, declared.filter(|&v| v != 0)) {
            (Some(v), _) => (v, Origin::Given),
            (None, Some(v)) => (v, Origin::Declared),
            (None, None) => (default, Origin::Default),
        };
        if from == Origin::Given && !in_range(knob, value) {
            return Err(OrchConfigError::Given { knob, value });
        }
        Ok(Capacity { value, from })
    };
    // `pick` checked each value against its range, which fits the narrower types.
    let small = |c: Capacity<u64>| Capacity {
        value: c.value as u16,
        from: c.from,
    };
    let caps = RunCapacities {
        max_deps: small(pick(
            Knob::MaxDeps,
            given.max_deps.map(u64::from),
            decl.map(|d| d.max_deps.into()),
            DEFAULTS.max_deps.into(),
        )?),
        max_tensors: small(pick(
            Knob::MaxTensors,
            given.max_tensors.map(u64::from),
            decl.map(|d| d.max_tensors.into()),
            DEFAULTS.max_tensors.into(),
        )?),
        max_args: small(pick(
            Knob::MaxArgs,
            given.max_args.map(u64::from),
            decl.map(|d| d.max_args.into()),
            DEFAULTS.max_args.into(),
        )?),
        task_window: {
            let c = pick(
                Knob::TaskWindow,
                given.task_window.map(u64::from),
                decl.map(|d| d.task_window.into()),
                DEFAULTS.task_window.into(),
            )?;
            Capacity {
                value: c.value as u32,
                from: c.from,
            }
        },
        heap_bytes: pick(
            Knob::HeapBytes,
            given.heap_bytes,
            decl.map(|d| d.heap_bytes),
            DEFAULTS.heap_bytes,
        )?,
    };
    if usize::from(caps.max_tensors.value) + usize::from(caps.max_args.value) > SLOT_ARGS {
        return Err(OrchConfigError::SlotWords {
            tensors: caps.max_tensors,
            args: caps.max_args,
        });
    }
    Ok(caps)
}

impl RunCapacities {
    /// The platform's heap for a run of `rings` rings: each ring gets `heap_bytes` (the core
    /// splits the platform's heap evenly, [`pto_runtime_core::Config::ring_heap`]).
    pub fn heap_total(&self, rings: u8) -> u64 {
        self.heap_bytes
            .value
            .saturating_mul(u64::from(rings.max(1)))
    }

    /// `base` with these capacities (the heap is the platform's, not the config's).
    pub fn apply(&self, base: pto_runtime_core::Config) -> pto_runtime_core::Config {
        pto_runtime_core::Config {
            max_deps: self.max_deps.value,
            max_tensors: self.max_tensors.value,
            max_args: self.max_args.value,
            task_window: self.task_window.value,
            ..base
        }
    }
}

#[cfg(test)]
mod tests;
