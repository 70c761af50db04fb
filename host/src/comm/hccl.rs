//! The `hccl` backend (feature `cann`): windows in device memory through ACL's virtual
//! memory calls, HCCL only for its rendezvous, and the job's bootstrap for everything the
//! ranks exchange (the root info, each window's shareable handle).
//!
//! Per rank: set the device; rank 0 makes the HCCL root info and broadcasts it, every rank
//! joins the communicator; allocate and map the local window, export it; allgather the
//! exports; import and map every peer's window; meet at a barrier. Any failure drops what
//! was taken, in reverse (peers' mappings, the local window, the communicator, the device),
//! and returns the error; the peers then fail promptly as the bootstrap connection closes.

use std::sync::Arc;

use pto_device_sys::cann::vmm::{Communicator, DeviceContext, Window};
use pto_device_sys::cann::{Cann, CannError};
use pto_runtime_core::CommContext;

use crate::transport::Transport;
use crate::transport::bootstrap::{Bootstrap, BootstrapError};

/// Bytes of an HCCL root info.
const ROOT_INFO_BYTES: usize = 4108;

/// Why the hccl backend could not form the windows.
#[derive(Debug, thiserror::Error)]
pub enum HcclError {
    /// A CANN call failed, or CANN is missing.
    #[error("{0}")]
    Cann(#[from] CannError),
    /// The bootstrap failed (a peer failed or vanished).
    #[error("bootstrap: {0}")]
    Bootstrap(#[from] BootstrapError),
    /// The ranks disagree (window sizes, the root info).
    #[error("{0}")]
    Mismatch(String),
    /// The windows do not make a valid context.
    #[error("comm context: {0}")]
    Context(pto_runtime_core::CommError),
}

/// What a rank brings.
#[derive(Clone, Debug)]
pub struct HcclConfig {
    /// The NPU this rank drives.
    pub device: i32,
    /// Bytes of every rank's window (rounded up to CANN's granularity; every rank must ask
    /// the same).
    pub window_bytes: u64,
}

/// A rank's windows over HCCL and ACL.
#[derive(Debug)]
pub struct HcclComm {
    // Dropped in this order: peers' mappings, the local window, the communicator, the device.
    peers: Vec<Window>,
    local: Window,
    _comm: Communicator,
    _device: DeviceContext,
    ctx: CommContext,
}

impl HcclComm {
    /// Forms this rank's windows with every rank of `bootstrap`.
    pub fn init<T: Transport>(
        cann: &Arc<Cann>,
        cfg: &HcclConfig,
        bootstrap: &mut Bootstrap<T>,
    ) -> Result<Self, HcclError> {
        let (rank, ranks) = (bootstrap.rank(), bootstrap.ranks());
        let device = DeviceContext::open(cann, cfg.device)?;
        let mine = if rank == 0 {
            let info = cann.root_info()?;
            info.internal.iter().map(|&c| c as u8).collect::<Vec<u8>>()
        } else {
            Vec::new()
        };
        let root = bootstrap.broadcast(&mine)?;
        if root.len() != ROOT_INFO_BYTES {
            return Err(HcclError::Mismatch(format!(
                "rank 0 sent a root info of {} bytes, not {ROOT_INFO_BYTES}",
                root.len()
            )));
        }
        let mut info = Box::new(pto_device_sys::cann::generated::types::HcclRootInfo {
            internal: [0; ROOT_INFO_BYTES],
        });
        for (dst, &b) in info.internal.iter_mut().zip(&root) {
            *dst = b as core::ffi::c_char;
        }
        let comm = Communicator::init(cann, ranks, &info, rank)?;
        let local = Window::allocate(cann, cfg.device, cfg.window_bytes as usize)?;
        let shareable = local.export()?;
        let record = WindowRecord {
            rank,
            device: cfg.device,
            pid: std::process::id(),
            reserved: 0,
            size: local.size() as u64,
            handle: shareable,
        };
        let all = bootstrap.allgather(bytemuck::bytes_of(&record))?;
        let mut peers = Vec::new();
        let mut bases = Vec::with_capacity(ranks as usize);
        for (r, rec) in all.iter().enumerate() {
            let WindowRecord { size, handle, .. } = parse(rec).ok_or_else(|| {
                HcclError::Mismatch(format!(
                    "rank {r} sent a window record of {} bytes",
                    rec.len()
                ))
            })?;
            if size != local.size() as u64 {
                return Err(HcclError::Mismatch(format!(
                    "rank {r}'s window is {size} bytes, rank {rank}'s {}: every rank must ask \
                     for the same size",
                    local.size()
                )));
            }
            if r as u32 == rank {
                bases.push(local.base());
            } else {
                let w = Window::import(cann, handle, cfg.device, size as usize)?;
                bases.push(w.base());
                peers.push(w);
            }
        }
        let ctx =
            CommContext::new(rank, &bases, local.size() as u64).map_err(HcclError::Context)?;
        // Nobody uses a window before every rank has mapped every window.
        bootstrap.barrier()?;
        Ok(HcclComm {
            peers,
            local,
            _comm: comm,
            _device: device,
            ctx,
        })
    }

    /// The context the device runtime gets: this rank, every rank's window address here.
    pub fn context(&self) -> &CommContext {
        &self.ctx
    }

    /// This rank's window: address and bytes.
    pub fn local_window(&self) -> (u64, u64) {
        (self.local.base(), self.local.size() as u64)
    }

    /// Peers' windows mapped here.
    pub fn peer_windows(&self) -> usize {
        self.peers.len()
    }
}

/// What each rank tells the others of its window (every rank runs this build, so the
/// native layout is shared).
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct WindowRecord {
    rank: u32,
    device: i32,
    pid: u32,
    reserved: u32,
    /// The window's bytes.
    size: u64,
    /// Its shareable handle, for `Window::import`.
    handle: u64,
}

/// A window record from a peer's bytes; `None` unless there are exactly a record's.
fn parse(rec: &[u8]) -> Option<WindowRecord> {
    (rec.len() == size_of::<WindowRecord>()).then(|| bytemuck::pod_read_unaligned(rec))
}
