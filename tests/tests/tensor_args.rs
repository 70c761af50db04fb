//! Kernels receive their tasks' tensor arguments, and a tile that does not lie in the buffer
//! it names is refused at submit.

use std::sync::{Arc, Mutex};

use pto_runtime_core::{
    Buffer, Config, KernelId, KernelTensor, SubmitError, TaskId, TaskSpec, TensorArg, Tile,
    TileError, WorkerClass,
};
use pto_sim::{KernelTable, SimError, SimOptions, error_code, run};

const K: KernelId = KernelId(0);

fn cfg() -> Config {
    Config {
        max_tensors: 4,
        ..Config::tiny()
    }
}

/// A task and the tensors its kernel saw.
type Seen = (TaskId, Vec<KernelTensor>);

#[test]
fn a_kernel_gets_each_tensor_argument_in_order() {
    let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let log = seen.clone();
    let kernels = KernelTable::new().with(K, "record", move |ctx| {
        log.lock().unwrap().push((ctx.task, ctx.tensors.to_vec()));
        Ok(())
    });
    let out = run(cfg(), kernels, SimOptions::default(), |o| {
        let mem = o.platform().memory();
        let a = mem.alloc_buffer(64 * 64 * 4, 64).unwrap();
        let b = mem.alloc_buffer(256, 64).unwrap();
        let mut sent = Vec::new();
        for i in 0..6u64 {
            let tensors = [
                TensorArg::input(a, Tile::block(a.at(i * 64 * 4), 4, 8, 16, 64)),
                TensorArg::whole_output(b, 8),
                TensorArg::inout(a, Tile::contiguous(a.at(4096 + i * 4), 4, 1)),
            ];
            let n = (i % 4) as usize; // 0 to 3 tensors
            let id = o
                .submit(&TaskSpec::new(K, WorkerClass::Aiv).tensors(&tensors[..n]))
                .unwrap();
            sent.push((id, tensors[..n].iter().map(KernelTensor::from).collect()));
        }
        sent
    })
    .unwrap();
    let mut got = seen.lock().unwrap().clone();
    got.sort_by_key(|(id, _)| id.raw());
    assert_eq!(
        got, out.value,
        "each kernel saw its task's tensors, in order"
    );
}

#[test]
fn a_tensor_view_reads_and_writes_a_strided_block_in_row_major_order() {
    // A 4 x 6 matrix of u32 (value = 10 * row + col); the kernel doubles the 2 x 3 block
    // from (1, 2) into a dense 2 x 3 output, and reads every other element of row 0.
    let kernels = KernelTable::new().with(K, "double", |ctx| {
        let (block, out, evens) = (ctx.tensor(0)?, ctx.tensor(1)?, ctx.tensor(2)?);
        assert_eq!((block.shape(), block.strides()), (&[2, 3][..], &[6, 1][..]));
        assert_eq!(block.addr(&[1, 2])?, block.base() + (6 + 2) * 4);
        assert!(block.addr(&[2, 0]).is_err(), "outside the shape");
        let v = block.read_u32s()?;
        assert_eq!(v, [12, 13, 14, 22, 23, 24]);
        assert_eq!(evens.read_u32s()?, [0, 2, 4]);
        out.write_u32s(&v.iter().map(|x| 2 * x).collect::<Vec<_>>())?;
        Ok(())
    });
    let out = run(cfg(), kernels, SimOptions::default(), |o| {
        let mem = o.platform().memory();
        let m = mem.alloc_buffer(4 * 6 * 4, 64).unwrap();
        let dst = mem.alloc_buffer(6 * 4, 64).unwrap();
        let values: Vec<u32> = (0..4)
            .flat_map(|r| (0..6).map(move |c| 10 * r + c))
            .collect();
        mem.write_u32s(m.base, &values).unwrap();
        let mut evens = Tile::contiguous(m.base, 4, 3);
        evens.strides[0] = 2;
        o.submit(&TaskSpec::new(K, WorkerClass::Aiv).tensors(&[
            TensorArg::input(m, Tile::block(m.at((6 + 2) * 4), 4, 2, 3, 6)),
            TensorArg::whole_output(dst, 4),
            TensorArg::input(m, evens),
        ]))
        .unwrap();
        dst
    })
    .unwrap();
    let mut got = [0u32; 6];
    out.memory.read_u32s(out.value.base, &mut got).unwrap();
    assert_eq!(got, [24, 26, 28, 44, 46, 48]);
}

#[test]
fn a_tile_outside_the_buffer_it_names_is_refused_and_leaves_nothing() {
    let kernels = KernelTable::new().with(K, "noop", |_| Ok(()));
    let out = run(cfg(), kernels, SimOptions::default(), |o| {
        let mem = o.platform().memory();
        let (a, b) = (
            mem.alloc_buffer(1024, 64).unwrap(),
            mem.alloc_buffer(1024, 64).unwrap(),
        );
        // A tile of `b` named as `a`'s: it would never meet `b`'s writers.
        let wrong = TensorArg::output(a, Tile::contiguous(b.base, 4, 16));
        let e = o
            .submit(
                &TaskSpec::new(K, WorkerClass::Aiv)
                    .tensors(&[TensorArg::input(b, Tile::contiguous(b.base, 4, 4)), wrong]),
            )
            .unwrap_err();
        // Running off the end of its own buffer, by one element.
        let long = TensorArg::input(a, Tile::contiguous(a.at(1020), 4, 2));
        let e2 = o
            .submit(&TaskSpec::new(K, WorkerClass::Aiv).tensors(&[long]))
            .unwrap_err();
        (e, e2, o.submitted())
    })
    .unwrap();
    let (e, e2, submitted) = out.value;
    let SubmitError::BadTensor {
        index: 1,
        error: TileError::OutsideBuffer { first, base, .. },
    } = e
    else {
        panic!("not an OutsideBuffer error for argument 1: {e:?}");
    };
    assert_ne!(first, base);
    assert!(e.to_string().contains("not inside its buffer"), "{e}");
    assert!(
        matches!(
            e2,
            SubmitError::BadTensor {
                index: 0,
                error: TileError::OutsideBuffer { .. }
            }
        ),
        "{e2:?}"
    );
    assert_eq!(submitted, 0, "no refused task was kept");
}

#[test]
fn misusing_a_tensor_fails_the_task_with_a_message_naming_it() {
    type Check = fn(&pto_sim::KernelCtx<'_>) -> Result<(), pto_sim::KernelError>;
    let cases: [(Check, &str); 4] = [
        (
            |ctx| ctx.tensor(3).map(|_| ()),
            "tensor argument 3 but the task has 1",
        ),
        (|ctx| ctx.tensor(0)?.write_f32s(&[0.0; 8]), "only reads it"),
        (
            |ctx| ctx.tensor(0)?.read_u64s().map(|_| ()),
            "8-byte values",
        ),
        (
            |ctx| {
                ctx.tensor(0)?
                    .read_f32s()
                    .map(|_| ())
                    .and(Err("fine".into()))
            },
            "fine",
        ),
    ];
    for (check, says) in cases {
        let kernels = KernelTable::new().with(K, "misuse", check);
        let r = run(cfg(), kernels, SimOptions::default(), |o| {
            let b = o.platform().memory().alloc_buffer(32, 64).unwrap();
            let t = TensorArg::input(b, Tile::contiguous(b.base, 4, 8));
            o.submit(&TaskSpec::new(K, WorkerClass::Aiv).tensors(&[t]))
                .unwrap();
        });
        let Err(e @ SimError::Run { .. }) = r else {
            panic!("the run did not fail ({says})");
        };
        let text = e.to_string();
        assert!(text.contains(says), "{text}");
        if says != "fine" {
            assert!(
                text.contains(&format!("code {}", error_code::BAD_TENSOR)),
                "{text}"
            );
        }
    }
}

#[test]
fn heap_buffers_are_buffers_too() {
    let kernels = KernelTable::new().with(K, "fill", |ctx| {
        let t = ctx.tensor(0)?;
        t.write_u64s(&vec![7; t.len()])?;
        Ok(())
    });
    let opts = SimOptions {
        heap_bytes: 1 << 16,
        ..SimOptions::default()
    };
    let out = run(cfg(), kernels, opts, |o| {
        let b: Buffer = o.alloc_buffer(0, 64, 64).unwrap();
        o.submit(&TaskSpec::new(K, WorkerClass::Aiv).tensors(&[TensorArg::whole_output(b, 8)]))
            .unwrap();
        b
    })
    .unwrap();
    assert_eq!(out.value.len, 64);
    let mut got = [0u64; 8];
    out.memory.read_u64s(out.value.base, &mut got).unwrap();
    assert_eq!(got, [7; 8]);
}
