//! The tiled GEMM: `acc = A B` accumulated over K blocks by cube tasks, one per output tile
//! and K block, then (optionally) a vector epilogue per tile writing `C`.
//!
//! No task names another: the K steps of one tile follow each other because each reads and
//! writes the tile's accumulator (the first only writes it), the epilogue waits for the last
//! of them because it reads the accumulator, and a step waits for whatever produced the
//! blocks of `A` it reads. Matrices are row-major.

use pto_runtime_core::{
    Buffer, KernelId, Orchestrator, Platform, TaskId, TaskSpec, TensorArg, Tile, WorkerClass,
};

use crate::{BuildError, Submitter};

/// The example's matmul kernel id: tensors `[a block, b block, acc tile]`.
pub const MATMUL: KernelId = KernelId(0);
/// The example's epilogue kernel id: tensors `[acc tile, bias, c tile]`.
pub const EPILOGUE: KernelId = KernelId(1);

/// Sizes, in elements: `A` is `m x k`, `B` is `k x n`; output tiles `tm x tn`, K blocks of
/// `tk`; `elem` bytes per element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GemmShape {
    /// Rows of `A` and `C`.
    pub m: usize,
    /// Columns of `B` and `C`.
    pub n: usize,
    /// Columns of `A`, rows of `B`.
    pub k: usize,
    /// Rows of an output tile.
    pub tm: usize,
    /// Columns of an output tile.
    pub tn: usize,
    /// Depth of a K block.
    pub tk: usize,
    /// Bytes per element.
    pub elem: u32,
}

impl GemmShape {
    /// Output tiles, and K steps per tile.
    pub fn tiles(&self) -> (usize, usize) {
        ((self.m / self.tm) * (self.n / self.tn), self.k / self.tk)
    }

    fn check(&self) -> Result<(), BuildError> {
        let dims = [(self.m, self.tm), (self.n, self.tn), (self.k, self.tk)];
        if dims
            .iter()
            .any(|&(d, t)| t == 0 || d == 0 || !d.is_multiple_of(t))
            || self.elem == 0
        {
            return Err(BuildError::Shape(format!(
                "{self:?}: every dimension must be a non-zero multiple of its tile"
            )));
        }
        Ok(())
    }

    /// The `rows x width` block of the matrix in `b` (`cols` columns) from element `(r, c)`.
    fn block(&self, b: Buffer, cols: usize, (r, c): (usize, usize), rows: usize, w: usize) -> Tile {
        let e = self.elem as usize;
        Tile::block(
            b.at(((r * cols + c) * e) as u64),
            self.elem,
            rows as u32,
            w as u32,
            cols as u64,
        )
    }
}

/// The matrices: `a` (`m x k`), `b` (`k x n`) and the accumulator `acc` (`m x n`).
#[derive(Clone, Copy, Debug)]
pub struct GemmBuffers {
    /// The left operand.
    pub a: Buffer,
    /// The right operand.
    pub b: Buffer,
    /// Where the K steps accumulate.
    pub acc: Buffer,
}

/// The vector epilogue of each tile: `kernel` reads the tile's accumulator and its `tn`
/// columns of `bias`, writes the tile of `c` (`m x n`), and gets `args`.
#[derive(Clone, Copy, Debug)]
pub struct Epilogue<'a> {
    /// Its kernel.
    pub kernel: KernelId,
    /// A row of `n` elements.
    pub bias: Buffer,
    /// The output matrix.
    pub c: Buffer,
    /// Its scalar arguments.
    pub args: &'a [u64],
}

/// The tasks of one output tile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GemmTile {
    /// Its K steps, in order.
    pub steps: Vec<TaskId>,
    /// Its epilogue, if there is one.
    pub epilogue: Option<TaskId>,
}

/// Submits the GEMM tile by tile (each tile's K steps, then its epilogue): `matmul` on cube
/// cores, the epilogue (if any) on vector cores. Returns the tasks of each tile, row-major.
pub fn submit_tiled_gemm<P: Platform>(
    s: &mut Submitter,
    o: &mut Orchestrator<'_, '_, P>,
    shape: &GemmShape,
    bufs: GemmBuffers,
    matmul: KernelId,
    epilogue: Option<&Epilogue<'_>>,
) -> Result<Vec<GemmTile>, BuildError> {
    shape.check()?;
    let GemmShape {
        m,
        n,
        k,
        tm,
        tn,
        tk,
        ..
    } = *shape;
    let mut tiles = Vec::with_capacity(shape.tiles().0);
    for i in (0..m).step_by(tm) {
        for j in (0..n).step_by(tn) {
            let acc = shape.block(bufs.acc, n, (i, j), tm, tn);
            let mut steps = Vec::with_capacity(k / tk);
            for kk in (0..k).step_by(tk) {
                let tensors = [
                    TensorArg::input(bufs.a, shape.block(bufs.a, k, (i, kk), tm, tk)),
                    TensorArg::input(bufs.b, shape.block(bufs.b, n, (kk, j), tk, tn)),
                    // The first step only writes the accumulator; later ones read it too.
                    if kk == 0 {
                        TensorArg::output(bufs.acc, acc)
                    } else {
                        TensorArg::inout(bufs.acc, acc)
                    },
                ];
                let task = TaskSpec::new(matmul, WorkerClass::Aic).tensors(&tensors);
                steps.push(s.submit(o, &task)?);
            }
            let epilogue = match epilogue {
                None => None,
                Some(e) => {
                    let tensors = [
                        TensorArg::input(bufs.acc, acc),
                        TensorArg::input(e.bias, shape.block(e.bias, n, (0, j), 1, tn)),
                        TensorArg::output(e.c, shape.block(e.c, n, (i, j), tm, tn)),
                    ];
                    let task = TaskSpec::new(e.kernel, WorkerClass::Aiv)
                        .tensors(&tensors)
                        .args(e.args);
                    Some(s.submit(o, &task)?)
                }
            };
            tiles.push(GemmTile { steps, epilogue });
        }
    }
    Ok(tiles)
}
