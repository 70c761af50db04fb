//! The registration of `libpto_aicpu.so`'s entry points with CANN: a JSON file (its name
//! must end in `.json`) maps each op type (`<symbol>_<fingerprint>`) to the function in the
//! installed SO, and `rtsBinaryLoadFromFile` loads it.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use pto_device_sys::cann::{CpuKernels, NpuApi};
use pto_dispatcher::inner_so_name;

use super::error::NpuError;

/// The SO's entry points.
pub const INIT_SYMBOL: &str = "pto_aicpu_init";
/// See [`INIT_SYMBOL`].
pub const EXEC_SYMBOL: &str = "pto_aicpu_exec";

/// The op type CANN knows `symbol` of the SO with fingerprint `fp` by.
pub fn op_type(symbol: &str, fp: u64) -> String {
    format!("{symbol}_{fp:016x}")
}

/// The registration file's text.
pub fn json(fp: u64, driver_id: u32) -> String {
    let so = inner_so_name(fp, driver_id);
    let entry = |symbol: &str| {
        serde_json::json!({
            "functionName": symbol,
            "kernelSo": so,
            "opKernelLib": "AICPUKernel",
            "engine": "DNN_VM_AICPU",
            "computeCost": "100",
            "flagAsync": "False",
            "flagPartial": "False",
            "userDefined": "False",
        })
    };
    let mut map = serde_json::Map::new();
    for symbol in [INIT_SYMBOL, EXEC_SYMBOL] {
        map.insert(op_type(symbol, fp), entry(symbol));
    }
    serde_json::Value::Object(map).to_string()
}

/// A registration file that removes itself.
struct TempJson(PathBuf);

impl Drop for TempJson {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Writes the registration file and loads it.
pub fn register(api: &Arc<NpuApi>, fp: u64, driver_id: u32) -> Result<CpuKernels, NpuError> {
    static N: AtomicU64 = AtomicU64::new(0);
    let path = std::env::temp_dir().join(format!(
        "pto_aicpu_{}_{driver_id}_{}.json",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::write(&path, json(fp, driver_id)).map_err(|source| NpuError::Artifact {
        what: "the AICPU registration file",
        path: path.clone(),
        source,
    })?;
    let file = TempJson(path);
    CpuKernels::load(api, &file.0).map_err(NpuError::cann("registering the AICPU entry points"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registration_names_both_entries_in_the_installed_so() {
        let v: serde_json::Value = serde_json::from_str(&json(0xabc, 3)).unwrap();
        let e = &v["pto_aicpu_exec_0000000000000abc"];
        assert_eq!(e["functionName"], "pto_aicpu_exec");
        assert_eq!(e["kernelSo"], "libpto_aicpu_0000000000000abc_3.so");
        assert_eq!(e["opKernelLib"], "AICPUKernel");
        assert_eq!(
            v["pto_aicpu_init_0000000000000abc"]["engine"],
            "DNN_VM_AICPU"
        );
    }
}
