//! A task as C submits it: its kernel, class and ring, its scalar arguments, the ids it
//! depends on, and its tensor arguments ([`PtoTensorArg`]: a tile of a buffer and how the
//! task uses it, from which the runtime finds its dependencies and which the kernel
//! receives). Conversions only; `raw.rs` turns the pointers into slices.
#![forbid(unsafe_code)]

use super::status::PtoStatus;
use crate::ids::WorkerClass;
use crate::predicate::{CmpOp, Predicate};
use crate::tensor::arg::{Buffer, KernelTensor, TensorArg};
use crate::tensor::dtype::Dtype;
use crate::tensor::tile::{Access, MAX_RANK, Tile};

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
    /// A predicate (null: none): read when the task is about to be dispatched, a false one
    /// skips the task (no core runs it, its consumers are released).
    pub predicate: *const PtoPredicate,
}

/// How a [`PtoPredicate`] compares its element with its target (`PTO_CMP_EQ`, ...; the
/// codes of `pto_runtime_core::CmpOp`).
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PtoCmpOp {
    /// `value == target`
    PtoCmpEq = 0,
    /// `value != target`
    PtoCmpNe = 1,
    /// `value < target`
    PtoCmpLt = 2,
    /// `value <= target`
    PtoCmpLe = 3,
    /// `value > target`
    PtoCmpGt = 4,
    /// `value >= target`
    PtoCmpGe = 5,
}

/// A task's predicate as C gives it (the C view of `pto_runtime_core::Predicate`): the task
/// runs only if the `width`-byte element at `addr` compares true with `target` when the task
/// is about to be dispatched (its producers have finished); if not, it is skipped.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PtoPredicate {
    /// The element's device address (aligned to `width`).
    pub addr: u64,
    /// What the element is compared with (its low `width` bytes, sign-extended when
    /// `is_signed`).
    pub target: u64,
    /// The element's bytes: 1, 2, 4 or 8.
    pub width: u8,
    /// The comparison (a `PtoCmpOp`).
    pub op: u8,
    /// Non-zero: the element and the target compare as signed integers.
    pub is_signed: u8,
    /// Zero.
    pub reserved: [u8; 5],
}

const _: () = {
    assert!(core::mem::size_of::<PtoPredicate>() == 24);
    assert!(PtoCmpOp::PtoCmpEq as u8 == CmpOp::Eq as u8);
    assert!(PtoCmpOp::PtoCmpNe as u8 == CmpOp::Ne as u8);
    assert!(PtoCmpOp::PtoCmpLt as u8 == CmpOp::Lt as u8);
    assert!(PtoCmpOp::PtoCmpLe as u8 == CmpOp::Le as u8);
    assert!(PtoCmpOp::PtoCmpGt as u8 == CmpOp::Gt as u8);
    assert!(PtoCmpOp::PtoCmpGe as u8 == CmpOp::Ge as u8);
};

impl PtoPredicate {
    /// The C view of `p`.
    pub fn from_predicate(p: &Predicate) -> Self {
        PtoPredicate {
            addr: p.addr,
            target: p.target,
            width: p.width,
            op: p.op as u8,
            is_signed: u8::from(p.is_signed),
            reserved: [0; 5],
        }
    }

    /// The runtime's predicate; `PtoErrBadPredicate` for an unknown comparison. Its width
    /// and alignment are checked at submit (the same status).
    pub fn to_predicate(&self) -> Result<Predicate, PtoStatus> {
        let op = CmpOp::from_code(self.op).ok_or(PtoStatus::PtoErrBadPredicate)?;
        let p = Predicate::new(self.addr, self.width, op, self.target);
        Ok(if self.is_signed != 0 { p.signed() } else { p })
    }
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
    /// How the task uses the tile: `PtoAccess_READ`, `PtoAccess_WRITE`, or both (read, then
    /// written). Anything else (0 included) is refused.
    pub access: PtoAccess,
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
    /// How the task uses the tile: `PtoAccess_READ`, `PtoAccess_WRITE`, or both.
    pub access: PtoAccess,
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

/// How a task uses a tensor argument, as C writes it: a set of `READ` and `WRITE` (the C
/// names `PtoAccess_READ`, `PtoAccess_WRITE`). Read only is [`Access::In`], write only
/// [`Access::Out`], both [`Access::InOut`]; no bit (a zeroed argument) is no access and is
/// refused, so a forgotten access mode never passes for a read.
#[repr(transparent)]
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct PtoAccess(u8);

bitflags::bitflags! {
    impl PtoAccess: u8 {
        /// The task reads the tile.
        const READ = 1;
        /// The task writes the tile.
        const WRITE = 1 << 1;
    }
}

impl PtoAccess {
    /// The flags of `a`.
    pub fn of(a: Access) -> Self {
        match a {
            Access::In => PtoAccess::READ,
            Access::Out => PtoAccess::WRITE,
            Access::InOut => PtoAccess::READ | PtoAccess::WRITE,
        }
    }

    /// The access these flags name: `None` for no bit or an unknown one.
    pub fn access(self) -> Option<Access> {
        const RW: u8 = PtoAccess::READ.bits() | PtoAccess::WRITE.bits();
        match self.bits() {
            1 => Some(Access::In),
            2 => Some(Access::Out),
            RW => Some(Access::InOut),
            _ => None,
        }
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
            access: PtoAccess::of(a.access),
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
        let access = self.access.access().ok_or(PtoStatus::PtoErrSubmit)?;
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
            access: PtoAccess::of(t.access),
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
            assert_eq!(c.access.contains(PtoAccess::READ), a.access.reads());
            assert_eq!(c.access.contains(PtoAccess::WRITE), a.access.writes());
            let k = PtoTensor::from_kernel(&KernelTensor::from(&a));
            assert_eq!(
                (k.base, k.elem, k.shape, k.buffer, k.buffer_len),
                (a.tile.base, a.tile.elem, a.tile.shape, b.base, b.len)
            );
            assert_eq!(k.start_offset, (a.tile.base - b.base) / a.tile.elem as u64);
            assert_eq!(k.dtype, Dtype::code_of(a.dtype));
        }
        for bad in [
            PtoTensorArg::default(),
            PtoTensorArg {
                access: PtoAccess::from_bits_retain(4),
                ..PtoTensorArg::default()
            },
            PtoTensorArg {
                access: PtoAccess::READ,
                dtype: 13,
                ..PtoTensorArg::default()
            },
        ] {
            assert_eq!(bad.to_arg(), Err(PtoStatus::PtoErrSubmit));
        }
        assert_eq!(class_of(2), Ok(WorkerClass::Mix));
        assert_eq!(class_of(4), Err(PtoStatus::PtoErrSubmit));
    }

    #[test]
    fn predicates_cross_to_c_and_back_and_an_unknown_comparison_is_refused() {
        for op in CmpOp::ALL {
            for width in [1, 2, 4, 8] {
                for p in [
                    Predicate::new(0x1000, width, op, 7),
                    Predicate::new(0x2000, width, op, u64::MAX).signed(),
                ] {
                    let c = PtoPredicate::from_predicate(&p);
                    assert_eq!(c.op, op as u8);
                    assert_eq!(c.to_predicate(), Ok(p));
                }
            }
        }
        let bad = PtoPredicate {
            width: 4,
            op: 6,
            ..PtoPredicate::default()
        };
        assert_eq!(bad.to_predicate(), Err(PtoStatus::PtoErrBadPredicate));
    }
}
