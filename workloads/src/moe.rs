//! A mixture-of-experts FFN under predicated dispatch: a router counts the tokens each expert
//! was given, then every expert's tiles (an up and a down projection per tile) carry the
//! predicate "this expert's count > 0", and a combine per tile gathers the experts' outputs.
//! The tiles of an expert no token chose are skipped at dispatch: no core runs them, and the
//! combines after them run all the same.
//!
//! The counts are real device memory (the predicates read them); every other buffer is an
//! address of the scene's arena that no kernel touches. The router's task writes the counts
//! as far as the runtime knows (its tensor argument), so the predicates read them after it;
//! the builder stores the counts itself, before submitting, since the bench's kernels are
//! no-ops.

use pto_runtime_core::{Buffer, CmpOp, KernelId, Predicate, TaskSpec, TensorArg, WorkerClass};
use pto_sim::SimOrchestrator;

use crate::{BuildError, Submitter, span, whole};

/// The MoE scene's kernel ids.
pub mod kernel {
    use pto_runtime_core::KernelId;

    /// The router: reads the tokens, writes each expert's count.
    pub const ROUTE: KernelId = KernelId(0);
    /// An expert's up (gate and up) projection of one tile of its intermediate.
    pub const UP: KernelId = KernelId(1);
    /// An expert's down projection of one tile of the hidden size.
    pub const DOWN: KernelId = KernelId(2);
    /// The combine of one tile of the hidden size over every expert.
    pub const COMBINE: KernelId = KernelId(3);
}

/// A MoE layer's shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MoeShape {
    /// Tokens.
    pub tokens: usize,
    /// Hidden size.
    pub hidden: usize,
    /// Each expert's intermediate size.
    pub inter: usize,
    /// Experts.
    pub experts: usize,
    /// Experts no token chose (the last ones): their tiles are skipped.
    pub unchosen: usize,
    /// Tiles per expert projection (and combines).
    pub tiles: usize,
    /// Bytes per element.
    pub elem: u32,
}

impl MoeShape {
    /// 16 experts of 1 536 over a hidden size of 4 096, 64 tokens, 4 tiles per
    /// projection, a quarter of the experts unchosen: 133 tasks, 32 of them skipped.
    pub const FULL: MoeShape = MoeShape {
        tokens: 64,
        hidden: 4096,
        inter: 1536,
        experts: 16,
        unchosen: 4,
        tiles: 4,
        elem: 2,
    };

    /// The same structure, small: 19 tasks, 4 skipped.
    pub const SMALL: MoeShape = MoeShape {
        tokens: 8,
        hidden: 64,
        inter: 32,
        experts: 4,
        unchosen: 1,
        tiles: 2,
        elem: 2,
    };

    /// Tasks submitted: the router, an up and a down per expert tile, a combine per tile.
    pub fn tasks(&self) -> u64 {
        (1 + 2 * self.experts * self.tiles + self.tiles) as u64
    }

    /// Tasks skipped: the unchosen experts' tiles.
    pub fn skipped(&self) -> u64 {
        (2 * self.unchosen * self.tiles) as u64
    }

    /// Bytes each kernel streams: router, up tile, down tile, combine tile.
    pub fn kernel_bytes(&self) -> [u64; 4] {
        let e = u64::from(self.elem);
        let (t, h, i, n) = (
            self.tokens as u64,
            self.hidden as u64,
            self.inter as u64,
            self.tiles as u64,
        );
        [
            t * h * e,
            // Gate and up weights of the tile, and the tokens.
            2 * h * (i / n) * e + t * h * e,
            i * (h / n) * e + t * i * e,
            self.experts as u64 * t * (h / n) * e,
        ]
    }
}

/// Submits the layer: the router, the experts' tiles under predicates, the combines. The
/// tokens and outputs are arena buffers from `take`; the counts are allocated in device
/// memory and stored before anything is submitted (the first `experts - unchosen` experts
/// share the tokens, the rest have none).
pub fn submit_moe(
    s: &mut Submitter,
    o: &mut SimOrchestrator<'_, '_>,
    shape: &MoeShape,
    take: &mut dyn FnMut(usize) -> Buffer,
) -> Result<(), BuildError> {
    let m = *shape;
    if m.experts == 0
        || m.unchosen > m.experts
        || m.tiles == 0
        || !m.hidden.is_multiple_of(m.tiles)
        || !m.inter.is_multiple_of(m.tiles)
    {
        return Err(BuildError::Shape(format!("{m:?}")));
    }
    let e = m.elem as usize;
    let memory = o.platform().memory();
    let counts_at = memory
        .alloc(4 * m.experts, 64)
        .map_err(|err| BuildError::Memory(err.to_string()))?;
    let chosen = m.experts - m.unchosen;
    for x in 0..m.experts {
        let n = if x < chosen {
            (m.tokens / chosen.max(1)) as u32
        } else {
            0
        };
        memory
            .store32(counts_at + 4 * x as u64, n)
            .map_err(|err| BuildError::Memory(err.to_string()))?;
    }
    let counts = Buffer::new(counts_at, 4 * m.experts as u64);
    let tokens = take(m.tokens * m.hidden * e);
    s.submit(
        o,
        &TaskSpec::new(kernel::ROUTE, WorkerClass::Aiv).tensors(&[
            TensorArg::input(tokens, whole(tokens, m.elem)),
            TensorArg::output(counts, whole(counts, 4)),
        ]),
    )?;
    let hidden_tile = m.hidden / m.tiles;
    let inter_tile = m.inter / m.tiles;
    let out = take(m.experts * m.tokens * m.hidden * e);
    for x in 0..m.experts {
        let chosen = Predicate::new(counts_at + 4 * x as u64, 4, CmpOp::Gt, 0);
        let count = TensorArg::input(counts, span(counts, 4, x, 1));
        let mid = take(m.tokens * m.inter * e);
        for t in 0..m.tiles {
            let per = m.tokens * inter_tile;
            let tiles = [
                TensorArg::input(tokens, whole(tokens, m.elem)),
                count,
                TensorArg::output(mid, span(mid, m.elem, t * per, per)),
            ];
            let up = TaskSpec::new(kernel::UP, WorkerClass::Aic)
                .tensors(&tiles)
                .when(chosen);
            s.submit(o, &up)?;
        }
        for t in 0..m.tiles {
            // `out` holds tile t of every expert together, so a combine reads one span.
            let per = m.tokens * hidden_tile;
            let tiles = [
                TensorArg::input(mid, whole(mid, m.elem)),
                count,
                TensorArg::output(out, span(out, m.elem, (t * m.experts + x) * per, per)),
            ];
            let down = TaskSpec::new(kernel::DOWN, WorkerClass::Aic)
                .tensors(&tiles)
                .when(chosen);
            s.submit(o, &down)?;
        }
    }
    let y = take(m.tokens * m.hidden * e);
    let per_tile = m.tokens * hidden_tile;
    for t in 0..m.tiles {
        let parts = [
            TensorArg::input(
                out,
                span(out, m.elem, t * m.experts * per_tile, m.experts * per_tile),
            ),
            TensorArg::output(y, span(y, m.elem, t * per_tile, per_tile)),
        ];
        s.submit(
            o,
            &TaskSpec::new(kernel::COMBINE, WorkerClass::Aiv).tensors(&parts),
        )?;
    }
    Ok(())
}

/// The kernels' names.
pub const KERNELS: [(KernelId, &str); 4] = [
    (kernel::ROUTE, "route"),
    (kernel::UP, "expert_up"),
    (kernel::DOWN, "expert_down"),
    (kernel::COMBINE, "combine"),
];
