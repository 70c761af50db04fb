//! A kernel's view of one of its tensor arguments: the tile's address, shape and strides,
//! and typed reads and writes of its elements in row-major order (any [`Element`]: `f16`,
//! `bf16`, `f32`, integers ...).

use half::{bf16, f16};
use pto_runtime_core::{Access, Buffer, Dtype, KernelTensor, Tile};

use crate::element::Element;
use crate::kernel_error::{KernelError, error_code};
use crate::memory::MemoryError;
use crate::memory_map::MemoryMap;

/// Tensor argument `index` of the running task ([`crate::KernelCtx::tensor`]): where its
/// elements are, and reads and writes of all of them in row-major order (the last dimension
/// fastest), whatever the strides.
///
/// ```
/// use pto_sim::{KernelCtx, KernelError};
///
/// /// Tensor 0 (in) plus tensor 1 (in) into tensor 2 (out), f32s of any matching shape.
/// fn add(ctx: &KernelCtx<'_>) -> Result<(), KernelError> {
///     let (x, y, z) = (ctx.tensor(0)?, ctx.tensor(1)?, ctx.tensor(2)?);
///     let (xs, ys) = (x.read_f32s()?, y.read_f32s()?);
///     let zs: Vec<f32> = xs.iter().zip(&ys).map(|(a, b)| a + b).collect();
///     z.write_f32s(&zs)?; // an error if tensor 2 is an input or not zs.len() elements
///     Ok(())
/// }
/// # let _ = add;
/// ```
#[derive(Clone, Copy, Debug)]
pub struct TensorView<'a> {
    index: usize,
    arg: KernelTensor,
    memory: &'a MemoryMap,
}

impl<'a> TensorView<'a> {
    pub(crate) fn new(index: usize, arg: KernelTensor, memory: &'a MemoryMap) -> Self {
        TensorView { index, arg, memory }
    }

    /// The tile and how the task uses it.
    pub fn arg(&self) -> &KernelTensor {
        &self.arg
    }

    /// The tile.
    pub fn tile(&self) -> &Tile {
        &self.arg.tile
    }

    /// How the task uses it.
    pub fn access(&self) -> Access {
        self.arg.access
    }

    /// The buffer the tile lies in.
    pub fn buffer(&self) -> Buffer {
        self.arg.buffer
    }

    /// Where the tile starts in its buffer, in elements.
    pub fn start_offset(&self) -> u64 {
        self.arg.start_offset()
    }

    /// The elements' type, if the task gave it: reads and writes as another type are
    /// refused (integers of one size excepted: an `i32` tensor reads as `u32`s).
    pub fn dtype(&self) -> Option<Dtype> {
        self.arg.dtype
    }

    /// The device address of element `(0, .., 0)`.
    pub fn base(&self) -> u64 {
        self.arg.tile.base
    }

    /// Elements along each dimension, outermost first.
    pub fn shape(&self) -> &[u32] {
        &self.arg.tile.shape[..self.rank()]
    }

    /// Distance in elements between neighbours along each dimension.
    pub fn strides(&self) -> &[u64] {
        &self.arg.tile.strides[..self.rank()]
    }

    /// Bytes per element.
    pub fn elem_bytes(&self) -> u32 {
        self.arg.tile.elem
    }

    /// Elements in all.
    pub fn len(&self) -> usize {
        self.shape().iter().map(|&n| n as usize).product()
    }

    /// Whether it has no element (never, for a tile the runtime accepted).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The device address of the element at `index` (one index per dimension), or an error
    /// if `index` is outside the shape.
    pub fn addr(&self, index: &[u32]) -> Result<u64, KernelError> {
        if index.len() != self.rank() || index.iter().zip(self.shape()).any(|(i, n)| i >= n) {
            return Err(self.error(format!(
                "index {index:?} is outside its shape {:?}",
                self.shape()
            )));
        }
        let off: u64 = index
            .iter()
            .zip(self.strides())
            .map(|(&i, s)| i as u64 * s)
            .sum();
        Ok(self.base() + off * self.elem_bytes() as u64)
    }

    /// Every element as a `T`, whose size must be the tile's element size.
    ///
    /// ```
    /// use pto_sim::{KernelCtx, KernelError, half::f16};
    ///
    /// /// Tensor 0 (in, f16) scaled by 2 into tensor 1 (out, f32).
    /// fn widen(ctx: &KernelCtx<'_>) -> Result<(), KernelError> {
    ///     let xs: Vec<f16> = ctx.tensor(0)?.read()?;
    ///     let ys: Vec<f32> = xs.iter().map(|x| 2.0 * x.to_f32()).collect();
    ///     ctx.tensor(1)?.write(&ys)
    /// }
    /// # let _ = widen;
    /// ```
    pub fn read<T: Element>(&self) -> Result<Vec<T>, KernelError> {
        self.check_dtype(T::DTYPE)?;
        self.gather(T::SIZE as u32, |m, at, out| m.read_elems(at, out))
    }

    /// Writes `data` (row-major, [`TensorView::len`] values of the tile's element size) to
    /// the elements.
    pub fn write<T: Element>(&self, data: &[T]) -> Result<(), KernelError> {
        self.check_dtype(T::DTYPE)?;
        self.scatter(T::SIZE as u32, data, |m, at, d| m.write_elems(at, d))
    }

    /// Every element as an f16 (2-byte elements).
    pub fn read_f16s(&self) -> Result<Vec<f16>, KernelError> {
        self.read()
    }

    /// Writes `data` (row-major, [`TensorView::len`] f16s) to the elements.
    pub fn write_f16s(&self, data: &[f16]) -> Result<(), KernelError> {
        self.write(data)
    }

    /// Every element as a bf16 (2-byte elements).
    pub fn read_bf16s(&self) -> Result<Vec<bf16>, KernelError> {
        self.read()
    }

    /// Writes `data` (row-major, [`TensorView::len`] bf16s) to the elements.
    pub fn write_bf16s(&self, data: &[bf16]) -> Result<(), KernelError> {
        self.write(data)
    }

    /// Every element as an f32 (4-byte elements).
    pub fn read_f32s(&self) -> Result<Vec<f32>, KernelError> {
        self.check_dtype(Dtype::F32)?;
        self.gather(4, |m, at, out| m.read_f32s(at, out))
    }

    /// Writes `data` (row-major, [`TensorView::len`] f32s) to the elements.
    pub fn write_f32s(&self, data: &[f32]) -> Result<(), KernelError> {
        self.check_dtype(Dtype::F32)?;
        self.scatter(4, data, |m, at, d| m.write_f32s(at, d))
    }

    /// Every element as a u32 (4-byte elements).
    pub fn read_u32s(&self) -> Result<Vec<u32>, KernelError> {
        self.check_dtype(Dtype::U32)?;
        self.gather(4, |m, at, out| m.read_u32s(at, out))
    }

    /// Writes `data` (row-major, [`TensorView::len`] u32s) to the elements.
    pub fn write_u32s(&self, data: &[u32]) -> Result<(), KernelError> {
        self.check_dtype(Dtype::U32)?;
        self.scatter(4, data, |m, at, d| m.write_u32s(at, d))
    }

    /// Every element as a u64 (8-byte elements).
    pub fn read_u64s(&self) -> Result<Vec<u64>, KernelError> {
        self.check_dtype(Dtype::U64)?;
        self.gather(8, |m, at, out| m.read_u64s(at, out))
    }

    /// Writes `data` (row-major, [`TensorView::len`] u64s) to the elements.
    pub fn write_u64s(&self, data: &[u64]) -> Result<(), KernelError> {
        self.check_dtype(Dtype::U64)?;
        self.scatter(8, data, |m, at, d| m.write_u64s(at, d))
    }

    /// Every element as an f64 (8-byte elements).
    pub fn read_f64s(&self) -> Result<Vec<f64>, KernelError> {
        self.check_dtype(Dtype::F64)?;
        self.gather(8, |m, at, out| m.read_f64s(at, out))
    }

    /// Writes `data` (row-major, [`TensorView::len`] f64s) to the elements.
    pub fn write_f64s(&self, data: &[f64]) -> Result<(), KernelError> {
        self.check_dtype(Dtype::F64)?;
        self.scatter(8, data, |m, at, d| m.write_f64s(at, d))
    }

    fn rank(&self) -> usize {
        (self.arg.tile.rank as usize).clamp(1, pto_runtime_core::MAX_RANK)
    }

    fn error(&self, what: String) -> KernelError {
        KernelError::sim(
            error_code::BAD_TENSOR,
            format!("tensor argument {}: {what}", self.index),
        )
    }

    /// Refuses reading or writing the elements as `want` when the task said they are of
    /// another type (integers of one size are interchangeable).
    fn check_dtype(&self, want: Dtype) -> Result<(), KernelError> {
        match self.arg.dtype {
            Some(d)
                if d != want && (d.is_float() || want.is_float() || d.size() != want.size()) =>
            {
                Err(self.error(format!("it holds {d}, read or written as {want}")))
            }
            _ => Ok(()),
        }
    }

    fn check_elem(&self, bytes: u32) -> Result<(), KernelError> {
        if self.elem_bytes() != bytes {
            return Err(self.error(format!(
                "its elements are {} bytes, read or written as {bytes}-byte values",
                self.elem_bytes()
            )));
        }
        Ok(())
    }

    /// The address of the first element of every innermost run, in row-major order.
    fn rows(&self) -> Vec<u64> {
        let (shape, strides) = (self.shape(), self.strides());
        let outer = &shape[..shape.len() - 1];
        let mut rows = Vec::with_capacity(outer.iter().map(|&n| n as usize).product());
        let mut index = vec![0u32; outer.len()];
        loop {
            let off: u64 = index.iter().zip(strides).map(|(&i, s)| i as u64 * s).sum();
            rows.push(self.base() + off * self.elem_bytes() as u64);
            // The next index, last outer dimension fastest.
            let Some(d) = (0..outer.len()).rev().find(|&d| index[d] + 1 < outer[d]) else {
                return rows;
            };
            index[d] += 1;
            index[d + 1..].iter_mut().for_each(|i| *i = 0);
        }
    }

    /// Reads each innermost run into consecutive elements of `out`, whole runs at a time
    /// where they are contiguous.
    fn gather<T: Default + Copy>(
        &self,
        bytes: u32,
        read: impl Fn(&MemoryMap, u64, &mut [T]) -> Result<(), MemoryError>,
    ) -> Result<Vec<T>, KernelError> {
        self.check_elem(bytes)?;
        let inner = *self.shape().last().unwrap_or(&1) as usize;
        let stride = *self.strides().last().unwrap_or(&1) * bytes as u64;
        let mut out = vec![T::default(); self.len()];
        for (at, run) in self.rows().into_iter().zip(out.chunks_mut(inner)) {
            if stride == bytes as u64 {
                read(self.memory, at, run)?;
            } else {
                for (j, v) in run.iter_mut().enumerate() {
                    read(self.memory, at + j as u64 * stride, std::slice::from_mut(v))?;
                }
            }
        }
        Ok(out)
    }

    /// Writes consecutive elements of `data` to each innermost run.
    fn scatter<T: Copy>(
        &self,
        bytes: u32,
        data: &[T],
        write: impl Fn(&MemoryMap, u64, &[T]) -> Result<(), MemoryError>,
    ) -> Result<(), KernelError> {
        self.check_elem(bytes)?;
        if !self.access().writes() {
            return Err(self.error(
                "the task only reads it: pass it as an output (or inout) to write it".into(),
            ));
        }
        if data.len() != self.len() {
            return Err(self.error(format!(
                "{} values written to its {} elements",
                data.len(),
                self.len()
            )));
        }
        let inner = *self.shape().last().unwrap_or(&1) as usize;
        let stride = *self.strides().last().unwrap_or(&1) * bytes as u64;
        for (at, run) in self.rows().into_iter().zip(data.chunks(inner)) {
            if stride == bytes as u64 {
                write(self.memory, at, run)?;
            } else {
                for (j, v) in run.iter().enumerate() {
                    write(self.memory, at + j as u64 * stride, std::slice::from_ref(v))?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
