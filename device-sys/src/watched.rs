//! Reading the word a deferred condition watches, for every AICPU platform of this crate.
#![forbid(unsafe_code)]

use pto_runtime_core::Watch;

use crate::raw::arch;
use crate::raw::memory::{EngineWords, WatchedMemory};

/// Reads `watch` from the counters in `memory` or the watermarks in `engines`, then orders
/// what follows after it (device acquire). The chip's engines have watermarks only, no
/// completion queues, so a queue condition reads as nothing (a bad condition).
pub(crate) fn read_watch(
    memory: &WatchedMemory<'_>,
    engines: &EngineWords<'_>,
    watch: Watch,
) -> Option<u64> {
    let v = match watch {
        Watch::Counter32(a) => memory.read_u32(a).map(u64::from),
        Watch::Counter64(a) => memory.read_u64(a),
        Watch::Engine(e) => engines.read(e as usize),
        Watch::Queue(_) => None,
    };
    arch::device_acquire();
    v
}
