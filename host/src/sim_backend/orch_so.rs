//! The user's orchestration SO loaded from its bytes, as `libpto_aicpu.so` loads it on the
//! chip, but from an anonymous in-memory file ([`pto_sim::SharedObject`]): nothing is
//! written to disk, so nothing is left behind whatever ends the process.
#![allow(unsafe_code)]

use pto_device_sys::abi::PtoOrchestrate;
use pto_sim::SharedObject;

/// The symbol an orchestration SO exports.
pub const ENTRY: &str = "pto_orchestrate";

/// A loaded orchestration SO and its entry.
pub struct OrchSo {
    /// Kept loaded while the entry may run.
    _so: SharedObject,
    /// `pto_orchestrate`.
    pub entry: PtoOrchestrate,
}

impl OrchSo {
    /// Loads the SO whose bytes are `so` and finds its entry; what went wrong, in words.
    pub fn load(so: &[u8]) -> Result<Self, String> {
        let lib = SharedObject::load(so, "the orchestration SO")?;
        let at = lib
            .address(ENTRY)
            .filter(|&a| a != 0)
            .ok_or_else(|| format!("the orchestration SO does not export {ENTRY}"))?;
        // SAFETY: the device ABI fixes the entry's type (`PtoOrchestrate`), and the address is
        // the SO's symbol of that name, loaded while `_so` lives.
        let entry = unsafe { std::mem::transmute::<usize, PtoOrchestrate>(at) };
        Ok(OrchSo { _so: lib, entry })
    }
}
