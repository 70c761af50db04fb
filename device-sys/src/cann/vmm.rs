//! Owners of CANN resources: the device context, the HCCL communicator, and windows in device
//! memory made with ACL's virtual memory calls (physical memory, a reserved address range, the
//! mapping between them, access rights). Each owner releases what it holds when dropped, and
//! a window's parts are declared so that they drop in reverse order of acquisition
//! (unmap, release the range, free the memory); a failure midway drops what was taken.
//! Errors of release calls are not reported (nothing could be done about them).

use std::sync::Arc;

use super::generated::types::*;
use super::loader::{Cann, CannError, check, sym};

/// ACL initialised (if it was not) and a device set for the calling thread.
#[derive(Debug)]
pub struct DeviceContext {
    cann: Arc<Cann>,
    device: i32,
    _init: AclInit,
}

/// Finalises ACL if this process's call initialised it.
#[derive(Debug)]
struct AclInit {
    cann: Arc<Cann>,
    ours: bool,
}

impl Drop for AclInit {
    fn drop(&mut self) {
        if self.ours {
            let _ = self.cann.finalize();
        }
    }
}

impl DeviceContext {
    /// `aclInit` (tolerating an ACL initialised already), then `aclrtSetDevice(device)`.
    pub fn open(cann: &Arc<Cann>, device: i32) -> Result<Self, CannError> {
        let init = AclInit {
            cann: Arc::clone(cann),
            ours: cann.init()?,
        };
        cann.set_device(device)?;
        Ok(DeviceContext {
            cann: Arc::clone(cann),
            device,
            _init: init,
        })
    }

    /// The device.
    pub fn device(&self) -> i32 {
        self.device
    }
}

impl Drop for DeviceContext {
    fn drop(&mut self) {
        let _ = self.cann.reset_device(self.device);
    }
}

/// An HCCL communicator.
#[derive(Debug)]
pub struct Communicator {
    cann: Arc<Cann>,
    comm: HcclComm,
}

// SAFETY: an HCCL communicator handle may be used and destroyed from any thread.
unsafe impl Send for Communicator {}

impl Communicator {
    /// `HcclCommInitRootInfo(ranks, root, rank)`: collective, every rank calls it.
    pub fn init(
        cann: &Arc<Cann>,
        ranks: u32,
        root: &HcclRootInfo,
        rank: u32,
    ) -> Result<Self, CannError> {
        let mut comm: HcclComm = core::ptr::null_mut();
        // SAFETY: `root` is a valid root info and `comm` a valid out-pointer.
        let code = unsafe { sym!(cann.hccl, HcclCommInitRootInfo)(ranks, root, rank, &mut comm) };
        check("HcclCommInitRootInfo", code as i64)?;
        Ok(Communicator {
            cann: Arc::clone(cann),
            comm,
        })
    }
}

impl Drop for Communicator {
    fn drop(&mut self) {
        // SAFETY: `comm` came from HcclCommInitRootInfo and is destroyed once.
        let _ = unsafe { sym!(self.cann.hccl, HcclCommDestroy)(self.comm) };
    }
}

#[derive(Debug)]
struct Physical {
    cann: Arc<Cann>,
    handle: aclrtDrvMemHandle,
}

impl Drop for Physical {
    fn drop(&mut self) {
        // SAFETY: `handle` came from aclrtMallocPhysical or an import and is freed once.
        let _ = unsafe { sym!(self.cann.acl, aclrtFreePhysical)(self.handle) };
    }
}

#[derive(Debug)]
struct Reservation {
    cann: Arc<Cann>,
    va: *mut core::ffi::c_void,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        // SAFETY: `va` came from aclrtReserveMemAddress and is released once.
        let _ = unsafe { sym!(self.cann.acl, aclrtReleaseMemAddress)(self.va) };
    }
}

#[derive(Debug)]
struct Mapping {
    cann: Arc<Cann>,
    va: *mut core::ffi::c_void,
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: `va` was mapped by aclrtMapMem and is unmapped once, before its range is
        // released and its memory freed (field order of `Window`).
        let _ = unsafe { sym!(self.cann.acl, aclrtUnmapMem)(self.va) };
    }
}

/// A window: device memory mapped at an address this process can use.
#[derive(Debug)]
pub struct Window {
    // Drop order: unmap, release the range, free the memory.
    mapping: Mapping,
    reservation: Reservation,
    physical: Physical,
    size: usize,
}

// SAFETY: the handles and addresses may be used and released from any thread.
unsafe impl Send for Window {}
// SAFETY: `&Window` only reads the address and size, or exports the handle.
unsafe impl Sync for Window {}

fn location(device: i32) -> aclrtMemLocation {
    aclrtMemLocation {
        id: device as u32,
        type_: aclrtMemLocationType_ACL_MEM_LOCATION_TYPE_DEVICE,
    }
}

impl Window {
    /// A window of at least `bytes` on `device` (rounded up to the allocation granularity).
    pub fn allocate(cann: &Arc<Cann>, device: i32, bytes: usize) -> Result<Self, CannError> {
        if bytes == 0 {
            return Err(CannError::Invalid("a window of 0 bytes".into()));
        }
        let mut prop = aclrtPhysicalMemProp {
            handleType: aclrtMemHandleType_ACL_MEM_HANDLE_TYPE_NONE,
            allocationType: aclrtMemAllocationType_ACL_MEM_ALLOCATION_TYPE_PINNED,
            memAttr: aclrtMemAttr_ACL_HBM_MEM_NORMAL,
            location: location(device),
            reserve: 0,
        };
        let mut gran = 0usize;
        // SAFETY: valid prop and out-pointer.
        let code = unsafe {
            sym!(cann.acl, aclrtMemGetAllocationGranularity)(
                &mut prop,
                aclrtMemGranularityOptions_ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM,
                &mut gran,
            )
        };
        check("aclrtMemGetAllocationGranularity", code as i64)?;
        let size = bytes.div_ceil(gran.max(1)) * gran.max(1);
        let mut handle: aclrtDrvMemHandle = core::ptr::null_mut();
        // SAFETY: valid out-pointer and prop.
        let code = unsafe { sym!(cann.acl, aclrtMallocPhysical)(&mut handle, size, &prop, 0) };
        check("aclrtMallocPhysical", code as i64)?;
        let physical = Physical {
            cann: Arc::clone(cann),
            handle,
        };
        Self::map(cann, physical, device, size)
    }

    /// The window a peer exported as `shareable`, mapped here for `device`.
    pub fn import(
        cann: &Arc<Cann>,
        shareable: u64,
        device: i32,
        size: usize,
    ) -> Result<Self, CannError> {
        let mut handle: aclrtDrvMemHandle = core::ptr::null_mut();
        // SAFETY: valid out-pointer.
        let code = unsafe {
            sym!(cann.acl, aclrtMemImportFromShareableHandle)(shareable, device, &mut handle)
        };
        check("aclrtMemImportFromShareableHandle", code as i64)?;
        let physical = Physical {
            cann: Arc::clone(cann),
            handle,
        };
        Self::map(cann, physical, device, size)
    }

    /// Reserves an address range for `physical`, maps it and opens it for reading and
    /// writing from `device`.
    fn map(
        cann: &Arc<Cann>,
        physical: Physical,
        device: i32,
        size: usize,
    ) -> Result<Self, CannError> {
        let mut va: *mut core::ffi::c_void = core::ptr::null_mut();
        // SAFETY: valid out-pointer; no address is requested.
        let code = unsafe {
            sym!(cann.acl, aclrtReserveMemAddress)(&mut va, size, 0, core::ptr::null_mut(), 0)
        };
        check("aclrtReserveMemAddress", code as i64)?;
        let reservation = Reservation {
            cann: Arc::clone(cann),
            va,
        };
        // SAFETY: `va` is a reserved range of `size` bytes and `physical` holds `size` bytes.
        let code = unsafe { sym!(cann.acl, aclrtMapMem)(va, size, 0, physical.handle, 0) };
        check("aclrtMapMem", code as i64)?;
        let mapping = Mapping {
            cann: Arc::clone(cann),
            va,
        };
        // The access descriptor takes the driver's id (CANN 9, A2/A3), the physical memory's
        // properties ACL's logical one.
        let driver = super::device_ids::driver_id(device)?;
        let mut desc = aclrtMemAccessDesc {
            flags: aclrtMemAccessFlags_ACL_RT_MEM_ACCESS_FLAGS_READWRITE,
            location: aclrtMemLocation {
                id: driver,
                type_: aclrtMemLocationType_ACL_MEM_LOCATION_TYPE_DEVICE,
            },
            rsv: [0; 12],
        };
        // SAFETY: `va` is mapped for `size` bytes; one valid descriptor.
        let code = unsafe { sym!(cann.acl, aclrtMemSetAccess)(va, size, &mut desc, 1) };
        check("aclrtMemSetAccess", code as i64)?;
        Ok(Window {
            mapping,
            reservation,
            physical,
            size,
        })
    }

    /// A handle peers import this window with (process-id validation off: the peers'
    /// processes are not known in advance).
    pub fn export(&self) -> Result<u64, CannError> {
        let mut shareable = 0u64;
        // SAFETY: a live handle and a valid out-pointer.
        let code = unsafe {
            sym!(self.physical.cann.acl, aclrtMemExportToShareableHandle)(
                self.physical.handle,
                aclrtMemHandleType_ACL_MEM_HANDLE_TYPE_NONE,
                ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION as u64,
                &mut shareable,
            )
        };
        check("aclrtMemExportToShareableHandle", code as i64).map(|()| shareable)
    }

    /// The window's address in this process.
    pub fn base(&self) -> u64 {
        let _ = &self.reservation;
        self.mapping.va as u64
    }

    /// Its size in bytes.
    pub fn size(&self) -> usize {
        self.size
    }
}
