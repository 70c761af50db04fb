//! A C kernel called by a simulated core as the AICore executor calls it: a payload slot laid
//! out as on the chip (`pto_device_sys::chip::layout::Slot`), its argument words the task's
//! tensor addresses then its scalar arguments, the tensor descriptors beside it; after the
//! call, the slot's `fail_code` and deferred conditions become the simulator's.

use pto_device_sys::chip::layout::{SLOT_ARGS, SLOT_CONDITIONS, Slot};
use pto_runtime_core::ffi::PtoTensor;

use crate::kernel_error::{KernelError, error_code};
use crate::kernels::KernelCtx;
use crate::raw::so::SharedObject;

/// A kernel's entry in a loaded shared object: the SO (kept loaded while the entry lives)
/// and the entry's address.
pub(crate) struct Entry {
    /// Kept loaded while the entry may be called.
    _so: SharedObject,
    at: usize,
}

impl Entry {
    /// The exported symbol `symbol` of `so`, taken as the kernel's entry. The caller checked
    /// the file's symbol table: `symbol` is a function it exports, for this host's machine
    /// (`c_kernel::elf::check`); that the function has the kernel's type is the device ABI's
    /// contract with whoever wrote it. `None` if the loader does not find it.
    pub(crate) fn resolve(so: SharedObject, symbol: &str) -> Option<Self> {
        let at = so.address(symbol)?;
        Some(Entry { _so: so, at })
    }

    /// Runs it as kernel `id` for the task `ctx` describes.
    pub(crate) fn run(&self, id: u32, ctx: &KernelCtx<'_>) -> Result<(), KernelError> {
        // SAFETY: `at` is the entry `resolve` found in `so`, which stays loaded while `self`
        // lives (see `resolve` for why it is a kernel function).
        unsafe { call(self.at, id, ctx) }
    }
}

/// The shape word's argument count (as the chip's `Slot::shape` packs it).
const SHAPE_NARGS_SHIFT: u32 = 16;
/// The shape word's lane count.
const SHAPE_LANES_SHIFT: u32 = 8;

/// Runs the C kernel whose entry is at `entry` as kernel `id` for the task `ctx` describes.
///
/// # Safety
/// `entry` is the address of a `void (*)(int64_t *args)` function of a shared object that
/// stays loaded for the call.
unsafe fn call(entry: usize, id: u32, ctx: &KernelCtx<'_>) -> Result<(), KernelError> {
    let nt = ctx.tensors.len();
    let words = nt + ctx.args.len();
    if words > SLOT_ARGS {
        return Err(KernelError::device(
            error_code::MISSING_ARGS,
            format!(
                "{nt} tensors and {} scalar arguments do not fit a payload slot's {SLOT_ARGS} \
                 words",
                ctx.args.len()
            ),
        ));
    }
    let tensors: Vec<PtoTensor> = ctx.tensors.iter().map(PtoTensor::from_kernel).collect();
    let mut slot = Box::new(Slot::ZERO);
    slot.kernel_addr = entry as u64;
    slot.task = ctx.task.raw();
    slot.kernel = id;
    slot.shape = u32::from(ctx.lane)
        | u32::from(ctx.lanes) << SHAPE_LANES_SHIFT
        | (words as u32) << SHAPE_NARGS_SHIFT;
    slot.block = u32::from(ctx.block) | u32::from(ctx.blocks) << 16;
    slot.ntensors = nt as u32;
    slot.tensors = if nt == 0 { 0 } else { tensors.as_ptr() as u64 };
    for (w, t) in slot.args.iter_mut().zip(&tensors) {
        *w = t.base;
    }
    slot.args[nt..words].copy_from_slice(ctx.args);
    // SAFETY: `entry` is a kernel function of a loaded SO (this function's contract), of the
    // device ABI's type; the slot is this call's own and laid out as the device ABI's; the
    // descriptors it points at (`tensors`) live until after the call.
    let kernel = unsafe { std::mem::transmute::<usize, extern "C" fn(*mut i64)>(entry) };
    // The kernel reaches the slot around its arguments (`pto_kernel_slot`), the tensor
    // descriptors through `slot.tensors`, and device memory through the addresses in them.
    kernel(slot.args.as_mut_ptr().cast::<i64>());
    drop(tensors);
    if slot.fail_code != 0 {
        return Err(KernelError::device(
            slot.fail_code,
            format!("the kernel called pto_kernel_fail({})", slot.fail_code),
        ));
    }
    let registered = slot.ncond as usize;
    if registered > SLOT_CONDITIONS {
        return Err(KernelError::device(
            error_code::TOO_MANY_CONDITIONS,
            format!(
                "the kernel registered {registered} deferred conditions, and a payload slot \
                 holds {SLOT_CONDITIONS}"
            ),
        ));
    }
    for raw in &slot.conditions[..registered] {
        let c = raw.decode().map_err(|kind| {
            KernelError::msg(format!(
                "the kernel registered a deferred condition of unknown kind {kind}"
            ))
        })?;
        ctx.defer(c)?;
    }
    Ok(())
}
