//! The three libraries a launch on the NPU needs, loaded at run time: ACL
//! (`libascendcl.so`), the runtime (`libruntime.so`: `rt*`/`rts*`) and the driver HAL
//! (`libascend_hal.so`), every symbol the launch path calls checked at load. The calls that
//! take no handle live here; the owners of handles (streams, device memory, registrations)
//! in [`super::npu_owners`].

use std::ffi::{CStr, c_void};
use std::path::PathBuf;
use std::string::{String, ToString};
use std::vec::Vec;

use super::generated::acl::AclApi;
use super::generated::hal::HalApi;
use super::generated::rt::RtApi;
use super::generated::types::*;
use super::loader::{CannError, default_dirs, open, sym};

const ACL: &str = "libascendcl.so";
const RUNTIME: &str = "libruntime.so";
const HAL: &str = "libascend_hal.so";

/// The ACL symbols of the launch path.
const ACL_REQUIRED: [&str; 17] = [
    "aclInit",
    "aclrtSetDevice",
    "aclrtResetDevice",
    "aclrtResetDeviceForce",
    "aclrtMalloc",
    "aclrtFree",
    "aclrtMemcpy",
    "aclrtMemset",
    "aclrtCreateStream",
    "aclrtDestroyStream",
    "aclrtSynchronizeStreamWithTimeout",
    "aclrtSynchronizeDeviceWithTimeout",
    "aclrtSetOpExecuteTimeOutV2",
    "aclrtGetStreamResLimit",
    "aclGetRecentErrMsg",
    "aclFinalize",
    "aclrtGetDevice",
];

/// The runtime's symbols of the launch path.
const RT_REQUIRED: [&str; 8] = [
    "rtAicpuKernelLaunchExWithArgs",
    "rtsBinaryLoadFromFile",
    "rtsBinaryUnload",
    "rtsFuncGetByName",
    "rtsLaunchCpuKernel",
    "rtRegisterAllKernel",
    "rtDevBinaryUnRegister",
    "rtKernelLaunchWithHandleV2",
];

/// The HAL's symbols of the launch path.
const HAL_REQUIRED: [&str; 2] = ["halMemCtl", "halGetDeviceInfoByBuff"];

/// ACL, the runtime and the HAL, loaded.
pub struct NpuApi {
    pub(super) acl: AclApi,
    pub(super) rt: RtApi,
    pub(super) hal: HalApi,
    libraries: [PathBuf; 3],
}

impl core::fmt::Debug for NpuApi {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("NpuApi")
            .field("libraries", &self.libraries)
            .finish()
    }
}

fn require(
    lib: &libloading::Library,
    path: &std::path::Path,
    names: &[&'static str],
) -> Result<(), CannError> {
    for &symbol in names {
        let mut name = symbol.as_bytes().to_vec();
        name.push(0);
        // SAFETY: only the address is looked up (as an untyped pointer), not used.
        if unsafe { lib.get::<*const c_void>(&name) }.is_err() {
            return Err(CannError::MissingSymbol {
                library: path.to_path_buf(),
                symbol,
            });
        }
    }
    Ok(())
}

impl NpuApi {
    /// Loads the three libraries from where CANN's environment says, looking first in
    /// `dirs` (see the module [`super`] for the order).
    pub fn load_from(dirs: &[PathBuf]) -> Result<Self, CannError> {
        let mut all: Vec<PathBuf> = dirs.to_vec();
        all.extend(default_dirs());
        let (acl_lib, acl_path) = open(&[ACL], &all)?;
        let (rt_lib, rt_path) = open(&[RUNTIME], &all)?;
        let (hal_lib, hal_path) = open(&[HAL], &all)?;
        require(&acl_lib, &acl_path, &ACL_REQUIRED)?;
        require(&rt_lib, &rt_path, &RT_REQUIRED)?;
        require(&hal_lib, &hal_path, &HAL_REQUIRED)?;
        let bad = |e: libloading::Error| CannError::Invalid(e.to_string());
        // SAFETY: the libraries are CANN's; each table binds the symbols to the prototypes
        // of our header, which follows CANN's public headers.
        let acl = unsafe { AclApi::from_library(acl_lib) }.map_err(bad)?;
        // SAFETY: as above.
        let rt = unsafe { RtApi::from_library(rt_lib) }.map_err(bad)?;
        // SAFETY: as above.
        let hal = unsafe { HalApi::from_library(hal_lib) }.map_err(bad)?;
        crate::pto_info!(
            "CANN loaded for launching: {}, {}, {}",
            acl_path.display(),
            rt_path.display(),
            hal_path.display()
        );
        Ok(NpuApi {
            acl,
            rt,
            hal,
            libraries: [acl_path, rt_path, hal_path],
        })
    }

    /// The library files loaded: ACL's, the runtime's, the HAL's.
    pub fn libraries(&self) -> &[PathBuf; 3] {
        &self.libraries
    }

    /// `aclGetRecentErrMsg()`: what CANN said about the last failure on this thread.
    pub fn recent_error_message(&self) -> Option<String> {
        // SAFETY: no arguments; the result is null or a NUL-terminated string owned by ACL,
        // copied out at once.
        let p = unsafe { sym!(self.acl, aclGetRecentErrMsg)() };
        if p.is_null() {
            return None;
        }
        // SAFETY: non-null, NUL-terminated (ACL's contract).
        let s = unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
        (!s.is_empty()).then_some(s)
    }

    /// `Ok` for `code == 0`, else the call's error with CANN's recent message.
    pub(super) fn check(&self, function: &'static str, code: i64) -> Result<(), CannError> {
        if code == 0 {
            return Ok(());
        }
        Err(CannError::Call {
            function,
            code,
            message: self.recent_error_message(),
        })
    }

    /// `aclInit(NULL)`; true if this call initialised ACL (false: it was already).
    pub fn init(&self) -> Result<bool, CannError> {
        // SAFETY: aclInit accepts a null config path.
        let code = unsafe { sym!(self.acl, aclInit)(core::ptr::null()) };
        if code == ACL_ERROR_REPEAT_INITIALIZE as i32 {
            return Ok(false);
        }
        self.check("aclInit", code as i64).map(|()| true)
    }

    /// `aclFinalize()`.
    pub fn finalize(&self) -> Result<(), CannError> {
        // SAFETY: no arguments.
        let code = unsafe { sym!(self.acl, aclFinalize)() };
        self.check("aclFinalize", code as i64)
    }

    /// `aclrtSetDevice(device)` for the calling thread (ACL's logical id).
    pub fn set_device(&self, device: i32) -> Result<(), CannError> {
        // SAFETY: plain integer argument.
        let code = unsafe { sym!(self.acl, aclrtSetDevice)(device) };
        self.check("aclrtSetDevice", code as i64)
    }

    /// `aclrtResetDevice(device)`.
    pub fn reset_device(&self, device: i32) -> Result<(), CannError> {
        // SAFETY: plain integer argument.
        let code = unsafe { sym!(self.acl, aclrtResetDevice)(device) };
        self.check("aclrtResetDevice", code as i64)
    }

    /// `aclrtResetDeviceForce(device)`: the recovery after a fault.
    pub fn reset_device_force(&self, device: i32) -> Result<(), CannError> {
        // SAFETY: plain integer argument.
        let code = unsafe { sym!(self.acl, aclrtResetDeviceForce)(device) };
        self.check("aclrtResetDeviceForce", code as i64)
    }

    /// `aclrtSynchronizeDeviceWithTimeout(ms)`.
    pub fn synchronize_device(&self, timeout_ms: i32) -> Result<(), CannError> {
        // SAFETY: plain integer argument.
        let code = unsafe { sym!(self.acl, aclrtSynchronizeDeviceWithTimeout)(timeout_ms) };
        self.check("aclrtSynchronizeDeviceWithTimeout", code as i64)
    }

    /// `aclrtSetOpExecuteTimeOutV2(µs)`: the timeout in force, µs.
    pub fn set_op_execute_timeout(&self, timeout_us: u64) -> Result<u64, CannError> {
        let mut actual = 0u64;
        // SAFETY: a valid out-pointer.
        let code = unsafe { sym!(self.acl, aclrtSetOpExecuteTimeOutV2)(timeout_us, &mut actual) };
        self.check("aclrtSetOpExecuteTimeOutV2", code as i64)
            .map(|()| actual)
    }

    /// `halMemCtl(CTRL_TYPE_ADDR_MAP, {ADDR_MAP_TYPE_REG_AIC_CTRL, driver_id})`: the base and
    /// length of the AICore control registers, mapped into this process and the AICPU's.
    pub fn map_aicore_registers(&self, driver_id: u32) -> Result<(u64, u64), CannError> {
        let mut input = AddrMapInPara {
            addr_type: HAL_ADDR_MAP_TYPE_REG_AIC_CTRL,
            devid: driver_id,
        };
        let mut out = AddrMapOutPara { ptr: 0, len: 0 };
        let mut out_len = core::mem::size_of::<AddrMapOutPara>();
        // SAFETY: in and out point to live structs of the sizes given.
        let code = unsafe {
            sym!(self.hal, halMemCtl)(
                HAL_CTRL_TYPE_ADDR_MAP as i32,
                (&raw mut input).cast(),
                core::mem::size_of::<AddrMapInPara>(),
                (&raw mut out).cast(),
                &mut out_len,
            )
        };
        self.check("halMemCtl", code as i64)?;
        Ok((out.ptr, out.len))
    }

    /// `halGetDeviceInfoByBuff(AI_CORE, OCCUPY)`: the mask of usable AICore clusters.
    pub fn aicore_occupancy(&self, driver_id: u32) -> Result<u64, CannError> {
        let mut buf = [0u64; 2];
        let mut size = core::mem::size_of_val(&buf) as i32;
        // SAFETY: `buf` holds `size` writable bytes.
        let code = unsafe {
            sym!(self.hal, halGetDeviceInfoByBuff)(
                driver_id,
                HAL_MODULE_TYPE_AI_CORE as i32,
                HAL_INFO_TYPE_OCCUPY as i32,
                buf.as_mut_ptr().cast(),
                &mut size,
            )
        };
        self.check("halGetDeviceInfoByBuff", code as i64)?;
        Ok(buf[0])
    }
}
