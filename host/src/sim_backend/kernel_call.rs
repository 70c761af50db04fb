//! A raw kernel called by a simulated core as the AICore executor calls it: a payload slot
//! laid out as on the chip (`pto_device_sys::chip::layout::Slot`), its argument words the
//! task's tensor addresses then its scalar arguments, the tensor descriptors beside it; after
//! the call, the slot's `fail_code` and deferred conditions become the simulator's.
#![allow(unsafe_code)]

use std::sync::Arc;

use pto_device_sys::chip::layout::{SLOT_ARGS, SLOT_CONDITIONS, Slot};
use pto_runtime_core::ffi::PtoTensor;
use pto_sim::{KernelCtx, KernelError, error_code};

use super::raw_code::RawCode;

/// The shape word's argument count (as the chip's `Slot::shape` packs it).
const SHAPE_NARGS_SHIFT: u32 = 16;
/// The shape word's lane count.
const SHAPE_LANES_SHIFT: u32 = 8;

/// Runs `code` as kernel `id` for the task `ctx` describes.
pub fn call(code: &Arc<RawCode>, id: u32, ctx: &KernelCtx<'_>) -> Result<(), KernelError> {
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
    slot.kernel_addr = code.address();
    slot.task = ctx.task.raw();
    slot.kernel = id;
    slot.shape = u32::from(ctx.lane)
        | u32::from(ctx.lanes) << SHAPE_LANES_SHIFT
        | (words as u32) << SHAPE_NARGS_SHIFT;
    slot.ntensors = nt as u32;
    slot.tensors = if nt == 0 { 0 } else { tensors.as_ptr() as u64 };
    for (w, t) in slot.args.iter_mut().zip(&tensors) {
        *w = t.base;
    }
    slot.args[nt..words].copy_from_slice(ctx.args);
    let entry = code.address() as usize;
    // SAFETY: `entry` is the first byte of a mapping of the kernel's raw code, mapped read and
    // execute, alive as long as `code`; the device ABI's kernel is `void (*)(int64_t *args)`.
    let kernel = unsafe { std::mem::transmute::<usize, extern "C" fn(*mut i64)>(entry) };
    // The kernel reaches the slot around its arguments (`pto_kernel_slot`), the tensor
    // descriptors through `slot.tensors`, and device memory through the addresses in them.
    kernel(slot.args.as_mut_ptr().cast::<i64>());
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
