//! A task as C submits it: its kernel, class and ring, its scalar arguments, the ids it
//! depends on, and its tensor arguments ([`PtoTensorArg`]: a tile of a buffer and how the
//! task uses it, from which the runtime finds its dependencies and which the kernel
//! receives). Conversions only; `raw.rs` turns the pointers into slices.
#![forbid(unsafe_code)]

use super::status::PtoStatus;
use crate::ids::WorkerClass;
use crate::orchestrator::dtype::Dtype;
use crate::orchestrator::tensor::{Access, MAX_RANK, Tile};
use crate::orchestrator::tensor_arg::{Buffer, KernelTensor, TensorArg};

/// A task to submit.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PtoTask {
    /// The kernel.
    pub kernel: u32,
    /// 0: AIC, 1: AIV, 2: MIX (one AIC and two AIV lanes), 3: DUMMY (no core).
    pub class: u8,
    /// The ring.
    pub ring: u8,
    /// SPMD blocks: the kernel runs this many times, each on its own core (cluster for MIX)
    /// and knowing its block index; 0 (a zeroed task) means 1.
    pub blocks: u16,
    /// Scalar arguments.
    pub args: *const u64,
    /// How many.
    pub nargs: usize,
    /// Ids of tasks that must finish first.
    pub deps: *const u64,
    /// How many.
    pub ndeps: usize,
    /// Tensor arguments (null with 0: none): the task waits for every earlier live task
    /// whose tile of the same buffer conflicts, and its kernel receives them in this order.
    pub tensors: *const PtoTensorArg,
    /// How many.
    pub ntensors: usize,
    /// Non-zero: the blocks start together (at most the cores of its class one scheduler
    /// owns).
    pub sync_start: u8,
    /// Non-zero: a MIX task whose AIV lanes run `aiv_kernels` (`kernel` runs on its AIC).
    pub per_lane: u8,
    /// The AIV lanes' kernels when `per_lane` is set.
    pub aiv_kernels: [u32; 2],
}

/// A tensor argument: a tile of a buffer, and how the task uses it (the C view of
/// `pto_runtime_core::TensorArg`). Element `(k0, .., k[rank-1])` lies at `base + elem *
/// sum(k_i * strides[i])`; every byte of the tile must lie inside the buffer.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PtoTensorArg {
    /// The buffer's first byte (an allocation: the tensor map's key).
    pub buffer: u64,
    /// The buffer's bytes.
    pub buffer_len: u64,
    /// Device address of the tile's element `(0, .., 0)`.
    pub base: u64,
    /// Bytes per element.
    pub elem: u32,
    /// Dimensions in use (1 to 5).
    pub rank: u8,
    /// 0: read, 1: written, 2: read then written.
    pub access: u8,
    /// The elements' type (`PTO_DTYPE_*`), or 0: untyped. A type's size must be `elem`.
    pub dtype: u8,
    /// Zero.
    pub reserved: u8,
    /// Elements along each dimension, outermost first (unused ones 1).
    pub shape: [u32; 5],
    /// Zero.
    pub reserved2: u32,
    /// Distance in elements between neighbours along each dimension.
    pub strides: [u64; 5],
}

/// A tensor argument as a kernel receives it (the C view of
/// `pto_runtime_core::KernelTensor`; 128 bytes, kernel ABI 4). Element `(k0, .., k[rank-1])`
/// lies at `base + elem * sum(k_i * strides[i])`, and `base` is `start_offset` elements into
/// the buffer.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PtoTensor {
    /// Device address of element `(0, .., 0)`.
    pub base: u64,
    /// The first byte of the buffer the tile lies in.
    pub buffer: u64,
    /// The buffer's bytes.
    pub buffer_len: u64,
    /// Where the tile starts in the buffer, in elements.
    pub start_offset: u64,
    /// Bytes per element.
    pub elem: u32,
    /// Dimensions in use (1 to 5).
    pub rank: u8,
    /// 0: read, 1: written, 2: read then written.
    pub access: u8,
    /// The elements' type (`PTO_DTYPE_*`), or 0: the task did not say.
    pub dtype: u8,
    /// Zero.
    pub reserved: u8,
    /// Elements along each dimension, outermost first.
    pub shape: [u32; 5],
    /// Zero.
    pub reserved2: u32,
    /// Distance in elements between neighbours along each dimension.
    pub strides: [u64; 5],
    /// Zero (room to grow).
    pub tail: [u64; 3],
}

// The C views spell out the rank bound (cbindgen writes no constants).
const _: () = assert!(MAX_RANK == 5);
const _: () = assert!(core::mem::size_of::<PtoTensor>() == 128);
const _: () = assert!(core::mem::size_of::<PtoTensorArg>() == 96);

fn access_code(a: Access) -> u8 {
    match a {
        Access::In => 0,
        Access::Out => 1,
        Access::InOut => 2,
    }
}

/// The worker class numbered `class` in [`PtoTask::class`]; `PtoErrSubmit` for others.
pub fn class_of(class: u8) -> Result<WorkerClass, PtoStatus> {
    WorkerClass::ALL
        .into_iter()
        .find(|c| *c as u8 == class)
        .ok_or(PtoStatus::PtoErrSubmit)
}

impl PtoTensorArg {
    /// The C view of `a`.
    pub fn from_arg(a: &TensorArg) -> Self {
        PtoTensorArg {
            buffer: a.buffer.base,
            buffer_len: a.buffer.len,
            base: a.tile.base,
            elem: a.tile.elem,
            rank: a.tile.rank,
            access: access_code(a.access),
            dtype: Dtype::code_of(a.dtype),
            reserved: 0,
            shape: a.tile.shape,
            reserved2: 0,
            strides: a.tile.strides,
        }
    }

    /// The runtime's tensor argument; `PtoErrSubmit` for an unknown access or dtype code.
    /// The tile itself is checked at submit (a typed `PtoErrBadTensor`).
    pub fn to_arg(&self) -> Result<TensorArg, PtoStatus> {
        let access = match self.access {
            0 => Access::In,
            1 => Access::Out,
            2 => Access::InOut,
            _ => return Err(PtoStatus::PtoErrSubmit),
        };
        let dtype = match self.dtype {
            0 => None,
            c => Some(Dtype::from_code(c).ok_or(PtoStatus::PtoErrSubmit)?),
        };
        Ok(TensorArg {
            buffer: Buffer::new(self.buffer, self.buffer_len),
            tile: Tile {
                base: self.base,
                elem: self.elem,
                rank: self.rank,
                shape: self.shape,
                strides: self.strides,
            },
            access,
            dtype,
        })
    }
}

impl PtoTensor {
    /// The C view of `t`.
    pub fn from_kernel(t: &KernelTensor) -> Self {
        PtoTensor {
            base: t.tile.base,
            buffer: t.buffer.base,
            buffer_len: t.buffer.len,
            start_offset: t.start_offset(),
            elem: t.tile.elem,
            rank: t.tile.rank,
            access: access_code(t.access),
            dtype: Dtype::code_of(t.dtype),
            reserved: 0,
            shape: t.tile.shape,
            reserved2: 0,
            strides: t.tile.strides,
            tail: [0; 3],
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn tensor_arguments_cross_to_c_and_back() {
        let b = Buffer::new(0x1000, 4096);
        for a in [
            TensorArg::input(b, Tile::contiguous(0x1000, 4, 16)),
            TensorArg::output(b, Tile::block(0x1040, 8, 3, 4, 16)).typed(Dtype::F64),
            TensorArg::inout(b, Tile::contiguous(0x1100, 2, 1)).typed(Dtype::Bf16),
        ] {
            let c = PtoTensorArg::from_arg(&a);
            assert_eq!(c.to_arg(), Ok(a));
            let k = PtoTensor::from_kernel(&KernelTensor::from(&a));
            assert_eq!(
                (k.base, k.elem, k.shape, k.buffer, k.buffer_len),
                (a.tile.base, a.tile.elem, a.tile.shape, b.base, b.len)
            );
            assert_eq!(k.start_offset, (a.tile.base - b.base) / a.tile.elem as u64);
            assert_eq!(k.dtype, Dtype::code_of(a.dtype));
        }
        for bad in [
            PtoTensorArg {
                access: 3,
                ..PtoTensorArg::default()
            },
            PtoTensorArg {
                dtype: 13,
                ..PtoTensorArg::default()
            },
        ] {
            assert_eq!(bad.to_arg(), Err(PtoStatus::PtoErrSubmit));
        }
        assert_eq!(class_of(2), Ok(WorkerClass::Mix));
        assert_eq!(class_of(4), Err(PtoStatus::PtoErrSubmit));
    }
}
