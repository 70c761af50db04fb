//! Owners of the launch path's CANN handles: streams, device memory, the AICPU kernels
//! registered from a JSON file, the AICore executor registered as a device binary. Each
//! releases what it holds when dropped (errors of release calls are not reported: nothing
//! could be done about them); launches are methods of what they launch.

use std::ffi::{CStr, CString, c_void};
use std::format;
use std::sync::Arc;
use std::vec::Vec;

use super::generated::types::*;
use super::loader::{CannError, sym};
use super::npu_api::NpuApi;

/// A stream.
#[derive(Debug)]
pub struct Stream {
    api: Arc<NpuApi>,
    raw: aclrtStream,
}

// SAFETY: a stream handle may be used and destroyed from any thread of the process (the
// device must be set on that thread, which the caller sees to).
unsafe impl Send for Stream {}

impl Stream {
    /// `aclrtCreateStream`.
    pub fn create(api: &Arc<NpuApi>) -> Result<Self, CannError> {
        let mut raw: aclrtStream = core::ptr::null_mut();
        // SAFETY: a valid out-pointer.
        let code = unsafe { sym!(api.acl, aclrtCreateStream)(&mut raw) };
        api.check("aclrtCreateStream", code as i64)?;
        Ok(Stream {
            api: Arc::clone(api),
            raw,
        })
    }

    /// `aclrtSynchronizeStreamWithTimeout(ms)`.
    pub fn synchronize(&self, timeout_ms: i32) -> Result<(), CannError> {
        // SAFETY: a live stream.
        let code =
            unsafe { sym!(self.api.acl, aclrtSynchronizeStreamWithTimeout)(self.raw, timeout_ms) };
        self.api
            .check("aclrtSynchronizeStreamWithTimeout", code as i64)
    }

    /// `aclrtGetStreamResLimit`: (cube cores, vector cores) this stream may use.
    pub fn core_limits(&self) -> Result<(u32, u32), CannError> {
        let (mut cube, mut vector) = (0u32, 0u32);
        for (ty, out) in [
            (aclrtDevResLimitType_ACL_RT_DEV_RES_CUBE_CORE, &mut cube),
            (aclrtDevResLimitType_ACL_RT_DEV_RES_VECTOR_CORE, &mut vector),
        ] {
            // SAFETY: a live stream and a valid out-pointer.
            let code = unsafe { sym!(self.api.acl, aclrtGetStreamResLimit)(self.raw, ty, out) };
            self.api.check("aclrtGetStreamResLimit", code as i64)?;
        }
        Ok((cube, vector))
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        // SAFETY: created by aclrtCreateStream, destroyed once.
        let _ = unsafe { sym!(self.api.acl, aclrtDestroyStream)(self.raw) };
    }
}

/// Device memory from `aclrtMalloc`.
#[derive(Debug)]
pub struct DeviceMem {
    api: Arc<NpuApi>,
    ptr: *mut c_void,
    len: usize,
}

// SAFETY: device memory may be copied to, from and freed on any thread.
unsafe impl Send for DeviceMem {}
// SAFETY: `&DeviceMem` only reads its address or copies through ACL, which synchronises.
unsafe impl Sync for DeviceMem {}

impl DeviceMem {
    /// `aclrtMalloc(len)` (at least 1 byte), zeroed with `aclrtMemset`.
    pub fn alloc(api: &Arc<NpuApi>, len: usize) -> Result<Self, CannError> {
        let len = len.max(1);
        let mut ptr: *mut c_void = core::ptr::null_mut();
        // SAFETY: a valid out-pointer.
        let code = unsafe {
            sym!(api.acl, aclrtMalloc)(
                &mut ptr,
                len,
                aclrtMemMallocPolicy_ACL_MEM_MALLOC_HUGE_FIRST,
            )
        };
        api.check("aclrtMalloc", code as i64)?;
        let mem = DeviceMem {
            api: Arc::clone(api),
            ptr,
            len,
        };
        mem.zero()?;
        Ok(mem)
    }

    /// Its device address.
    pub fn addr(&self) -> u64 {
        self.ptr as u64
    }

    /// Its bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Always false: an allocation has at least one byte.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// `aclrtMemset(0)` over all of it.
    pub fn zero(&self) -> Result<(), CannError> {
        // SAFETY: `ptr` holds `len` bytes of device memory.
        let code = unsafe { sym!(self.api.acl, aclrtMemset)(self.ptr, self.len, 0, self.len) };
        self.api.check("aclrtMemset", code as i64)
    }

    fn range(&self, offset: usize, bytes: usize) -> Result<*mut c_void, CannError> {
        if offset.checked_add(bytes).is_none_or(|end| end > self.len) {
            return Err(CannError::Invalid(format!(
                "{bytes} bytes at offset {offset} overrun a device buffer of {}",
                self.len
            )));
        }
        Ok(self.ptr.wrapping_byte_add(offset))
    }

    /// Copies `data` to `offset` (`aclrtMemcpy`, host to device).
    pub fn write(&self, offset: usize, data: &[u8]) -> Result<(), CannError> {
        let dst = self.range(offset, data.len())?;
        // SAFETY: `dst` has `data.len()` bytes of device memory (checked above).
        let code = unsafe {
            sym!(self.api.acl, aclrtMemcpy)(
                dst,
                self.len - offset,
                data.as_ptr().cast(),
                data.len(),
                aclrtMemcpyKind_ACL_MEMCPY_HOST_TO_DEVICE,
            )
        };
        self.api.check("aclrtMemcpy", code as i64)
    }

    /// Copies `value`'s bytes to `offset` (`aclrtMemcpy`, host to device).
    pub fn write_value<T: Copy>(&self, offset: usize, value: &T) -> Result<(), CannError> {
        let dst = self.range(offset, size_of::<T>())?;
        // SAFETY: `dst` has `size_of::<T>()` bytes of device memory (checked above); ACL
        // reads the bytes of a live `T`.
        let code = unsafe {
            sym!(self.api.acl, aclrtMemcpy)(
                dst,
                self.len - offset,
                (value as *const T).cast(),
                size_of::<T>(),
                aclrtMemcpyKind_ACL_MEMCPY_HOST_TO_DEVICE,
            )
        };
        self.api.check("aclrtMemcpy", code as i64)
    }

    /// The run report the AICPU left at `offset` (`aclrtMemcpy`, device to host).
    pub fn read_report(&self, offset: usize) -> Result<crate::abi::PtoAicpuReport, CannError> {
        let mut report = crate::abi::PtoAicpuReport::default();
        let n = size_of::<crate::abi::PtoAicpuReport>();
        let src = self.range(offset, n)?;
        // SAFETY: `src` has `n` bytes of device memory (checked above); the report is made
        // of integers only, so any bytes ACL writes into it make a valid value.
        let code = unsafe {
            sym!(self.api.acl, aclrtMemcpy)(
                (&raw mut report).cast(),
                n,
                src,
                n,
                aclrtMemcpyKind_ACL_MEMCPY_DEVICE_TO_HOST,
            )
        };
        self.api.check("aclrtMemcpy", code as i64).map(|()| report)
    }

    /// Copies `out.len()` bytes from `offset` (`aclrtMemcpy`, device to host).
    pub fn read(&self, offset: usize, out: &mut [u8]) -> Result<(), CannError> {
        let src = self.range(offset, out.len())?;
        // SAFETY: `src` has `out.len()` bytes of device memory (checked above); `out` is
        // writable host memory of that size.
        let code = unsafe {
            sym!(self.api.acl, aclrtMemcpy)(
                out.as_mut_ptr().cast(),
                out.len(),
                src,
                out.len(),
                aclrtMemcpyKind_ACL_MEMCPY_DEVICE_TO_HOST,
            )
        };
        self.api.check("aclrtMemcpy", code as i64)
    }
}

impl Drop for DeviceMem {
    fn drop(&mut self) {
        // SAFETY: from aclrtMalloc, freed once.
        let _ = unsafe { sym!(self.api.acl, aclrtFree)(self.ptr) };
    }
}

/// The argument block of a launch through CANN's extend-kernels library (304 bytes, the
/// library's layout): the device arguments' address, then the kernel, SO and op names it
/// checks (NUL-padded, 32 bytes each).
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
pub struct KfcArgs {
    /// Unused (zero).
    pub reserved: [u64; 5],
    /// The device address of the block the kernel reads (for the bootstrap, the dispatcher's
    /// `DeviceArgs`).
    pub device_args: u64,
    /// Unused (zero).
    pub reserved2: [u64; 20],
    /// The kernel's name.
    pub kernel_name: [u8; 32],
    /// The SO's name.
    pub so_name: [u8; 32],
    /// The op's name.
    pub op_name: [u8; 32],
}

const _: () = {
    assert!(size_of::<KfcArgs>() == 304);
    assert!(core::mem::offset_of!(KfcArgs, device_args) == 40);
    assert!(core::mem::offset_of!(KfcArgs, kernel_name) == 208);
    assert!(core::mem::offset_of!(KfcArgs, so_name) == 240);
    assert!(core::mem::offset_of!(KfcArgs, op_name) == 272);
};

impl KfcArgs {
    /// The block naming `device_args`, and `kernel`, `so` and `op` (each at most 31 bytes:
    /// `None` past that).
    pub fn new(device_args: u64, kernel: &[u8], so: &[u8], op: &[u8]) -> Option<Self> {
        let name = |n: &[u8]| {
            let mut b = [0u8; 32];
            b.get_mut(..n.len())
                .filter(|_| n.len() < 32)?
                .copy_from_slice(n);
            Some(b)
        };
        Some(KfcArgs {
            device_args,
            kernel_name: name(kernel)?,
            so_name: name(so)?,
            op_name: name(op)?,
            ..bytemuck::Zeroable::zeroed()
        })
    }
}

/// `rtAicpuKernelLaunchExWithArgs(KERNEL_TYPE_AICPU_KFC, op_name, block_dim, ...)`: the
/// launch that has CANN's extend-kernels library run `args`' kernel of the SO it names.
/// CANN copies `args`.
pub fn launch_aicpu_kfc(
    api: &NpuApi,
    stream: &Stream,
    op_name: &CStr,
    block_dim: u32,
    args: &mut KfcArgs,
) -> Result<(), CannError> {
    let ex = rtAicpuArgsEx_t {
        args: (args as *mut KfcArgs).cast(),
        argsSize: size_of::<KfcArgs>() as u32,
        soNameAddrOffset: core::mem::offset_of!(KfcArgs, so_name) as u32,
        kernelNameAddrOffset: core::mem::offset_of!(KfcArgs, kernel_name) as u32,
        ..Default::default()
    };
    // SAFETY: `ex` describes `args`, alive for the call (CANN copies it before returning).
    let code = unsafe {
        sym!(api.rt, rtAicpuKernelLaunchExWithArgs)(
            RT_KERNEL_TYPE_AICPU_KFC,
            op_name.as_ptr(),
            block_dim,
            &ex,
            core::ptr::null_mut(),
            stream.raw,
            0,
        )
    };
    api.check("rtAicpuKernelLaunchExWithArgs", code as i64)
}

/// AICPU kernels registered from a JSON file (`rtsBinaryLoadFromFile`, CPU kernel mode 0:
/// the SO is on the device already).
#[derive(Debug)]
pub struct CpuKernels {
    api: Arc<NpuApi>,
    raw: rtBinHandle,
}

// SAFETY: a binary handle may be used and unloaded from any thread.
unsafe impl Send for CpuKernels {}

/// One registered AICPU kernel, valid while its [`CpuKernels`] is.
#[derive(Debug, Clone, Copy)]
pub struct CpuKernel<'a> {
    kernels: &'a CpuKernels,
    raw: rtFuncHandle,
}

impl CpuKernels {
    /// `rtsBinaryLoadFromFile(json)`.
    pub fn load(api: &Arc<NpuApi>, json: &std::path::Path) -> Result<Self, CannError> {
        let path = CString::new(json.as_os_str().as_encoded_bytes())
            .map_err(|_| CannError::Invalid(format!("{} holds a NUL byte", json.display())))?;
        let mut option = rtLoadBinaryOption_t {
            optionId: rtLoadBinaryOption_RT_LOAD_BINARY_OPT_CPU_KERNEL_MODE,
            value: rtLoadBinaryOptionValue_t { cpuKernelMode: 0 },
        };
        let cfg = rtLoadBinaryConfig_t {
            options: &mut option,
            numOpt: 1,
        };
        let mut raw: rtBinHandle = core::ptr::null_mut();
        // SAFETY: a NUL-terminated path, a config alive for the call, a valid out-pointer.
        let code = unsafe { sym!(api.rt, rtsBinaryLoadFromFile)(path.as_ptr(), &cfg, &mut raw) };
        api.check("rtsBinaryLoadFromFile", code as i64)?;
        Ok(CpuKernels {
            api: Arc::clone(api),
            raw,
        })
    }

    /// `rtsFuncGetByName(op_type)`.
    pub fn get(&self, op_type: &str) -> Result<CpuKernel<'_>, CannError> {
        let name = CString::new(op_type)
            .map_err(|_| CannError::Invalid(format!("{op_type:?} holds a NUL byte")))?;
        let mut raw: rtFuncHandle = core::ptr::null_mut();
        // SAFETY: a live binary, a NUL-terminated name, a valid out-pointer.
        let code =
            unsafe { sym!(self.api.rt, rtsFuncGetByName)(self.raw, name.as_ptr(), &mut raw) };
        self.api.check("rtsFuncGetByName", code as i64)?;
        Ok(CpuKernel { kernels: self, raw })
    }
}

impl CpuKernel<'_> {
    /// [`CpuKernel::launch`] with `value`'s bytes as the payload.
    pub fn launch_value<T: Copy>(
        &self,
        stream: &Stream,
        block_dim: u32,
        value: &T,
    ) -> Result<(), CannError> {
        let mut copy = *value;
        self.launch_raw(stream, block_dim, (&raw mut copy).cast(), size_of::<T>())
    }

    /// `rtsLaunchCpuKernel(block_dim)` with `payload` as the kernel's argument (CANN copies
    /// it: what the kernel writes to its copy never comes back).
    pub fn launch(
        &self,
        stream: &Stream,
        block_dim: u32,
        payload: &mut [u8],
    ) -> Result<(), CannError> {
        self.launch_raw(
            stream,
            block_dim,
            payload.as_mut_ptr().cast(),
            payload.len(),
        )
    }

    fn launch_raw(
        &self,
        stream: &Stream,
        block_dim: u32,
        payload: *mut c_void,
        len: usize,
    ) -> Result<(), CannError> {
        let mut attr = rtLaunchKernelAttr_t::default();
        let cfg = rtKernelLaunchCfg_t {
            attrs: &mut attr,
            numAttrs: 0,
        };
        let mut args = rtCpuKernelArgs_t::default();
        args.baseArgs.args = payload;
        args.baseArgs.argsSize = len as u32;
        let api = &self.kernels.api;
        // SAFETY: a live kernel and stream; `args` describes `len` bytes at `payload`, alive
        // for the call (CANN copies them before returning).
        let code = unsafe {
            sym!(api.rt, rtsLaunchCpuKernel)(self.raw, block_dim, stream.raw, &cfg, &mut args)
        };
        api.check("rtsLaunchCpuKernel", code as i64)
    }
}

impl Drop for CpuKernels {
    fn drop(&mut self) {
        // SAFETY: from rtsBinaryLoadFromFile, unloaded once.
        let _ = unsafe { sym!(self.api.rt, rtsBinaryUnload)(self.raw) };
    }
}

/// A device binary registered with `rtRegisterAllKernel` (the AICore executor).
#[derive(Debug)]
pub struct AicoreBinary {
    api: Arc<NpuApi>,
    raw: *mut c_void,
    _elf: Vec<u8>,
}

// SAFETY: a registration handle may be used and unregistered from any thread.
unsafe impl Send for AicoreBinary {}

impl AicoreBinary {
    /// Registers `elf` (an ELF object: magic `RT_DEV_BINARY_MAGIC_ELF`).
    pub fn register(api: &Arc<NpuApi>, elf: Vec<u8>) -> Result<Self, CannError> {
        let bin = rtDevBinary_t {
            magic: RT_DEV_BINARY_MAGIC_ELF,
            version: 0,
            data: elf.as_ptr().cast(),
            length: elf.len() as u64,
        };
        let mut raw: *mut c_void = core::ptr::null_mut();
        // SAFETY: `bin` describes `elf`, kept alive as long as the registration.
        let code = unsafe { sym!(api.rt, rtRegisterAllKernel)(&bin, &mut raw) };
        api.check("rtRegisterAllKernel", code as i64)?;
        Ok(AicoreBinary {
            api: Arc::clone(api),
            raw,
            _elf: elf,
        })
    }

    /// `rtKernelLaunchWithHandleV2(tilingKey 0, block_dim, {args: &arg, 8})` in batch
    /// scheduling mode: `arg` (a device address) is the kernel's one argument.
    pub fn launch(&self, stream: &Stream, block_dim: u32, arg: u64) -> Result<(), CannError> {
        let mut word = arg;
        let mut ex = rtArgsEx_t {
            args: (&raw mut word).cast(),
            argsSize: 8,
            ..Default::default()
        };
        let cfg = rtTaskCfgInfo_t {
            schemMode: RT_SCHEM_MODE_BATCH as u8,
            ..Default::default()
        };
        // SAFETY: a live registration and stream; `ex` and `cfg` alive for the call (CANN
        // copies the argument).
        let code = unsafe {
            sym!(self.api.rt, rtKernelLaunchWithHandleV2)(
                self.raw,
                0,
                block_dim,
                &mut ex,
                core::ptr::null_mut(),
                stream.raw,
                &cfg,
            )
        };
        self.api.check("rtKernelLaunchWithHandleV2", code as i64)
    }
}

impl Drop for AicoreBinary {
    fn drop(&mut self) {
        // SAFETY: from rtRegisterAllKernel, unregistered once.
        let _ = unsafe { sym!(self.api.rt, rtDevBinaryUnRegister)(self.raw) };
    }
}
